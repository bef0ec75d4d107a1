import GRDB

/// How thoroughly a reader checks the log it opens before reading it, so a damaged file (a
/// flipped bit on a card, a torn copy) is named as damaged instead of read as if whole.
///
/// What each costs on a 1,000,000-event log is measured by `lineup-bench check` and recorded in
/// docs/session-log.md ("A damaged log"); the project's choice of which command pays which
/// follows from those figures.
public enum LogCheck: String, Sendable, CaseIterable, Codable {
    /// No check: the daemon's own reads, which would pay for it on the station's time.
    case none
    /// SQLite's `quick_check` of every table but the raw events and their indexes: most of a
    /// big log's pages are events, so this is cheap, and it covers everything a command that
    /// never reads raw events shows.
    case allButEvents
    /// `quick_check` of the whole file: every page's structure, not that indexes agree with rows.
    case quick
    /// `integrity_check`: also every index against its table, so changed values are caught too.
    case integrity

    /// The pragma's name, as the refusal quotes it.
    var pragma: String {
        switch self {
        case .none: "none"
        case .allButEvents, .quick: "quick_check"
        case .integrity: "integrity_check"
        }
    }
}

extension LogReader {
    /// Runs `check` in one read transaction; throws ``SessionLogError/damaged(path:problem:)``
    /// with SQLite's first complaint when the file is damaged.
    public func check(_ check: LogCheck) throws {
        let found: [String] = try read { db in
            // At most 10 complaints: the first is what the refusal says; a damaged file can
            // otherwise list thousands, and each costs more of the walk.
            switch check {
            case .none:
                return []
            case .quick, .integrity:
                return try complaints(db, "PRAGMA \(check.pragma)(10)")
            case .allButEvents:
                let tables = try String.fetchAll(
                    db,
                    sql: """
                        SELECT name FROM sqlite_master
                        WHERE type = 'table' AND name <> 'event' AND name NOT LIKE 'sqlite_%' ORDER BY name
                        """)
                var all: [String] = []
                for table in tables {
                    let rows = try complaints(db, "PRAGMA quick_check(\(table.quotedDatabaseIdentifier))")
                    if rows != ["ok"] { all += rows }
                }
                return all
            }
        }
        // SQLite heads its list with the database's name, in the same row as the problems
        // that follow it, one a line; "ok" alone means no damage.
        let problems = found.flatMap { $0.split(separator: "\n").map(String.init) }
            .filter { $0 != "ok" && !$0.hasPrefix("*** ") }
        guard let first = problems.first else { return }
        throw SessionLogError.damaged(
            path: path, problem: "\(check.pragma): \(first)\(problems.count > 1 ? ", and more" : "")")
    }
}

/// The rows a check pragma gives. SQLite may list the problems it found and then fail on the
/// damage itself (SQLITE_CORRUPT): the rows before the failure name the page, so they are kept.
private func complaints(_ db: Database, _ sql: String) throws -> [String] {
    var rows: [String] = []
    do {
        let cursor = try String.fetchCursor(db, sql: sql)
        while let row = try cursor.next() { rows.append(row) }
    } catch let error as DatabaseError where error.resultCode == .SQLITE_CORRUPT {
        rows.append(error.message ?? "database disk image is malformed")
    }
    return rows
}
