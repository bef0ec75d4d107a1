import Foundation
import Readings
import Report
import Testing
import Thresholds
import TrainingEngine

@testable import Figures
@testable import SessionLog

/// The reversal estimate from a log (issue 38): a staircase run by Thresholds' `Staircase`,
/// each trial logged with its `trial_procedure` row as the station writes it; `stats
/// --threshold` (reader, text and JSON) gives the staircase's own `reversalEstimate(last: 6)`,
/// the report rings its reversals, and a log stopped short of 6 reversals says so in words.
@Suite struct ThresholdReversalLogTests {
    struct Logged {
        var log: SessionLog
        var path: String
        var session: SessionRecord
        var staircase: Staircase
    }

    /// A 2-down-1-up staircase over T-1/1e8 … T-1/1e1 (rung 0 the weakest) answered by a dog
    /// that finds the target at 1:10,000 and stronger, one miss in five at 1:100,000 and none
    /// weaker; stopped after `reversals`.
    static func logged(reversals: Int) throws -> Logged {
        let path = temporaryLogPath()
        let log = try SessionLog(path: path)
        try log.append([SampleRecord(label: "T-1", kind: .target)])
        let made = try log.addDilutions(
            of: "T-1", (1...8).map { DilutionRung(label: "T-1/1e\($0)", factor: pow(10, Double($0))) },
            made: DilutionMaking())
        let rungs = Array(made.reversed())  // weakest first
        let ladder = try Thresholds.DilutionLadder(concentrations: (1...8).reversed().map { pow(10, -Double($0)) })
        var staircase = try Staircase(
            rules: StaircaseRules(down: 2, startRung: 7, stopAfterReversals: reversals, stopAfterTrials: 200),
            ladder: ladder)
        let dog = DogRecord(name: "Aino")
        let session = SessionRecord(dogId: dog.id, mode: .automated)
        var records: [any AppendableRecord] = [dog, session]
        var number = 0
        while !staircase.hasStopped {
            number += 1
            let rung = staircase.rung
            let found = rung >= 4 || (rung == 3 && number % 5 != 0)
            let before = staircase.reversals.count
            try staircase.record(.target(rung: rung, found: found))
            let state = ProcedureTrialState(
                procedure: "staircase", rung: rung, catchTrial: false, direction: staircase.lastMove,
                reversal: staircase.reversals.count > before, reversals: staircase.reversals.count,
                nextRung: staircase.hasStopped ? nil : staircase.rung, stopped: staircase.hasStopped)
            let trial = TrialRecord(
                sessionId: session.id, number: number,
                layout: [
                    StationSlot(station: 1 + number % 3, sampleId: rungs[rung].id, kind: .target),
                    StationSlot(station: 1 + (number + 1) % 3, sampleId: nil, kind: .blank),
                    StationSlot(station: 1 + (number + 2) % 3, sampleId: nil, kind: .blank),
                ].sorted { $0.station < $1.station }, outcome: found ? .hit : .miss,
                indicatedStation: found ? 1 + number % 3 : nil, started: .now(),
                ended: .now())
            records += [
                trial,
                TrialProcedureRecord(
                    sessionId: session.id, trialId: trial.id, trialNumber: number, state: state,
                    sampleId: rungs[rung].id),
            ]
        }
        try log.append(records)
        return Logged(log: log, path: path, session: session, staircase: staircase)
    }

    @Test func statsGivesTheStaircasesOwnEstimate() throws {
        let l = try Self.logged(reversals: 8)
        let expected = try l.staircase.reversalEstimate(last: 6)
        for grouping in ThresholdGrouping.allCases {
            let row = try #require(try l.log.reader.thresholdStats(by: grouping).first)
            let r = try #require(row.reversalEstimate, "\(grouping): \(row.reversalNotComputed ?? "")")
            #expect(abs(r.estimate / expected - 1) < 1e-9, "\(grouping)")
            #expect(r.last == 6 && r.staircases == 1)
        }
        let text = try runLineupctl(["stats", "--threshold", "--db", l.path])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(
            text.stdout.contains(
                "reversal estimate \(String(format: "%.3g", expected)) (geometric mean of its staircase's last 6 "
                    + "reversals)"), "\(text.stdout)")
        let json = try runLineupctl(["stats", "--threshold", "--json", "--db", l.path])
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        let figures = try #require(rows.first?["reversal_estimate"] as? [String: Any], "\(json.stdout)")
        #expect(abs((figures["estimate"] as? Double ?? 0) / expected - 1) < 1e-9)
        #expect((figures["concentrations"] as? [Double])?.count == 6)
    }

    @Test func fewerThanSixReversalsSaysWhyInEveryForm() throws {
        let l = try Self.logged(reversals: 4)
        let row = try #require(try l.log.reader.thresholdStats(by: .session).first)
        #expect(row.reversalEstimate == nil)
        let why = "not computed: the staircase reversed 4 times; the estimate takes the last 6 (the project's k)"
        #expect(row.reversalNotComputed == why)
        let text = try runLineupctl(["stats", "--threshold", "--db", l.path])
        #expect(text.stdout.contains("reversal estimate: \(why)"), "\(text.stdout)")
        let json = try runLineupctl(["stats", "--threshold", "--json", "--db", l.path])
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(rows.first?["reversal_estimate"] == nil && rows.first?["reversal_not_computed"] as? String == why)
        let html = ReportHTML.render(try l.log.reader.report(), scope: "all")
        #expect(html.contains(why.replacingOccurrences(of: "'", with: "&#39;")), "\(html)")
    }

    @Test func theReportRingsEachReversalOfTheTrack() throws {
        let l = try Self.logged(reversals: 8)
        let html = ReportHTML.render(try l.log.reader.report(), scope: "all")
        let trials = html.components(separatedBy: "<g class=\"trial\"").dropFirst()
        let turned = l.staircase.reversals.map { $0.trial + 1 }
        #expect(trials.count == l.staircase.trials.count)
        let ringed = trials.enumerated().filter {
            $0.element.prefix(while: { $0 != ">" }).contains("data-reversal=\"1\"")
        }
        .map { $0.offset + 1 }
        #expect(ringed == turned && ringed.count == 8)
        #expect(trials.filter { $0.contains("<circle class=\"reversal\"") }.count == 8)
        let shown = try #require(
            html.components(separatedBy: "data-estimate=\"").dropFirst().first?.prefix { $0 != "\"" })
        #expect(abs((Double(String(shown)) ?? 0) / (try l.staircase.reversalEstimate(last: 6)) - 1) < 1e-9)
    }
}
