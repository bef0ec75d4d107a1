import Foundation
import GRDB
import ReadingRows
import Testing
import TrainingEngine

@testable import SessionLog

/// Schema v13's `trial_procedure` (issue 38): each threshold trial's rung, dilution, catch
/// flag, step and reversals, written with the trial, read back with it (`trials`, `session
/// show`), refused when it contradicts itself, append-only, and kept by a merge.
@Suite struct TrialProcedureTests {
    struct Logged {
        var log: SessionLog
        var session: SessionRecord
    }

    /// A staircase's first three trials: rung 1 found, rung 1 found (a step down), a catch trial.
    func logged() throws -> Logged {
        let log = try SessionLog(path: temporaryLogPath())
        try log.append([SampleRecord(label: "T-1", kind: .target)])
        let rungs = try log.addDilutions(
            of: "T-1", try DilutionLadder.rungs(stock: "T-1", factor: 10, steps: 3), made: DilutionMaking())
        let ladder = Array(rungs.reversed())  // weakest first
        let dog = DogRecord(name: "Aino")
        let session = SessionRecord(dogId: dog.id, mode: .doubleBlind)
        var records: [any AppendableRecord] = [dog, session]
        let states = [
            ProcedureTrialState(procedure: "staircase", rung: 1, catchTrial: false, nextRung: 1),
            ProcedureTrialState(procedure: "staircase", rung: 1, catchTrial: false, direction: -1, nextRung: 0),
            ProcedureTrialState(procedure: "staircase", rung: nil, catchTrial: true, nextRung: 0),
        ]
        for (i, state) in states.enumerated() {
            let sample = state.rung.map { ladder[$0].id }
            let trial = TrialRecord(
                sessionId: session.id, number: i + 1,
                layout: [
                    StationSlot(station: 1, sampleId: sample, kind: state.catchTrial ? .blank : .target),
                    StationSlot(station: 2, sampleId: nil, kind: .blank),
                ], outcome: state.catchTrial ? .correctRejection : .hit, indicatedStation: state.catchTrial ? nil : 1,
                started: .now(), ended: .now())
            records += [
                trial,
                TrialProcedureRecord(
                    sessionId: session.id, trialId: trial.id, trialNumber: i + 1, state: state, sampleId: sample),
            ]
        }
        try log.append(records)
        return Logged(log: log, session: session)
    }

    @Test func eachTrialsStateIsReadBackWithIt() throws {
        let l = try logged()
        let trials = try l.log.reader.trials(LogFilter(sessionId: l.session.id.logText))
        #expect(trials.map { $0.procedure?.rung } == [1, 1, nil])
        #expect(trials.map { $0.procedure?.dilution } == ["T-1/1e2", "T-1/1e2", nil])
        #expect(trials.map { $0.procedure?.direction } == ["none", "down", "none"])
        #expect(trials.map { $0.procedure?.catchTrial } == [false, false, true])
        #expect(
            trials.map { $0.procedure?.words } == [
                "rung 1 (T-1/1e2), 0 reversals", "rung 1 (T-1/1e2), down, 0 reversals", "catch trial, 0 reversals",
            ])
        let shown = try l.log.reader.session(id: l.session.id.logText)
        #expect(shown.trials.map { $0.procedure?.nextRung } == [1, 0, 0])
    }

    @Test func aRowThatContradictsItselfIsRefused() throws {
        let l = try logged()
        let trial = TrialRecord(
            sessionId: l.session.id, number: 4, layout: [StationSlot(station: 1, sampleId: nil, kind: .blank)],
            outcome: .correctRejection, started: .now(), ended: .now())
        // A catch trial with a rung: the CHECK refuses it, and nothing of the batch is written.
        let bad = TrialProcedureRecord(
            sessionId: l.session.id, trialId: trial.id, trialNumber: 4,
            state: ProcedureTrialState(procedure: "staircase", rung: 2, catchTrial: true), sampleId: nil)
        #expect(throws: (any Error).self) { try l.log.append([trial, bad]) }
        #expect(try l.log.reader.trials(LogFilter(sessionId: l.session.id.logText)).count == 3)
        // The table is append-only.
        #expect(throws: (any Error).self) {
            try l.log.pool.write { db in try db.execute(sql: "UPDATE trial_procedure SET reversals = 9") }
        }
    }

    @Test func aMergeKeepsEachTrialsState() throws {
        let l = try logged()
        let lab = try SessionLog(path: temporaryLogPath())
        _ = try lab.merge(from: l.log.path)
        let trials = try lab.reader.trials(LogFilter(sessionId: l.session.id.logText))
        #expect(trials.map { $0.procedure?.dilution } == ["T-1/1e2", "T-1/1e2", nil])
    }
}
