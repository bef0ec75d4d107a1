import Foundation
import GRDB

// The page's logged-in sessions, kept beside the accounts so that restarting lineup-web (an
// upgrade, a crash, the board's reboot) does not log out a trainer in the middle of a
// session: the page reconnects by itself and carries on. Only a digest of each session's
// cookie is kept, so a copy of this file does not let anyone in.

/// One logged-in session as the accounts file keeps it.
public struct StoredLogin: Sendable, Hashable {
    /// The SHA-256 of the cookie's token, hex.
    public var key: String
    public var name: String
    public var role: WebRole
    public var csrf: String
    /// The account's password hash at login (a new password ends the session).
    public var credential: String
    /// The last use, seconds since 1970 (wall clock: the monotonic clock restarts with the board).
    public var lastSeen: Double

    public init(key: String, name: String, role: WebRole, csrf: String, credential: String, lastSeen: Double) {
        self.key = key
        self.name = name
        self.role = role
        self.csrf = csrf
        self.credential = credential
        self.lastSeen = lastSeen
    }
}

extension UserStore {
    static func createLoginsTable(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS logins (
                    key TEXT PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL,
                    role TEXT NOT NULL,
                    csrf TEXT NOT NULL,
                    credential TEXT NOT NULL,
                    last_seen REAL NOT NULL
                )
                """)
    }

    /// Adds or refreshes a session.
    public func saveLogin(_ login: StoredLogin) throws(UserStoreError) {
        try writeLogins { db in
            try db.execute(
                sql: """
                    INSERT INTO logins (key, name, role, csrf, credential, last_seen) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT(key) DO UPDATE SET last_seen = excluded.last_seen
                    """,
                arguments: [
                    login.key, login.name, login.role.rawValue, login.csrf, login.credential, login.lastSeen,
                ])
        }
    }

    public func removeLogin(key: String) throws(UserStoreError) {
        try writeLogins { db in try db.execute(sql: "DELETE FROM logins WHERE key = ?", arguments: [key]) }
    }

    /// Every session last used at or after `since` (seconds since 1970); older ones are
    /// deleted. A row whose role this build does not know is dropped too.
    public func logins(since: Double) throws(UserStoreError) -> [StoredLogin] {
        var found: [StoredLogin] = []
        try writeLogins { db in
            try db.execute(sql: "DELETE FROM logins WHERE last_seen < ?", arguments: [since])
            for row in try Row.fetchAll(db, sql: "SELECT * FROM logins") {
                guard let role = WebRole(rawValue: row["role"]) else { continue }
                found.append(
                    StoredLogin(
                        key: row["key"], name: row["name"], role: role, csrf: row["csrf"],
                        credential: row["credential"], lastSeen: row["last_seen"]))
            }
        }
        return found
    }

    private func writeLogins(_ body: (Database) throws -> Void) throws(UserStoreError) {
        do { try queue.write { db in try body(db) } } catch {
            throw .unreadable(path: path, reason: String(describing: error))
        }
    }
}
