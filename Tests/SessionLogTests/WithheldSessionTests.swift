import Foundation
import ReadingRows
import Testing
import TrainingEngine

@testable import SessionLog

/// Issue 32: the reader's one rule for a running double-blind session (`LiveDoubleBlind`) is
/// part of what it returns: the sessions it withholds, for the selection a reading covers, and
/// a reading of one of them refused as withheld (naming it), never an empty or a passing answer.
@Suite struct WithheldSessionTests {
    @Test func aRunningDoubleBlindSessionIsNamedNotPassedOver() throws {
        let path = temporaryLogPath()
        let log = try SessionLog(path: path)
        let rex = try log.addDog(name: "Rex", born: nil, notes: nil)
        let aino = try log.addDog(name: "Aino", born: nil, notes: nil)
        let sample = try log.addSample(SampleRecord(label: "T-7", kind: .target))
        let done = SessionRecord(dogId: rex.id, mode: .automated)
        let running = SessionRecord(
            dogId: rex.id, phase: "phase-3", step: "1", mode: .doubleBlind,
            settings: #"{"seed":"8675309","samples":"T-7,C-1"}"#)
        let now = LogTime.now()
        let trial = TrialRecord(
            sessionId: running.id, number: 1, seed: 8_675_309,
            layout: [StationSlot(station: 1, sampleId: sample.id, kind: .target)], outcome: .hit, indicatedStation: 1,
            started: now, ended: now)
        try log.append([done, SessionEnd(sessionId: done.id, how: .ended), running, trial])
        let id = running.id.uuidString.lowercased()

        // No lineupd on the log: nothing runs, everything shows (the rule's other half).
        let open = try SessionLog.openReader(path: path)
        #expect(try open.withheldSessions().isEmpty)
        #expect(try open.session(id: open.resolveSession(String(id.prefix(8)))).trials.count == 1)

        let lock = try LogLock(logPath: path)
        defer { withExtendedLifetime(lock) {} }
        let reader = try SessionLog.openReader(path: path)
        let withheld = try reader.withheldSessions()
        #expect(withheld.map(\.id) == [id])
        #expect(withheld.first?.dog == "Rex" && withheld.first?.step == "phase-3/1")
        #expect(withheld.first?.uses(sample: sample.id.uuidString.lowercased(), label: "T-7") == true)
        // Only where the selection would have covered it.
        #expect(try reader.withheldSessions(LogFilter(dogId: aino.id.uuidString.lowercased())).isEmpty)
        #expect(try reader.withheldSessions(LogFilter(mode: .automated)).isEmpty)
        #expect(try reader.withheldSessions(LogFilter(dogId: rex.id.uuidString.lowercased())).count == 1)
        // Listed nowhere, its row and trials alike.
        #expect(try reader.sessions().map(\.id) == [done.id.uuidString.lowercased()])
        #expect(try reader.trials().isEmpty)
        // Each reading of it says it is withheld, naming it and when it is readable.
        let expected = SessionLogError.withheld(try #require(withheld.first))
        #expect(throws: expected) { try reader.resolveSession(String(id.prefix(8))) }
        #expect(throws: expected) { try reader.session(id: id) }
        #expect(throws: expected) { try reader.verifyBlinding(session: id) }
        #expect(
            expected.description
                .hasPrefix("a double-blind session is running (session \(id.prefix(8)), Rex, phase-3/1, started "),
            "\(expected.description)")
        #expect(expected.description.hasSuffix("withheld until it ends"), "\(expected.description)")

        // Ended: shown, and nothing is withheld.
        try log.append([SessionEnd(sessionId: running.id, how: .ended)])
        let after = try SessionLog.openReader(path: path)
        #expect(try after.withheldSessions().isEmpty)
        #expect(try after.session(id: after.resolveSession(id)).trials.count == 1)
    }

    /// Issue 32: `progress` for a dog with no sessions says so in one line (exit 0: the dog is
    /// there); a dog the log does not know is an error, as elsewhere.
    @Test func progressSaysADogHasNoSessions() throws {
        let path = temporaryLogPath()
        let log = try SessionLog(path: path)
        _ = try log.addDog(name: "Fido", born: nil, notes: nil)
        let none = try runLineupctl(["progress", "--dog", "Fido", "--db", path])
        #expect(none.status == 0, "\(none.stderr)")
        #expect(none.stdout == "Fido has no sessions in the log: no progress to show\n", "\(none.stdout)")
        let unknown = try runLineupctl(["progress", "--dog", "Fidi", "--db", path])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no dog \"Fidi\" in the log"), "\(unknown.stderr)")
    }
}
