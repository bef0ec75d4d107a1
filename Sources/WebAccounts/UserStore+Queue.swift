import Foundation
import GRDB

// The sitting's queue (issue 37): the dogs a trainer set up once for a morning, each started
// in turn. lineup-web keeps it here, in its own state file beside the accounts, so every
// browser logged in to the station sees one queue and a restart of lineup-web keeps it;
// lineupd knows nothing of it. Each entry is the page's JSON, kept as given: this file only
// orders and keeps them (StationWeb's SittingQueue reads and checks them).

/// One entry of the queue as the file keeps it.
public struct QueuedEntry: Sendable, Hashable {
    /// A random id, so a browser removes or starts the entry it saw, not whichever is now at
    /// its place.
    public var id: String
    /// The page's JSON for it.
    public var entry: String
    /// Who queued it, and when (seconds since 1970).
    public var by: String
    public var added: Double

    public init(id: String, entry: String, by: String, added: Double) {
        self.id = id
        self.entry = entry
        self.by = by
        self.added = added
    }
}

extension UserStore {
    /// The most entries a queue holds: a sitting is a morning's dogs, not a season's.
    public static let queueLimit = 50

    static func createQueueTable(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS sitting_queue (
                    id TEXT PRIMARY KEY NOT NULL,
                    position INTEGER NOT NULL,
                    entry TEXT NOT NULL,
                    added_by TEXT NOT NULL,
                    added REAL NOT NULL
                )
                """)
    }

    /// The queue, first first.
    public func queued() throws(UserStoreError) -> [QueuedEntry] {
        do {
            return try queue.read { db in
                try Row.fetchAll(
                    db, sql: "SELECT id, entry, added_by, added FROM sitting_queue ORDER BY position"
                ).map { QueuedEntry(id: $0["id"], entry: $0["entry"], by: $0["added_by"], added: $0["added"]) }
            }
        } catch {
            throw .unreadable(path: path, reason: String(describing: error))
        }
    }

    /// Adds an entry at the end; its place (from 1), or nil when the queue is full.
    public func enqueue(_ entry: QueuedEntry) throws(UserStoreError) -> Int? {
        do {
            return try queue.write { db -> Int? in
                let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM sitting_queue") ?? 0
                guard count < Self.queueLimit else { return nil }
                let last = try Int.fetchOne(db, sql: "SELECT max(position) FROM sitting_queue") ?? 0
                try db.execute(
                    sql: "INSERT INTO sitting_queue (id, position, entry, added_by, added) VALUES (?, ?, ?, ?, ?)",
                    arguments: [entry.id, last + 1, entry.entry, entry.by, entry.added])
                return count + 1
            }
        } catch {
            throw .unreadable(path: path, reason: String(describing: error))
        }
    }

    /// Removes the entry; false when it is not (or no longer) in the queue.
    public func dequeue(id: String) throws(UserStoreError) -> Bool {
        do {
            return try queue.write { db in
                try db.execute(sql: "DELETE FROM sitting_queue WHERE id = ?", arguments: [id])
                return db.changesCount > 0
            }
        } catch {
            throw .unreadable(path: path, reason: String(describing: error))
        }
    }
}
