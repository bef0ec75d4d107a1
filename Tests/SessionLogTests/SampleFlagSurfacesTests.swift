import Figures
import Foundation
import Readings
import Report
import SessionLog
import Testing
import TrainingEngine

/// The sample flag (docs/figures.md, "A flagged sample"): one false alert on a control is not
/// evidence, and every surface that flags says what the one rule says (issue 32: `C-5 … 14.3 %
/// false alert (1/7) 2.6–51.3, others 0.0 % ⚑ flagged`).
@Suite struct SampleFlagSurfacesTests {
    /// A log of `trials` trials on three stations: T-1 (the target, always hit), C-5, and one of
    /// C-1 to C-4 in turn; every station visited. C-5 is falsely alerted in the trials of
    /// `c5Alerts`, C-1 in those of `c1Alerts`.
    func log(trials: Int, c5Alerts: Set<Int>, c1Alerts: Set<Int> = []) throws -> LogReader {
        var research = try ResearchLog()
        let target = SampleRecord(label: "T-1", kind: .target, time: research.tick())
        let c5 = SampleRecord(label: "C-5", kind: .control, time: research.tick())
        let others = (1...4).map { SampleRecord(label: "C-\($0)", kind: .control, time: research.tick()) }
        let session = SessionRecord(
            dogId: research.dog.id, phase: "p", mode: .automated, bootId: nil, time: research.tick())
        var records: [any AppendableRecord] = [target, c5] + others + [session]
        for n in 0..<trials {
            let other = others[n % 4]
            let alertC5 = c5Alerts.contains(n)
            let alertOther = n % 4 == 0 && c1Alerts.contains(n)
            func seen(_ indicated: Bool) -> StationSeen {
                StationSeen(visited: true, indicated: indicated, firstIndicationNs: indicated ? 1_000_000_000 : nil)
            }
            let layout = [
                StationSlot(station: 1, sampleId: target.id, kind: .target, seen: seen(!alertC5 && !alertOther)),
                StationSlot(station: 2, sampleId: c5.id, kind: .control, seen: seen(alertC5)),
                StationSlot(station: 3, sampleId: other.id, kind: .control, seen: seen(alertOther)),
            ]
            let outcome: TrialOutcome = alertC5 || alertOther ? .falseAlert : .hit
            records.append(
                TrialRecord(
                    sessionId: session.id, number: n + 1, layout: layout, outcome: outcome,
                    indicatedStation: alertC5 ? 2 : (alertOther ? 3 : 1), latencyNs: 1_000_000_000,
                    started: research.tick(), ended: research.tick()))
        }
        try research.log.append(records)
        return research.log.reader
    }

    /// Each surface's flag on each sample: the report's table and `stats --by sample` (the page
    /// shows both: the report it serves, and `/api/stats`' rows, which are `stats`' rows).
    func flags(_ reader: LogReader) throws -> (report: [String: Bool], stats: [String: Bool]) {
        let report = try reader.report()
        let stats = try reader.stats(by: .sample)
        return (
            Dictionary(uniqueKeysWithValues: report.samples.map { ($0.label, $0.flagged) }),
            Dictionary(uniqueKeysWithValues: stats.map { ($0.group, $0.sampleFlag?.flagged ?? false) })
        )
    }

    @Test func oneFalseAlertOnAControlIsNotAFlag() throws {
        // 7 trials: C-5 falsely alerted once (1/7), every other control passed (0/7).
        let reader = try log(trials: 7, c5Alerts: [3])
        let (report, stats) = try flags(reader)
        #expect(report["C-5"] == false, "the report flagged C-5 on one false alert")
        #expect(stats["C-5"] == false)
        #expect(report == stats)
    }

    @Test func eightFalseAlertsInFortyAgainstCleanOthersAreAFlagOnEverySurface() throws {
        // C-5 falsely alerted in 8 of 40 trials, the other controls never (0 of 40).
        let reader = try log(trials: 40, c5Alerts: [1, 5, 9, 14, 20, 26, 31, 38])
        let (report, stats) = try flags(reader)
        #expect(report["C-5"] == true && stats["C-5"] == true)
        #expect(report.filter(\.value).count == 1, "\(report)")
        #expect(report == stats, "one rule on every surface")
        let row = try #require(try reader.stats(by: .sample).first { $0.group == "C-5" }?.sampleFlag)
        #expect(row.indicated.successes == 8 && row.indicated.trials == 40)
        #expect(row.others.successes == 0 && row.others.trials == 40)
        // Fisher, one-sided, by hand: 80 presentations, 8 false alerts, all C-5's:
        // P(X ≥ 8) = C(40,8) C(40,0) / C(80,8) = 76,904,685 / 28,987,537,150 = 0.0027.
        #expect(abs(try #require(row.p) - 76_904_685.0 / 28_987_537_150.0) < 1e-12)
    }

    /// docs/figures.md's worked example, by hand: (3, 7; 2, 88), p = 499,752 / 75,287,520.
    @Test func theWorkedExample() throws {
        let verdict = SampleFlag.judge(
            Proportion(successes: 3, trials: 10), others: Proportion(successes: 2, trials: 90))
        #expect(abs(try #require(verdict.p) - 499_752.0 / 75_287_520.0) < 1e-12)
        #expect(verdict.flagged)
        // The case: 1 of 7 against 0 of 43: p = 7/50, too few presentations and alerts.
        let one = SampleFlag.judge(Proportion(successes: 1, trials: 7), others: Proportion(successes: 0, trials: 43))
        #expect(abs(try #require(one.p) - 7.0 / 50.0) < 1e-12)
        #expect(!one.flagged)
        // Each condition on its own: 2 alerts of 10 against 0 of 500 (p tiny, but 2 < 3); 3 of 9
        // (9 < 10); 30 of 100 against 20 of 100 (p = 0.071) and 400 of 1000 against 300 of
        // 1000 (p tiny, odds 0.67 not twice 0.43); 10 of 20 against 10 of 200 is flagged.
        #expect(
            !SampleFlag.judge(Proportion(successes: 2, trials: 10), others: Proportion(successes: 0, trials: 500))
                .flagged)
        #expect(
            !SampleFlag.judge(Proportion(successes: 3, trials: 9), others: Proportion(successes: 0, trials: 500))
                .flagged)
        #expect(
            !SampleFlag.judge(Proportion(successes: 30, trials: 100), others: Proportion(successes: 20, trials: 100))
                .flagged)
        #expect(
            !SampleFlag.judge(
                Proportion(successes: 400, trials: 1000), others: Proportion(successes: 300, trials: 1000)
            ).flagged)
        #expect(
            SampleFlag.judge(Proportion(successes: 10, trials: 20), others: Proportion(successes: 10, trials: 200))
                .flagged)
    }
}
