import Figures
import Foundation
import ReadingRows
import Readings
import Testing
import TrainingEngine

@testable import SessionLog

/// The handler's guess on hand-built logs whose answers are known (issue 21's "a handler whose
/// guesses are at chance passes the test, one at 80 % does not"), and the exact binomial tail.
struct HandlerGuessTests {
    /// A five-station double-blind session for one handler, written trial by trial.
    struct Builder {
        let log: SessionLog
        let session: SessionRecord
        let target = SampleRecord(label: "T-\(UUID().uuidString.prefix(6))", kind: .target)
        let control = SampleRecord(label: "C-\(UUID().uuidString.prefix(6))", kind: .control)
        var number = 0
        var time: Int64 = 5_000_000_000_000

        init(log: SessionLog, handler: String) throws {
            self.log = log
            let dog = DogRecord(name: "Dog of \(handler)")
            let code = HandlerRecord(code: handler)
            session = SessionRecord(dogId: dog.id, handlerId: code.id, mode: .doubleBlind)
            try log.append([dog, code, target, control, session])
        }

        func at(_ ns: Int64) -> LogTime { LogTime(monoNs: ns, wallNs: 1_740_819_600_000_000_000 + ns) }

        /// One trial: the target's station (nil: no target), the stations the dog indicated (2 s
        /// into the search), the handler's guess and whether it came after the indication.
        @discardableResult
        mutating func trial(
            target targetStation: Int?, indicated: [Int], guess: Int?, late: Bool = false, aborted: Bool = false
        ) throws -> UUID {
            number += 1
            time += 60_000_000_000
            let started = time
            let slots = (1...5).map { s in
                let isTarget = s == targetStation
                let hit = indicated.contains(s)
                return StationSlot(
                    station: s, sampleId: isTarget ? target.id : control.id, kind: isTarget ? .target : .control,
                    seen: StationSeen(
                        visited: true, indicated: hit, firstIndicationNs: hit ? 2_000_000_000 : nil,
                        sniffs: hit ? 0 : 1, dwellNs: 500_000_000))
            }
            let falseAlert = indicated.contains { $0 != targetStation }
            let outcome: TrialOutcome =
                aborted
                ? .aborted
                : falseAlert
                    ? .falseAlert : targetStation == nil ? .correctRejection : indicated.isEmpty ? .miss : .hit
            let trial = TrialRecord(
                sessionId: session.id, number: number, layout: slots, outcome: outcome,
                indicatedStation: indicated.first, latencyNs: indicated.isEmpty ? nil : 2_000_000_000,
                started: at(started), ended: at(started + 10_000_000_000))
            if let guess {
                // Before the start cue, or 3 s into the search (after the indication at 2 s).
                try log.recordGuess(
                    HandlerGuess(
                        sessionId: session.id, trialId: trial.id, trialNumber: number, station: guess,
                        time: at(late ? started + 3_000_000_000 : started - 1_000_000_000)))
            }
            try log.append([trial])
            return trial.id
        }
    }

    /// Per handler: 50 trials with the target (station 1 to 5 in turn), the dog finding it every
    /// time, and 10 without, in each of which the dog alerts once.
    /// - `H-chance` guesses the target in 10 of the 50 (1/5, chance) and in the empty trials
    ///   alerts at the guess twice in 10.
    /// - `H-cue` guesses it in 40 of 50 (80 %), and the dog alerts at the guess in all 10 empty
    ///   trials (Lit 2011's cueing); one guess came after the indication, one trial was aborted.
    func twoHandlers() throws -> SessionLog {
        let log = try SessionLog(path: temporaryLogPath())
        var chance = try Builder(log: log, handler: "H-chance")
        var cue = try Builder(log: log, handler: "H-cue")
        for i in 0..<50 {
            let target = i % 5 + 1
            let wrong = target % 5 + 1
            try chance.trial(target: target, indicated: [target], guess: i % 5 == 0 ? target : wrong)
            try cue.trial(target: target, indicated: [target], guess: i % 5 == 0 ? wrong : target)
        }
        for i in 0..<10 {
            let guess = i % 5 + 1
            let elsewhere = guess % 5 + 1
            try chance.trial(target: nil, indicated: [i < 2 ? guess : elsewhere], guess: guess)
            try cue.trial(target: nil, indicated: [guess], guess: guess)
        }
        try cue.trial(target: 3, indicated: [3], guess: 3, late: true)
        try cue.trial(target: 2, indicated: [], guess: 2, aborted: true)
        try cue.trial(target: 4, indicated: [4], guess: nil)
        return log
    }

