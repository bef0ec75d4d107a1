import Foundation
import GRDB
import HummingbirdBcrypt
import Synchronization

// The station page's accounts, in a small SQLite file of their own (not the session log: the
// log is the research record, and lineup-web reads it read-only). SQLite rather than a JSON
// file because `lineupctl web user add` writes it while lineup-web reads it: SQLite's locking
// and transactions make each addition whole and seen whole, with no lock file of ours.

/// What an account may do on the station's page.
public enum WebRole: String, Sendable, Codable, CaseIterable, Hashable {
    /// The handler: runs sessions, presses ready, clicker and error; never sees a double-blind layout.
    case trainer
    /// The loading assistant: sees what to load where, presses "loaded" (ready).
    case assistant
    /// Reads only: status, the live stream as the handler sees it.
    case researcher
    /// Everything a trainer may, and accounts. Sees the layout as the handler does.
    case admin
    /// The handler of a double-blind session who must not know the layout: enters a guess of
    /// the target's station each trial, and is sent nothing of any layout, in any session.
    case handler

    /// The layout view this role is given: only the loading assistant's shows the stations.
    public var seesLayout: Bool { self == .assistant }
    /// Whether the page asks lineupd for any layout for this role: every role but the handler's
    /// (the trainer's view shows a trainer-led round's layout; lineupd refuses it in a
    /// double-blind session). The handler's is never asked, in any mode.
    public var asksLayout: Bool { self != .handler }
    /// Starts, ends and aborts sessions; presses the clicker and error.
    public var runsSessions: Bool { self == .trainer || self == .admin }
    /// Adds dogs to the sitting's queue and removes them (the queue is shared by every browser
    /// logged in to the station; any role may read it: it holds nothing of a layout).
    public var editsQueue: Bool { self == .trainer || self == .admin }
    /// Presses ready (the trainer) or "loaded" (the assistant).
    public var pressesReady: Bool { self == .trainer || self == .admin || self == .assistant }
    /// Enters the handler's guess of the target's station (lineupd's `guess`, which
    /// `stats --guesses` counts): the handler, and the trainer or admin who handles.
    public var entersGuesses: Bool { self == .handler || self == .trainer || self == .admin }
}

/// One account as the store keeps it (the password only as its bcrypt hash).
public struct WebUser: Sendable, Hashable {
    public var name: String
    public var role: WebRole
    public var passwordHash: String
}

/// Why an account could not be added or read; each says what to change.
public enum UserStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    case badName(String)
    case shortPassword(minimum: Int)
    case longPassword(maximum: Int)
    case duplicate(String)
    case noSuchUser(String)
    case unreadable(path: String, reason: String)

    public var description: String {
        switch self {
        case .badName(let name):
            return
                "user name \"\(name)\" is not allowed: use 1 to 32 letters, digits, '.', '-' or '_'"
        case .shortPassword(let minimum): return "the password is too short: at least \(minimum) characters"
        case .longPassword(let maximum):
            return "the password is too long: bcrypt reads at most \(maximum) bytes of it"
        case .duplicate(let name): return "a user named \"\(name)\" already exists"
        case .noSuchUser(let name): return "no user named \"\(name)\" (lineupctl web user list shows them)"
        case .unreadable(let path, let reason): return "cannot use the accounts file \(path): \(reason)"
        }
    }
}

/// The accounts file. Every call opens its own short transaction, so a lineupctl adding a user
/// and lineup-web checking a password never see half of anything.
public final class UserStore: Sendable {
    /// Where the accounts live on a station: lineup-web's own state directory.
    public static let defaultPath = "/var/lib/lineup-web/users.db"
    public static let environmentVariable = "LINEUP_WEB_USERS"
    /// The project's rule: 10 characters at least (NIST SP 800-63B asks for 8; a station on a
    /// shared Wi-Fi gets a little more). bcrypt reads only the first 72 bytes, so longer is refused
    /// rather than silently cut.
    public static let minimumPassword = 10
    public static let maximumPasswordBytes = 72
    /// bcrypt's cost: 2^10 rounds, about 0.1 s on a Pi 4 per check, which also slows guessing.
    public let cost: UInt8

