import GRDB
import GRDBSQLite
import ReadingRows

/// The station's log as a `RowSource` for the readings (Sources/Readings): SQLite's column
/// accessors straight, no GRDB row per result (one per trial would cost more than the query).
/// A running double-blind session is withheld as in every read (`LiveDoubleBlind`: its views
/// in `temp`).
extension LogReader: RowSource {
    public func readRows<T>(_ body: (inout LogRowScanner) throws -> T) throws -> T {
        try read { (db: Database) in
            var scanner = LogRowScanner(db: db)
            return try body(&scanner)
        }
    }
}

/// The queries of one read transaction of a log.
public struct LogRowScanner: RowScanner {
    let db: Database

    public var dialect: SQLDialect { .sqlite }

    public var place: String { "the log" }

    public mutating func scan(_ query: ReadingSQL, _ binds: [SQLValue], _ body: (LogRow) throws -> Void) throws {
        let statement = try db.makeStatement(sql: query.text(in: .sqlite))
        try statement.setArguments(
            StatementArguments(
                binds.map { value -> DatabaseValue in
                    switch value {
                    case .text(let text): text.databaseValue
                    case .integer(let integer): integer.databaseValue
                    }
                }))
        let sqlite = statement.sqliteStatement
        while true {
            let rc = sqlite3_step(sqlite)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else {
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: rc), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
            }
            try body(LogRow(statement: sqlite))
        }
    }

    public func badRow(_ row: BadRow) throws {
        throw SessionLogError.badRow(table: row.table, row: row.id, problem: row.problem)
    }

    public func hasTable(_ name: String) throws -> Bool { try db.tableExists(name) }

    public func refuseWithheld(session id: String) throws { try LiveDoubleBlind.refuse(db, session: id) }
}

/// One row of a log's query, read from SQLite's columns in place.
public struct LogRow: ReadingRow {
    let statement: OpaquePointer

    public func text(_ column: Int) -> String? {
        let c = Int32(column)
        guard sqlite3_column_type(statement, c) != SQLITE_NULL, let bytes = sqlite3_column_text(statement, c) else {
            return nil
        }
        return String(
            decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, c))), as: UTF8.self)
    }

    public func integer(_ column: Int) -> Int64? {
        let c = Int32(column)
        return sqlite3_column_type(statement, c) == SQLITE_NULL ? nil : sqlite3_column_int64(statement, c)
    }

    public func double(_ column: Int) -> Double? {
        let c = Int32(column)
        return sqlite3_column_type(statement, c) == SQLITE_NULL ? nil : sqlite3_column_double(statement, c)
    }

    public func withBytes<T>(_ column: Int, _ body: (UnsafeRawBufferPointer?) throws -> T) rethrows -> T {
        let c = Int32(column)
        guard sqlite3_column_type(statement, c) != SQLITE_NULL else { return try body(nil) }
        // The text pointer first: SQLite counts bytes of the value as last converted.
        let base = sqlite3_column_text(statement, c)
        return try body(UnsafeRawBufferPointer(start: base, count: Int(sqlite3_column_bytes(statement, c))))
    }
}
