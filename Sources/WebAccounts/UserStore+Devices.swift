import Foundation
import GRDB

// The browsers that have logged in as a name: a browser the page remembers for a name is
// exempt from that name's login limit (the limit every address shares), so an attacker
// hammering a name from elsewhere cannot keep its owner out of the browser they use. Only a
// digest of each device cookie is kept, as for sessions.

extension UserStore {
    /// A browser keeps its place for a name until this many wrong passwords in a row from it.
    public static let deviceWrongPasswords = 3
    /// The browsers remembered for one name; logging in from one more forgets the least recent.
    public static let devicesPerName = 20

    static func createDevicesTable(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS devices (
                    key TEXT NOT NULL,
                    name TEXT NOT NULL,
                    wrong INTEGER NOT NULL DEFAULT 0,
                    last_used REAL NOT NULL,
                    PRIMARY KEY (key, name)
                )
                """)
    }

    /// Whether the browser whose cookie digest is `key` has logged in as `name` (and has not
    /// since sent `deviceWrongPasswords` wrong passwords in a row for it).
    public func deviceRemembers(key: String, name: String) throws(UserStoreError) -> Bool {
        do {
            return try queue.read { db in
                try Bool.fetchOne(
                    db, sql: "SELECT 1 FROM devices WHERE key = ? AND name = ?", arguments: [key, name]) == true
            }
        } catch {
            throw .unreadable(path: path, reason: String(describing: error))
        }
    }

    /// Whether the browser whose cookie digest is `key` is remembered for any name.
    public func deviceIsKnown(key: String) throws(UserStoreError) -> Bool {
        do {
            return try queue.read { db in
                try Bool.fetchOne(db, sql: "SELECT 1 FROM devices WHERE key = ?", arguments: [key]) == true
            }
        } catch {
            throw .unreadable(path: path, reason: String(describing: error))
        }
    }

    /// A right password from this browser: remembered for `name` (seconds since 1970 in `now`).
    public func rememberDevice(key: String, name: String, now: Double) throws(UserStoreError) {
        try writeDevices { db in
            try db.execute(
                sql: """
                    INSERT INTO devices (key, name, wrong, last_used) VALUES (?, ?, 0, ?)
                    ON CONFLICT(key, name) DO UPDATE SET wrong = 0, last_used = excluded.last_used
                    """, arguments: [key, name, now])
            try db.execute(
                sql: """
                    DELETE FROM devices WHERE name = ? AND key NOT IN
                    (SELECT key FROM devices WHERE name = ? ORDER BY last_used DESC LIMIT ?)
                    """, arguments: [name, name, Self.devicesPerName])
        }
    }

    /// A wrong password from a remembered browser: after `deviceWrongPasswords` in a row it is
    /// forgotten for `name` (a stolen cookie is worth that many guesses).
    public func deviceWrongPassword(key: String, name: String) throws(UserStoreError) {
        try writeDevices { db in
            try db.execute(
                sql: "UPDATE devices SET wrong = wrong + 1 WHERE key = ? AND name = ?", arguments: [key, name])
            try db.execute(
                sql: "DELETE FROM devices WHERE key = ? AND name = ? AND wrong >= ?",
                arguments: [key, name, Self.deviceWrongPasswords])
        }
    }

    private func writeDevices(_ body: (Database) throws -> Void) throws(UserStoreError) {
        do { try queue.write { db in try body(db) } } catch {
            throw .unreadable(path: path, reason: String(describing: error))
        }
    }
}
