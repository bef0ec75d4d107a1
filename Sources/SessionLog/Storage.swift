import Foundation
import GRDB

/// Where a log's bytes are: rows counted and, where SQLite was built with the `dbstat`
/// virtual table, the bytes of each table and index (for `lineup-bench storage`).
public struct LogStorage: Sendable, Hashable, Codable {
    public struct Object: Sendable, Hashable, Codable {
        public var name: String
        /// Pages of the object, times the page size: what it takes in the file.
        public var bytes: Int
        /// Bytes of its rows (or index entries) inside those pages.
        public var payload: Int
    }

    public var pageSize: Int
    public var pages: Int
    public var events: Int
    public var trials: Int
    public var sessions: Int
    /// Largest first; nil when this SQLite has no `dbstat`.
    public var objects: [Object]?
}

extension LogReader {
    /// Counts and, if `dbstat` is there, per-table and per-index bytes.
    public func storage() throws -> LogStorage {
        try read { db in
            let pageSize = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            let events = try Int.fetchOne(db, sql: "SELECT count(*) FROM event") ?? 0
            let trials = try Int.fetchOne(db, sql: "SELECT count(*) FROM trial") ?? 0
            let sessions = try Int.fetchOne(db, sql: "SELECT count(*) FROM session") ?? 0
            // dbstat is a compile-time option of SQLite: absent, the breakdown is left out.
            let objects = try? Row.fetchAll(
                db,
                sql: """
                    SELECT name, sum(pgsize) AS bytes, sum(payload) AS payload
                    FROM dbstat GROUP BY name ORDER BY bytes DESC, name
                    """
            ).map { LogStorage.Object(name: $0["name"], bytes: $0["bytes"], payload: $0["payload"]) }
            return LogStorage(
                pageSize: pageSize, pages: pages, events: events, trials: trials, sessions: sessions, objects: objects)
        }
    }
}
