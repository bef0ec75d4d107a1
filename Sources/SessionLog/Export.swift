import Foundation
import GRDB
import GRDBSQLite
import ReadingRows

/// What `export` writes.
public enum ExportTable: String, Sendable, CaseIterable {
    case sessions, trials, events, samples, milestones, dogs, guesses
}

public enum ExportFormat: String, Sendable, CaseIterable {
    /// RFC 4180: a header row, CRLF line ends, fields quoted only when they must be.
    case csv
    /// One JSON object per line, keys as the CSV header.
    case jsonl
}

extension LogReader {
    /// The query `export` runs, for benchmarks and tests.
    public func exportQuery(_ table: ExportTable, _ filter: LogFilter = LogFilter()) throws -> ExportQuery {
        // The highest station sizes the trials' columns: every station is checked first.
        let (stations, hasGuesses) = try read { db in
            try LogLimits.checkStations(db)
            return (
                try Int.fetchOne(db, sql: "SELECT max(station) FROM trial_station") ?? 0,
                try db.tableExists("handler_guess")
            )
        }
        var query = ExportQuery.make(table, filter, stations: stations)
        // A log older than the handler's guess: no guesses, the header alone (as `stats --guesses` gives []).
        if table == .guesses && !hasGuesses { query.prefix = ExportQuery.noGuesses }
        return query
    }

    /// Streams rows to `sink` from one read transaction (a consistent snapshot, while
    /// the daemon goes on writing), never holding more than one row and the buffer.
    /// Returns the number of rows written.
    @discardableResult
    public func export(
        _ table: ExportTable, format: ExportFormat, filter: LogFilter = LogFilter(), to sink: ByteSink,
        timeZone: TimeZone = .current
    ) throws -> Int {
        let query = try exportQuery(table, filter)
        let rows = try read { db in
            let statement = try db.makeStatement(sql: query.sql)
            try statement.setArguments(query.arguments)
            let names = try Self.stationNames(db, table, query.columns)
            var writer = RowWriter(
                columns: query.columns, format: format, sink: sink, timeZone: timeZone,
                names: names.any ? names : nil)
            guard table == .guesses else { return try writer.write(statement.sqliteStatement) }
            // A guess's row is computed from its trial's by the rules its figures are counted by.
            var guesses = GuessExportRows()
            return try writer.write(statement.sqliteStatement) { try guesses.row($0) }
        }
        try sink.flush()
        return rows
    }
}

extension LogReader {
    /// The station names of the export's rows (`StationNameRows`): a session's settings read once
    /// per session, a trial's stations once per trial (an event's, the trials' come with the row).
    static func stationNames(_ db: Database, _ table: ExportTable, _ columns: [ExportColumn]) throws
        -> StationNameRows
    {
        let settings = try db.makeStatement(sql: "SELECT settings FROM session WHERE id = ?")
        let ofTrial = try db.makeStatement(sql: "SELECT station FROM trial_station WHERE trial_id = ?")
        // An event outside a trial (or of a trial with none): every station of its session's trials.
        let ofSession = try db.makeStatement(
            sql: """
                SELECT DISTINCT ts.station FROM trial_station ts JOIN trial t ON t.id = ts.trial_id
                WHERE t.session_id = ?
                """)
        // Stepped by hand: once per trial, a GRDB fetch was 4 % of a debug export of events.
        func bits(_ statement: Statement, _ id: String) throws -> UInt64 {
            let sqlite = statement.sqliteStatement
            sqlite3_reset(sqlite)
            let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
            guard id.withCString({ sqlite3_bind_text(sqlite, 1, $0, -1, transient) }) == SQLITE_OK else {
                throw DatabaseError(message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
            }
            var stations: UInt64 = 0
            while true {
                let rc = sqlite3_step(sqlite)
                if rc == SQLITE_DONE { return stations }
                guard rc == SQLITE_ROW else {
                    throw DatabaseError(
                        resultCode: ResultCode(rawValue: rc),
                        message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
                }
                // `exportQuery` checked every station is 1 to 16 (`LogLimits.checkStations`).
                stations |= 1 << UInt64(truncatingIfNeeded: sqlite3_column_int64(sqlite, 0))
            }
        }
        return StationNameRows(
            table, columns: columns, stations: table == .trials ? .kinds : .lookedUp,
            settings: { try String.fetchOne(settings, arguments: [$0]) },
            lookUp: { trial, session in
                let stations = try trial.map { try bits(ofTrial, $0) } ?? 0
                if stations != 0 { return stations }
                return try session.map { try bits(ofSession, $0) } ?? 0
            })
    }

    /// How many rows an export query yields.
    public func rowCount(of query: ExportQuery) throws -> Int {
        try read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM (\(query.sql))", arguments: query.arguments) ?? 0
        }
    }

    /// Trial rows in the log, corrections included.
    public func trialRowCount() throws -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM trial") ?? 0 }
    }
}
