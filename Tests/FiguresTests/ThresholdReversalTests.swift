import Foundation
import Testing

@testable import Figures

/// The reversal estimate of `stats --threshold` and the report (docs/figures.md, "In
/// `stats`"), counted by `ThresholdCounter` from hand-built trials and procedure rows: the
/// geometric mean of each staircase's last 6 reversals, in trial order, on the group's scale;
/// fewer reversals, constant stimuli, no staircase and a source without the state each say why,
/// never a number.
@Suite struct ThresholdReversalTests {
    /// A stock S and its dilutions S/1e1 … S/1e8 (the fraction of the stock 10^-n).
    static let samples: [String: ThresholdSample] = {
        var s = ["S": ThresholdSample(label: "S")]
        for n in 1...8 { s["d\(n)"] = ThresholdSample(label: "S/1e\(n)", stockId: "S", factor: pow(10, Double(n))) }
        return s
    }()

    func trial(_ sample: String?, found: Bool) -> ScoredTrial {
        ScoredTrial(
            outcome: sample == nil ? .correctRejection : found ? .hit : .miss, latencyNs: nil,
            stations: [
                StationObservation(station: 1, kind: sample == nil ? .blank : .target, sample: sample, seen: nil),
                StationObservation(station: 2, kind: .blank, seen: nil),
                StationObservation(station: 3, kind: .blank, seen: nil),
            ])
    }

    func context(_ session: String, _ wallNs: Int64, number: Int? = nil) -> TrialContext {
        TrialContext(dogId: "dog-1", dog: "Aino", sessionId: session, sessionWallNs: wallNs, trialNumber: number)
    }

    /// One staircase session: each trial's dilution (nil: a catch trial) and whether the
    /// staircase turned at it; the procedure rows handed over in `order`.
    func add(
        _ counter: inout ThresholdCounter, session: String, wallNs: Int64, _ trials: [(String?, Bool)],
        procedure: String = "staircase", order: (Int, Int) -> Bool = { $0 > $1 }
    ) {
        let numbered = trials.enumerated().map { ($0.offset + 1, $0.element) }
        for (number, t) in numbered.sorted(by: { order($0.0, $1.0) }) {
            counter.addProcedure(
                sessionId: session,
                ThresholdProcedureTrial(trialNumber: number, procedure: procedure, sampleId: t.0, reversal: t.1))
        }
        for (number, t) in numbered {
            counter.add(
                trial(t.0, found: number % 3 != 0), context: context(session, wallNs, number: number), conditions: nil)
        }
    }

    /// Reversals at 1e-1 and 1e-6 (the first two, left out), then 1e-3, 1e-5, 1e-3, 1e-5, 1e-4
    /// and 1e-4: the mean log10 of the last 6 is -4, so the estimate is 1e-4 (over all 8 it
    /// would be 10^-3.875).
    static let eightReversals: [(String?, Bool)] = [
        ("d1", true), ("d2", false), ("d6", true), (nil, false), ("d3", true), ("d4", false), ("d5", true),
        ("d3", true), ("d2", false), ("d5", true), ("d4", true), ("d4", true), ("d5", false),
    ]

    @Test func theLastSixReversalsInTrialOrderOnTheGroupsScale() throws {
        var counter = ThresholdCounter(samples: Self.samples, grouping: .session)
        add(&counter, session: "s1", wallNs: 1, Self.eightReversals)
        let row = try #require(counter.rows().first)
        let r = try #require(row.reversalEstimate, "\(row.reversalNotComputed ?? "")")
        #expect(row.reversalNotComputed == nil)
        #expect(r.last == 6 && r.staircases == 1 && r.staircasesWithFewer == 0)
        #expect(r.concentrations.map { log10($0).rounded() } == [-3, -5, -3, -5, -4, -4])
        #expect(abs(r.log10Estimate - -4) < 1e-12 && abs(r.estimate / 1e-4 - 1) < 1e-12)
    }

    @Test func theScaleIsTheDilutionsOwnUnitWhenEveryOneHasIt() throws {
        var samples = Self.samples
        for n in 1...8 { samples["d\(n)"]!.concentration = 2 * pow(10, -Double(n)) }
        for n in 1...8 { samples["d\(n)"]!.unit = "ppt" }
        var counter = ThresholdCounter(samples: samples, grouping: .session)
        add(&counter, session: "s1", wallNs: 1, Self.eightReversals)
        let row = try #require(counter.rows().first)
        #expect(row.scale == "ppt")
        let r = try #require(row.reversalEstimate)
        #expect(abs(r.estimate / 2e-4 - 1) < 1e-12)
    }

