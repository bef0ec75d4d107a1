import Figures
import Foundation
import GRDB
import Readings
import Testing
import TrainingEngine

@testable import SessionLog

/// A correction is a new row that replaces the trial in every listing and figure; the
/// original stays; a bad correction is one clear refusal with nothing written.
@Suite struct CorrectionTests {
    /// One session: trial 1 a hit at station 1 (control at 2 sniffed); trial 2 no target,
    /// nothing indicated, both stations sniffed.
    func log(settings: String = "{}") throws -> (SessionLog, [TrialRecord]) {
        let log = try SessionLog(path: temporaryLogPath())
        let dog = DogRecord(name: "Aino")
        let session = SessionRecord(dogId: dog.id, phase: "1", mode: .automated, settings: settings)
        try log.append([dog, session])
        func slot(_ n: Int, _ kind: SampleKind, indicated: Bool) -> StationSlot {
            StationSlot(
                station: n, sampleId: nil, kind: kind,
                seen: StationSeen(
                    visited: true, indicated: indicated, firstIndicationNs: indicated ? 2_000_000_000 : nil,
                    sniffs: indicated ? 0 : 1, dwellNs: 500_000_000))
        }
        let trials = [
            TrialRecord(
                sessionId: session.id, number: 1,
                layout: [slot(1, .target, indicated: true), slot(2, .control, indicated: false)],
                outcome: .hit, indicatedStation: 1, latencyNs: 2_000_000_000, started: .now(), ended: .now()),
            TrialRecord(
                sessionId: session.id, number: 2,
                layout: [slot(1, .control, indicated: false), slot(2, .blank, indicated: false)],
                outcome: .correctRejection, started: .now(), ended: .now()),
        ]
        try log.append(trials)
        return (log, trials)
    }

    func count(_ log: SessionLog) throws -> Int {
        try log.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM trial")! }
    }

    @Test func aCorrectionReplacesTheTrialEverywhereAndKeepsTheOriginal() throws {
        let (log, trials) = try log()
        let before = try #require(try log.reader.stats(by: .dog).first)
        #expect(before.sensitivity.successes == 1 && before.specificity.successes == 2)
        // Video review: the dog never held at station 1.
        let fixed = try log.correctTrial(
            String(trials[0].id.logText.prefix(8)), outcome: .miss, indicatedStation: nil, reason: "video: no hold")
        #expect(fixed.corrects == trials[0].id && fixed.number == 1 && fixed.reason == "video: no hold")
        #expect(fixed.layout.map { $0.seen?.indicated } == [false, false])
        #expect(fixed.layout.map { $0.seen?.visited } == [true, true])
        #expect(fixed.latencyNs == nil)
        let listed = try log.reader.trials()
        #expect(listed.map(\.outcome) == [.miss, .correctRejection])
        #expect(listed[0].corrects == trials[0].id.logText)
        let after = try #require(try log.reader.stats(by: .dog).first)
        #expect(after.sensitivity.successes == 0 && after.sensitivity.trials == 1)
        #expect(after.results.misses == 1 && after.results.hits == 0)
        // The original is still there.
        #expect(try count(log) == 3)
        // A correction of the correction: the newest one is corrected.
        #expect(throws: SessionLogError.self) {
            try log.correctTrial(trials[0].id.logText, outcome: .hit, indicatedStation: 1, reason: "again")
        }
        let back = try log.correctTrial(
            fixed.id.logText, outcome: .hit, indicatedStation: 1, reason: "second look: held")
        #expect(back.corrects == fixed.id)
        // Back at station 1, from the correction's view: the sensor's time went with the first
        // correction, so the trial has no latency (nothing is made up).
        #expect(back.layout[0].seen?.indicated == true && back.layout[0].seen?.firstIndicationNs == nil)
        #expect(back.latencyNs == nil)
        #expect(try log.reader.trials().map(\.outcome) == [.hit, .correctRejection])
    }

    /// The stations by the names the session logged (issue 32), the board's defaults for a
    /// session logged before names, the number beside.
    @Test(arguments: [("{}", "A", "B"), (#"{"stations":"North,East"}"#, "North", "East")])
    func refusalsNameWhatIsWrongAndWriteNothing(settings: String, first: String, second: String) throws {
        let (log, trials) = try log(settings: settings)
        let hit = trials[0].id.logText
        let empty = trials[1].id.logText
        let cases: [(String, TrialOutcome, Int?, String, String)] = [
            ("nope", .miss, nil, "r", "no trial \"nope\""),
            (hit, .miss, nil, "  ", "needs a reason"),
            (hit, .hit, 2, "r", "give --indicated \(first) (1), the target's station"),
            (hit, .falseAlert, nil, "r", "false-alert: give --indicated"),
            (hit, .falseAlert, 1, "r", "station \(first) (1) held the target"),
            (hit, .miss, 2, "r", "leave out --indicated"),
            (hit, .correctRejection, nil, "r", "had a target at station \(first) (1)"),
            (hit, .hit, 7, "r", "--indicated 7: the trial had stations \(first) (1), \(second) (2)"),
            (hit, .hit, 1, "r", "already hit at station \(first) (1): nothing to correct"),
            (empty, .miss, nil, "r", "had no target"),
            (empty, .hit, 1, "r", "hit: the trial had no target"),
            (empty, .aborted, 1, "r", "not scored"),
        ]
        for (trial, outcome, indicated, reason, message) in cases {
            do {
                _ = try log.correctTrial(trial, outcome: outcome, indicatedStation: indicated, reason: reason)
                Issue.record("accepted \(outcome) \(indicated.map(String.init) ?? "-") for \(trial)")
            } catch {
                #expect("\(error)".contains(message), "\(error) should say \(message)")
            }
        }
        #expect(try count(log) == 2)
        // A false alert at the blank, and taking a trial out of the figures, are fine.
        _ = try log.correctTrial(empty, outcome: .falseAlert, indicatedStation: 2, reason: "video: held at the blank")
        let stats = try #require(try log.reader.stats(by: .dog).first)
        #expect(stats.figures.presentations.blankIndicated == 1)
    }
}
