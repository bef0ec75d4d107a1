import Figures
import GRDB
import GRDBSQLite
import ReadingRows
import TrainingEngine

extension LogReader {
    /// Every trial (after corrections) matching `filter`, as the figures count it, oldest
    /// session first. Straight from SQLite's column accessors: GRDB rows per trial would cost
    /// more than the query itself. Sample ids are only read when `samples` is set, each
    /// session's settings (once a session) when `settings` is.
    static func scanTrials(
        _ db: Database, _ filter: LogFilter, samples: Bool, settings: Bool = false,
        _ body: (ScoredTrial, TrialContext) throws -> Void
    ) throws {
        let statement = try db.makeStatement(
            sql: """
                SELECT t.outcome, t.latency_ns, t.layout, t.seen, s.dog_id, d.name, s.id, s.wall_ns, t.id, s.settings
                FROM trial_current t JOIN session s ON s.id = t.session_id JOIN dog d ON d.id = s.dog_id
                WHERE (?1 IS NULL OR s.dog_id = ?1) AND (?2 IS NULL OR s.id = ?2)
                    AND (?3 IS NULL OR t.wall_ns >= ?3) AND (?4 IS NULL OR t.wall_ns < ?4)
                    AND \(filter.sessionCondition(from: 5))
                """)
        try statement.setArguments(
            StatementArguments(
                [
                    filter.dogId.databaseValue, filter.sessionId.databaseValue, filter.since.databaseValue,
                    filter.until.databaseValue,
                ] + filter.sessionArguments))
        let sqlite = statement.sqliteStatement
        func text(_ column: Int32) -> String {
            guard let bytes = sqlite3_column_text(sqlite, column) else { return "" }
            return String(
                decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(sqlite, column))),
                as: UTF8.self)
        }
        var decoder = TrialRowDecoder(samples: samples)
        var settingsOf: [String: String] = [:]
        func bytes(_ column: Int32) -> UnsafeRawBufferPointer? {
            guard sqlite3_column_type(sqlite, column) != SQLITE_NULL else { return nil }
            // The text pointer first: SQLite counts bytes of the value as last converted.
            let base = sqlite3_column_text(sqlite, column)
            return UnsafeRawBufferPointer(start: base, count: Int(sqlite3_column_bytes(sqlite, column)))
        }
        while true {
            let rc = sqlite3_step(sqlite)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else {
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: rc), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
            }
            let latency: Int64? = sqlite3_column_type(sqlite, 1) == SQLITE_NULL ? nil : sqlite3_column_int64(sqlite, 1)
            guard let trial = decoder.trial(outcome: text(0), latencyNs: latency, layout: bytes(2), seen: bytes(3))
            else { throw LogLimits.badLayout(trial: text(8)) }
            let session = text(6)
            var sessionSettings: String? = nil
            if settings {
                if settingsOf[session] == nil { settingsOf[session] = text(9) }
                sessionSettings = settingsOf[session]
            }
            try body(
                trial,
                TrialContext(
                    dogId: text(4), dog: text(5), sessionId: session, sessionWallNs: sqlite3_column_int64(sqlite, 7),
                    sessionSettings: sessionSettings))
        }
    }
}

/// A prevalence as the person typed it, checked: one message naming the flag, never a crash.
public func checkPrevalence(_ value: Double, flag: String = "--prevalence") throws -> Double {
    guard value.isFinite, value > 0, value < 1 else {
        throw SessionLogError.invalidInput(
            "\(flag) \(value): a prevalence is a share strictly between 0 and 1 (0.01 is 1 in 100)")
    }
    return value
}
