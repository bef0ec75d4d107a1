/// The one narrow interface every researcher reading (Sources/Readings) runs through: run this
/// query with these parameters in one consistent read, give me its rows of typed columns. The
/// station's SQLite log implements it (SessionLog, LogReader+Rows.swift) and so does the lab's
/// PostgreSQL store (LabStore, LabReader+Rows.swift); a reading never knows which.
public protocol RowSource: Sendable {
    associatedtype Scanner: RowScanner
    /// Runs `body` in one read: every query it scans sees the same state of the source.
    func readRows<T>(_ body: (inout Scanner) throws -> T) throws -> T
}

/// Queries inside one read of a `RowSource`.
public protocol RowScanner {
    associatedtype Row: ReadingRow
    /// The source's SQL, for `ReadingSQL.text(in:)`.
    var dialect: SQLDialect { get }
    /// The source in a person's words, as a refusal names it: `the log`, `the lab store HOST`.
    var place: String { get }
    /// Runs `query` with `binds` (bound to its parameters 1, 2, …, never written into the SQL),
    /// handing each row to `body` as it comes, in the query's order.
    mutating func scan(_ query: ReadingSQL, _ binds: [SQLValue], _ body: (Row) throws -> Void) throws
    /// A row no station writes (a trial whose layout is not stations): a station's log refuses
    /// the reading, naming the row and its problem; the lab store, which cannot remove rows a
    /// store older than v9 took, leaves the row out and names it once (`row`, `reason`).
    func badRow(_ row: BadRow) throws
    /// Whether the source has the table: a station's log older than a table has none of its
    /// rows; the lab store has every table of the migrations it was checked for when opened.
    func hasTable(_ name: String) throws -> Bool
    /// Refuses a reading of session `id` when the source withholds it (a log's running
    /// double-blind session: `LiveDoubleBlind`), naming it and when it is readable.
    func refuseWithheld(session id: String) throws
}

/// One row of a scan, read by column (from 0). The text and bytes of a column are the same
/// UTF-8 on both stores; an integer is a 64-bit one. Valid only inside `scan`'s body.
public protocol ReadingRow {
    func text(_ column: Int) throws -> String?
    func integer(_ column: Int) throws -> Int64?
    /// A real number (a dilution's factor, a room's temperature): SQLite's REAL, PostgreSQL's
    /// double precision.
    func double(_ column: Int) throws -> Double?
    /// The column's bytes without a copy, nil for SQL NULL (an empty text is not nil).
    func withBytes<T>(_ column: Int, _ body: (UnsafeRawBufferPointer?) throws -> T) throws -> T
}

/// A query parameter's value: a text or an integer, either possibly NULL.
public enum SQLValue: Sendable, Hashable {
    case text(String?)
    case integer(Int64?)
}

/// A row no station writes, as a reading found it: its table and id, what is wrong with it in
/// full (a log's refusal) and in short (the line naming a row the lab store leaves out).
public struct BadRow: Sendable, Hashable {
    public var table: String
    public var id: String
    public var problem: String
    public var reason: String

    public init(table: String, id: String, problem: String, reason: String) {
        self.table = table
        self.id = id
        self.problem = problem
        self.reason = reason
    }

    /// The row in words: `trial 0a1b…`.
    public var row: String { "\(table) \(id)" }
}
