/// The two SQL dialects the readings run on, and the few places they differ, written here once:
/// parameters (`?1` against `$1::text`), the store's schema (`trial` against `store.trial`), the
/// order of text by its bytes (SQLite's default BINARY against PostgreSQL's `COLLATE "C"`) and a
/// column's type (SQLite's by value, PostgreSQL's by its schema).
public enum SQLDialect: Sendable, Hashable {
    /// A station's log, or a merged one.
    case sqlite
    /// The lab store: its tables in the schema `store`.
    case postgres
}

/// A parameter's type: PostgreSQL must be told it where a NULL leaves it open.
public enum SQLType: Sendable, Hashable {
    case text, integer
}

/// A query written once for both dialects: plain SQL where they agree, and interpolations where
/// they do not, `\(table: "trial")`, `\(text: 1)`, `\(integer: 3)`, `\(byBytes: "name")`.
/// `text(in:)` writes it for one dialect.
public struct ReadingSQL: Sendable, Hashable, ExpressibleByStringInterpolation {
    enum Part: Sendable, Hashable {
        case sql(String)
        case table(String)
        case everyRow(String)
        case parameter(Int, SQLType)
        case byBytes(String)
        case notInteger(String)
    }

    var parts: [Part]

    public init(stringLiteral value: String) { parts = [.sql(value)] }
    public init(stringInterpolation: Interpolation) { parts = stringInterpolation.parts }

    public struct Interpolation: StringInterpolationProtocol {
        var parts: [Part] = []
        public init(literalCapacity: Int, interpolationCount: Int) {}
        public mutating func appendLiteral(_ literal: String) { parts.append(.sql(literal)) }
        /// One of the record's tables or views.
        public mutating func appendInterpolation(table name: String) { parts.append(.table(name)) }
        /// One of the record's tables with the rows the source withholds (a log's running
        /// double-blind session): only to name what is withheld, never to read it.
        public mutating func appendInterpolation(everyRow name: String) { parts.append(.everyRow(name)) }
        /// Parameter `n` (from 1), a text.
        public mutating func appendInterpolation(text n: Int) { parts.append(.parameter(n, .text)) }
        /// Parameter `n` (from 1), an integer.
        public mutating func appendInterpolation(integer n: Int) { parts.append(.parameter(n, .integer)) }
        /// A text expression compared and sorted by its UTF-8 bytes, as SQLite does by default.
        public mutating func appendInterpolation(byBytes expression: String) { parts.append(.byBytes(expression)) }
        /// Whether a column's value is not an integer: a log's column may hold any type (SQLite's
        /// typing is by value), the store's is typed by its schema.
        public mutating func appendInterpolation(notInteger column: String) { parts.append(.notInteger(column)) }
        /// A piece of SQL written the same way (a shared condition).
        public mutating func appendInterpolation(_ sql: ReadingSQL) { parts += sql.parts }
        /// SQL the reading chose among fixed words (a column or NULL): never a value typed by a person.
        public mutating func appendInterpolation(sql words: String) { parts.append(.sql(words)) }
    }

    /// The query as `dialect` spells it.
    public func text(in dialect: SQLDialect) -> String {
        var text = ""
        for part in parts {
            switch (part, dialect) {
            case (.sql(let sql), _): text += sql
            case (.table(let name), .sqlite): text += name
            case (.table(let name), .postgres): text += "store." + name
            case (.everyRow(let name), .sqlite): text += "main." + name
            case (.everyRow(let name), .postgres): text += "store." + name
            case (.parameter(let n, _), .sqlite): text += "?\(n)"
            case (.parameter(let n, .text), .postgres): text += "$\(n)::text"
            case (.parameter(let n, .integer), .postgres): text += "$\(n)::bigint"
            case (.byBytes(let expression), .sqlite): text += expression
            case (.byBytes(let expression), .postgres): text += expression + " COLLATE \"C\""
            case (.notInteger(let column), .sqlite): text += "typeof(\(column)) <> 'integer'"
            case (.notInteger, .postgres): text += "FALSE"
            }
        }
        return text
    }
}