    @Test func fewerReversalsThanSixIsNotComputedAndSaysWhy() throws {
        var counter = ThresholdCounter(samples: Self.samples, grouping: .session)
        add(&counter, session: "s1", wallNs: 1, Array(Self.eightReversals.prefix(9)))  // 5 reversals
        let row = try #require(counter.rows().first)
        #expect(row.reversalEstimate == nil)
        #expect(
            row.reversalNotComputed
                == "not computed: the staircase reversed 5 times; the estimate takes the last 6 (the project's k)")
        #expect(row.fit != nil, "the fit does not need reversals")
    }

    @Test func constantStimuliAndTrialsWithoutAStaircaseSayWhy() throws {
        var counter = ThresholdCounter(samples: Self.samples, grouping: .session)
        add(
            &counter, session: "s1", wallNs: 1, Self.eightReversals.map { ($0.0, false) }, procedure: "constant-stimuli"
        )
        for (n, sample) in ["d2", "d4", "d6", "d2"].enumerated() {
            counter.add(trial(sample, found: n % 2 == 0), context: context("s2", 2), conditions: nil)
        }
        let rows = counter.rows()
        #expect(rows.map(\.sessionId) == ["s1", "s2"])
        #expect(rows.allSatisfy { $0.reversalEstimate == nil })
        #expect(
            rows[0].reversalNotComputed == "not computed: constant stimuli has no reversals (the fit is its estimate)")
        #expect(
            rows[1].reversalNotComputed
                == "not computed: no staircase: its sessions logged no staircase state per trial (dilutions presented "
                + "outside a threshold step)")
    }

    @Test func aSourceWithoutTheStateWithholdsItInWords() throws {
        var counter = ThresholdCounter(samples: Self.samples, grouping: .session)
        add(&counter, session: "s1", wallNs: 1, Self.eightReversals)
        counter.withholdProcedures(ThresholdRow.procedureWithheldLabStore)
        let row = try #require(counter.rows().first)
        #expect(row.reversalEstimate == nil)
        #expect(row.reversalNotComputed == ThresholdRow.procedureWithheldLabStore)
        #expect(row.reversalNotComputed!.hasPrefix("not available: "))
    }

    /// Pooled by dog: each staircase with at least 6 reversals gives its last 6 (mean log10 -4
    /// and -5 here: the estimate 10^-4.5); one with 3 is left out and counted.
    @Test func aDogsStaircasesPoolTheirLastSixEach() throws {
        var counter = ThresholdCounter(samples: Self.samples, grouping: .dog)
        add(&counter, session: "s1", wallNs: 1, Self.eightReversals)
        let lower: [(String?, Bool)] = [
            ("d8", true), ("d5", true), ("d6", true), ("d4", true), ("d5", true), ("d5", true), ("d5", true),
        ]
        add(&counter, session: "s2", wallNs: 2, lower, order: { $0 < $1 })
        add(&counter, session: "s3", wallNs: 3, Array(Self.eightReversals.prefix(6)))  // 3 reversals
        let row = try #require(counter.rows().first)
        #expect(row.sessionId == nil)
        let r = try #require(row.reversalEstimate)
        #expect(r.staircases == 2 && r.staircasesWithFewer == 1 && r.concentrations.count == 12)
        #expect(abs(r.log10Estimate - -4.5) < 1e-12)
        // Every staircase short of 6: said, with the most any reached.
        var short = ThresholdCounter(samples: Self.samples, grouping: .dog)
        add(&short, session: "s3", wallNs: 3, Array(Self.eightReversals.prefix(6)))
        add(&short, session: "s4", wallNs: 4, Array(Self.eightReversals.prefix(9)))
        #expect(
            short.rows().first?.reversalNotComputed
                == "not computed: none of its 2 staircases reversed 6 times (at most 5); the estimate takes the last 6 "
                + "of each (the project's k)")
    }

    @Test func theReportsTrackMarksEachReversal() throws {
        var counter = ThresholdCounter(samples: Self.samples, grouping: .session, recordsTrack: true)
        add(&counter, session: "s1", wallNs: 1, Self.eightReversals)
        let track = try #require(counter.rows().first?.track)
        // The catch trial (4) is not on the track.
        let turned = Self.eightReversals.filter { $0.0 != nil }.map(\.1)
        #expect(track.map(\.reversal) == turned)
        #expect(track.count { $0.reversal } == 8)
    }
}