    @Test("a handler guessing at chance passes the exact test; one at 80 % does not")
    func chanceAndCueingHandlers() throws {
        let log = try twoHandlers()
        let rows = try log.reader.guessStats(by: .handler)
        #expect(rows.map(\.group) == ["H-chance", "H-cue"])
        let chance = try #require(rows.first)
        #expect(chance.guesses == 60)
        #expect(chance.targetAbsentGuesses == 10)
        #expect(chance.hits == 10)
        #expect(chance.hitRate.value == 10.0 / 60)
        // (1 - 10/60) / 5: target-absent guesses cannot hit.
        #expect(abs(try #require(chance.chance) - 1.0 / 6) < 1e-12)
        // P(X ≥ 10), X ~ Binomial(50, 1/5), summed exactly with rationals: 0.5562595867082494.
        #expect(abs(try #require(chance.pValue) - 0.5562595867082494) < 1e-12)
        #expect(chance.aboveChance == false)
        #expect(chance.falseAlerts == 10)
        #expect(chance.falseAlertsAtGuess == 2)
        #expect(chance.falseAlertShareAtGuess == 0.2)
        #expect(abs(try #require(chance.falseAlertShareExpected) - 0.2) < 1e-12)
        // P(X ≥ 2), X ~ Binomial(10, 1/5) = 0.6241903616.
        #expect(abs(try #require(chance.falseAlertPValue) - 0.6241903616) < 1e-12)
        #expect(chance.lateGuesses == 0)

        let cue = try #require(rows.last)
        #expect(cue.guesses == 60)
        #expect(cue.hits == 40)
        #expect(cue.lateGuesses == 1)
        // P(X ≥ 40), X ~ Binomial(50, 1/5) = 1.2908372028982707e-19.
        #expect(abs(try #require(cue.pValue) / 1.2908372028982707e-19 - 1) < 1e-9)
        #expect(cue.aboveChance == true)
        #expect(cue.falseAlerts == 10)
        #expect(cue.falseAlertShareAtGuess == 1)
        // (1/5)^10 = 1.024e-7.
        #expect(abs(try #require(cue.falseAlertPValue) / 1.024e-7 - 1) < 1e-9)

        // By session, and narrowed to one handler's sessions by the same filter `stats` uses.
        #expect(try log.reader.guessStats(by: .session).map(\.guesses) == [60, 60])
        #expect(try log.reader.guessStats(by: .handler, LogFilter(handler: "H-cue")).map(\.group) == ["H-cue"])
    }

    @Test("one guess per trial: a second is refused, the first stands; the table is append-only")
    func oneGuessPerTrial() throws {
        let log = try SessionLog(path: temporaryLogPath())
        var builder = try Builder(log: log, handler: "H1")
        let trial = try builder.trial(target: 2, indicated: [2], guess: 2)
        let again = HandlerGuess(sessionId: builder.session.id, trialId: trial, trialNumber: 1, station: 4)
        #expect(
            throws: SessionLogError.invalidInput(
                "a guess is already recorded for trial 1: one guess per trial, the first stands")
        ) {
            try log.recordGuess(again)
        }
        #expect(try log.reader.guessRecorded(forTrial: trial))
        #expect(try log.reader.guessStats(by: .handler).first?.hits == 1)
        #expect(throws: (any Error).self) {
            try log.pool.write { db in try db.execute(sql: "UPDATE handler_guess SET station = 3") }
        }
        #expect(throws: (any Error).self) {
            try log.pool.write { db in try db.execute(sql: "DELETE FROM handler_guess") }
        }
        // The unique index stands behind the check.
        #expect(throws: (any Error).self) { try log.append([again]) }
    }

    @Test("a guess follows its trial's correction: counted once, and not at all once corrected to aborted")
    func corrections() throws {
        let log = try SessionLog(path: temporaryLogPath())
        var builder = try Builder(log: log, handler: "H2")
        let first = try builder.trial(target: 2, indicated: [2], guess: 2)
        let second = try builder.trial(target: 4, indicated: [4], guess: 1)
        let correction = try log.correctTrial(
            first.uuidString.lowercased(), outcome: .miss, indicatedStation: nil, reason: "video: no hold")
        var row = try #require(try log.reader.guessStats(by: .handler).first)
        #expect(row.guesses == 2)
        #expect(row.hits == 1)
        // The correction corrected in turn: the guess follows down the chain to the trial as it stands.
        _ = try log.correctTrial(
            correction.id.uuidString.lowercased(), outcome: .hit, indicatedStation: 2, reason: "second look: held")
        row = try #require(try log.reader.guessStats(by: .handler).first)
        #expect(row.guesses == 2)
        #expect(row.hits == 1)
        _ = try log.correctTrial(
            second.uuidString.lowercased(), outcome: .aborted, indicatedStation: nil, reason: "lid open")
        row = try #require(try log.reader.guessStats(by: .handler).first)
        #expect(row.guesses == 1)
        #expect(row.hits == 1)
    }

    @Test("a station's guesses come along when its log is merged into the lab's, once")
    func merged() throws {
        let station = try twoHandlers()
        let lab = try SessionLog(path: temporaryLogPath())
        _ = try lab.merge(from: station.path)
        _ = try lab.merge(from: station.path)
        #expect(try lab.reader.guessStats(by: .handler) == station.reader.guessStats(by: .handler))
        #expect(try lab.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM handler_guess") } == 122)
    }
}
