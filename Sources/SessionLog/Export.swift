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
            var writer = RowWriter(columns: query.columns, format: format, sink: sink, timeZone: timeZone)
            var names = StationNameRows(columns: query.columns)
            if names.any { return try writer.write(statement.sqliteStatement) { names.row($0) } }
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
