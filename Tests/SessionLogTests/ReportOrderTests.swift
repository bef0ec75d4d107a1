import Figures
import Foundation
import Readings
import Testing
import TrainingEngine

@testable import SessionLog

/// The report reads a log's trials in the order they ran (start, session, number), whatever
/// order their rows sit in: a correction, written after its session, counts where its trial
/// stood. Read in the rows' order, the corrected trial came last and the criterion's rolling
/// window at the session's end held it instead of the session's last trial.
@Suite struct ReportOrderTests {
    static let program = """
        name = "order"
        title = "Order"
        description = "One step with a criterion over the last three trials."

        [[phases]]
        id = "p"
        title = "P"
        description = "The only phase."

        [[phases.steps]]
        id = "1"
        title = "Target among blanks"
        mode = "automated"
        lineup = { stations = 3, targets = 1, blanks = 2 }
        hold_s = 2.0
        inter_trial_s = 15
        criterion = [{ kind = "accuracy-window", accuracy = 0.8, window = 3 }]

        [[phases.steps.exercises]]
        id = "1"
        title = "Block of 6"
        instruction = "Load the target."
        duration_s = 60
        trials = 6
        """

    @Test func aCorrectionCountsWhereItsTrialStoodInTheRollingWindow() throws {
        let log = try SessionLog(path: temporaryLogPath())
        var wall: Int64 = 1_760_000_000_000_000_000
        func tick() -> LogTime {
            wall += 5_000_000_000
            return LogTime(monoNs: wall - 1_700_000_000_000_000_000, wallNs: wall)
        }
        let program = ProgramRecord(name: "order", content: Self.program, time: tick())
        let dog = DogRecord(name: "Aino", time: tick())
        let target = SampleRecord(label: "T-1", kind: .target, time: tick())
        let session = SessionRecord(
            dogId: dog.id, programId: program.id, phase: "p", step: "1", exercise: "1", mode: .automated, bootId: nil,
            time: tick())
        var records: [any AppendableRecord] = [program, dog, target, session]
        var second: UUID?
        for number in 1...6 {
            let seen = StationSeen(
                visited: true, indicated: true, firstIndicationNs: 3_000_000_000, sniffs: 1, dwellNs: 2_000_000_000)
            let blank = StationSeen(visited: true, indicated: false, firstIndicationNs: nil, sniffs: 1, dwellNs: 0)
            let trial = TrialRecord(
                sessionId: session.id, number: number,
                layout: [
                    StationSlot(station: 1, sampleId: target.id, kind: .target, seen: seen),
                    StationSlot(station: 2, sampleId: nil, kind: .blank, seen: blank),
                    StationSlot(station: 3, sampleId: nil, kind: .blank, seen: blank),
                ], outcome: .hit, indicatedStation: 1, latencyNs: 3_000_000_000, started: tick(), ended: tick())
            if number == 2 { second = trial.id }
            records.append(trial)
        }
        try log.append(records)
        _ = try log.correctTrial(
            second!.uuidString.lowercased(), outcome: .miss, indicatedStation: nil, reason: "video review: no hold")

        let report = try log.reader.report()
        #expect(report.trials == 6)
        let s = try #require(report.sessions.first)
        #expect(s.criterion != nil, "\(s.criterionNote ?? "")")
        #expect(s.figures.results.trials == 6)
        // Trials 4, 5 and 6 were the last three: all hits. (In the rows' order, 5, 6 and the
        // corrected 2: two of three.)
        #expect(s.rollingWindow == 3)
        #expect(s.rollingAccuracy == 1.0)
    }
}
