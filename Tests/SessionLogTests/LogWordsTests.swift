import Foundation
import GRDB
import Testing
import TrainingEngine

@testable import SessionLog

/// The reader hands out outcomes, modes and kinds as their types; a row holding a word this
/// lineup does not know (a newer lineup's log, a hand edit) is one clear error naming the
/// table and the row, never a crash and never a silent stand-in.
@Suite struct LogWordsTests {
    /// A log with one row edited past the schema's CHECK, as a newer lineup or a hand edit
    /// might leave it: `sql` is run with the checks off (the log is append-only, so the edited
    /// row is a copy of the first row of `table` with a new id).
    static func logWithForeignWord(table: String, column: String, word: String) throws -> (SessionLog, String) {
        let log = try ExportTests.filledLog()
        let id = "ffffffff-0000-4000-8000-000000000001"
        let queue = try DatabaseQueue(path: log.path)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
            try db.execute(sql: "CREATE TEMP TABLE edited AS SELECT * FROM \(table) LIMIT 1")
            var set = "id = ?, \(column) = ?"
            if table == "trial" { set += ", number = 999" }
            if table == "sample" { set += ", label = 'EDITED-1'" }
            try db.execute(sql: "UPDATE edited SET \(set)", arguments: [id, word])
            try db.execute(sql: "INSERT INTO \(table) SELECT * FROM edited")
        }
        try queue.close()
        return (log, id)
    }

    @Test func aTrialsOutcomeDecodesToItsType() throws {
        let log = try ExportTests.filledLog()
        let trials = try log.reader.trials()
        #expect(!trials.isEmpty)
        let raw = try log.reader.read { db in
            try String.fetchAll(db, sql: "SELECT outcome FROM trial_current ORDER BY wall_ns, number")
        }
        #expect(trials.map(\.outcome.rawValue) == raw)
    }

    @Test func anUnknownOutcomeIsOneErrorNamingTheTableAndRow() throws {
        let (log, id) = try Self.logWithForeignWord(table: "trial", column: "outcome", word: "won")
        #expect(
            throws: SessionLogError.unknownWord(
                table: "trial", row: id, column: "outcome", value: "won",
                known: TrialOutcome.allCases.map(\.rawValue))
        ) { try log.reader.trials() }
        let message =
            "\(SessionLogError.unknownWord(table: "trial", row: id, column: "outcome", value: "won", known: ["hit", "miss"]))"
        #expect(
            message.contains("trial row \(id)") && message.contains("\"won\"") && message.contains("known: hit, miss"))
    }

    @Test func anUnknownModeOrKindIsOneErrorToo() throws {
        let (sessions, sessionId) = try Self.logWithForeignWord(table: "session", column: "mode", word: "solo")
        #expect(
            throws: SessionLogError.unknownWord(
                table: "session", row: sessionId, column: "mode", value: "solo",
                known: TrainingMode.allCases.map(\.rawValue))
        ) { try sessions.reader.sessions() }
        let (samples, sampleId) = try Self.logWithForeignWord(table: "sample", column: "kind", word: "bottle")
        #expect(
            throws: SessionLogError.unknownWord(
                table: "sample", row: sampleId, column: "kind", value: "bottle",
                known: SampleKind.allCases.map(\.rawValue))
        ) { try samples.reader.samples() }
    }

    /// What the researcher sees: one line on stderr naming the row, a non-zero exit, no trace.
    @Test func lineupctlSaysWhichRowAndExitsNonZero() throws {
        let (log, id) = try Self.logWithForeignWord(table: "trial", column: "outcome", word: "won")
        let result = try runLineupctl(["trials", "--db", log.path])
        #expect(result.status != 0)
        #expect(result.stderr.contains("trial row \(id) has outcome \"won\""), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    }
}