    public let path: String
    let queue: DatabaseQueue
    private let decoy = Mutex<String?>(nil)

    /// The path a command or the service uses: the flag, else the environment, else the default.
    public static func path(option: String?) -> String {
        option ?? ProcessInfo.processInfo.environment[environmentVariable] ?? defaultPath
    }

    /// Opens (creating when `create`) the accounts file. A file created here is mode 0600:
    /// only its owner (lineup-web's user) reads the hashes.
    public init(path: String, create: Bool, cost: UInt8 = 10) throws(UserStoreError) {
        self.path = path
        self.cost = cost
        let exists = FileManager.default.fileExists(atPath: path)
        if !exists && !create {
            throw .unreadable(
                path: path, reason: "no such file (make the first account: lineupctl web user add NAME --role admin)")
        }
        do {
            var configuration = Configuration()
            configuration.busyMode = .timeout(5)
            if exists { try Self.refuseOtherFiles(path: path) }
            if !exists {
                // Created empty with the right mode before SQLite writes anything into it.
                let fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
                if fd < 0 { throw UserStoreError.unreadable(path: path, reason: String(cString: strerror(errno))) }
                close(fd)
            }
            queue = try DatabaseQueue(path: path, configuration: configuration)
            try queue.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE IF NOT EXISTS users (
                            name TEXT PRIMARY KEY NOT NULL,
                            role TEXT NOT NULL,
                            password_hash TEXT NOT NULL,
                            created_at TEXT NOT NULL
                        )
                        """)
                try Self.createLoginsTable(db)
                try Self.createDevicesTable(db)
                try Self.createQueueTable(db)
            }
        } catch let error as UserStoreError {
            throw error
        } catch {
            throw .unreadable(path: path, reason: String(describing: error))
        }
    }

    /// An existing file given as the accounts file must be one (or empty): opened for writing,
    /// a session log would get an accounts table made in it. Looked at read-only first, so a
    /// wrong file is left exactly as it was.
    static func refuseOtherFiles(path: String) throws {
        var configuration = Configuration()
        configuration.readonly = true
        // `mode=ro` alone still writes read marks into a WAL file's -shm; `readonly_shm=1` does
        // not (as SessionLog's readers open a log: LogFiles.swift).
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        let uri =
            "file:" + (absolute.addingPercentEncoding(withAllowedCharacters: allowed) ?? absolute)
            + "?mode=ro&readonly_shm=1"
        let tables = try DatabaseQueue(path: uri, configuration: configuration).read { db in
            try String.fetchAll(
                db,
                sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        }
        let others = tables.filter { !["users", "logins", "devices", "sitting_queue"].contains($0) }
        guard others.isEmpty else {
            let hint = others.contains("session") && others.contains("trial") ? " (a session log?)" : ""
            throw UserStoreError.unreadable(
                path: path,
                reason: "it is not an accounts file: it holds the tables \(others.prefix(4).joined(separator: ", "))"
                    + "\(others.count > 4 ? ", ..." : "")\(hint); nothing was changed in it")
        }
    }

    /// A name the page and the log can show as typed: letters, digits, '.', '-', '_'.
    public static func checkName(_ name: String) throws(UserStoreError) {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: ".-_"))
        guard (1...32).contains(name.count), name.unicodeScalars.allSatisfy({ allowed.contains($0) && $0.isASCII })
        else { throw .badName(name) }
    }

    public static func checkPassword(_ password: String) throws(UserStoreError) {
        if password.count < minimumPassword { throw .shortPassword(minimum: minimumPassword) }
        if password.utf8.count > maximumPasswordBytes { throw .longPassword(maximum: maximumPasswordBytes) }
    }

    /// Adds an account; its password is kept only as a bcrypt hash.
    public func add(name: String, role: WebRole, password: String) throws(UserStoreError) {
        try Self.checkName(name)
        try Self.checkPassword(password)
        let hash = Bcrypt.hash(password, cost: cost)
        do {
            try queue.write { db in
                if try Bool.fetchOne(db, sql: "SELECT 1 FROM users WHERE name = ?", arguments: [name]) == true {
                    throw UserStoreError.duplicate(name)
                }
                try db.execute(
                    sql: "INSERT INTO users (name, role, password_hash, created_at) VALUES (?, ?, ?, ?)",
                    arguments: [name, role.rawValue, hash, ISO8601DateFormatter().string(from: Date())])
            }
        } catch let error as UserStoreError {
            throw error
        } catch {
            throw .unreadable(path: path, reason: String(describing: error))
        }
    }

    public func user(named name: String) throws(UserStoreError) -> WebUser? {
        do {
            return try queue.read { db in
                guard
                    let row = try Row.fetchOne(
                        db, sql: "SELECT name, role, password_hash FROM users WHERE name = ?", arguments: [name])
                else { return nil }
                let roleWord: String = row["role"]
                guard let role = WebRole(rawValue: roleWord) else {
                    throw UserStoreError.unreadable(
                        path: path, reason: "user \"\(name)\" has a role this lineup does not know: \(roleWord)")
                }
                return WebUser(name: row["name"], role: role, passwordHash: row["password_hash"])
            }
        } catch let error as UserStoreError {
            throw error
        } catch {
            throw .unreadable(path: path, reason: String(describing: error))
        }
    }

    /// Every account, by name, without its hash.
    public func list() throws(UserStoreError) -> [(name: String, role: String, created: String)] {
        do {
            return try queue.read { db in
                try Row.fetchAll(db, sql: "SELECT name, role, created_at FROM users ORDER BY name").map {
                    (name: $0["name"], role: $0["role"], created: $0["created_at"])
                }
            }
        } catch {
            throw .unreadable(path: path, reason: String(describing: error))
        }
    }

    /// Removes an account. lineup-web checks the account on each request, so its sessions end
    /// at their next request (or live-stream frame).
    public func remove(name: String) throws(UserStoreError) {
        try changeOne(name, sql: "DELETE FROM users WHERE name = ?", arguments: [name])
    }

    /// Sets a new password under the same rules as `add`. The hash changes, which ends the
    /// account's open sessions in lineup-web at their next request.
    public func setPassword(name: String, password: String) throws(UserStoreError) {
        try Self.checkPassword(password)
        let hash = Bcrypt.hash(password, cost: cost)
        try changeOne(name, sql: "UPDATE users SET password_hash = ? WHERE name = ?", arguments: [hash, name])
    }

    private func changeOne(_ name: String, sql: String, arguments: StatementArguments) throws(UserStoreError) {
        do {
            try queue.write { db in
                try db.execute(sql: sql, arguments: arguments)
                if db.changesCount == 0 { throw UserStoreError.noSuchUser(name) }
            }
        } catch let error as UserStoreError {
            throw error
        } catch {
            throw .unreadable(path: path, reason: String(describing: error))
        }
    }

    public func count() throws(UserStoreError) -> Int {
        do { return try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM users") ?? 0 } } catch {
            throw .unreadable(path: path, reason: String(describing: error))
        }
    }

    /// The account if the password is its own; nil otherwise. A name that does not exist costs
    /// a bcrypt check all the same, so the time taken does not tell which names exist.
    public func check(name: String, password: String) throws(UserStoreError) -> WebUser? {
        let found = try user(named: name)
        let hash = found?.passwordHash ?? decoyHash
        let matches = Bcrypt.verify(password, hash: hash)
        return matches ? found : nil
    }

    /// A hash of nothing anyone types, at this file's cost, for the check of a name that does
    /// not exist (made at the first such check).
    private var decoyHash: String {
        decoy.withLock { decoy in
            if let decoy { return decoy }
            let made = Bcrypt.hash("lineup-web decoy \(UInt64.random(in: 0...UInt64.max))", cost: cost)
            decoy = made
            return made
        }
    }
}
