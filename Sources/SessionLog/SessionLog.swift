import Foundation
import GRDB
import GRDBSQLite
import ReadingRows

/// What can go wrong opening or reading the log, each said in one line.
public enum SessionLogError: Error, Equatable, CustomStringConvertible {
    case databaseMissing(path: String)
    case databaseLocked(path: String)
    case newerSchema(path: String, unknownVersions: [String])
    case olderSchema(path: String, missingVersions: [String])
    case notASessionLog(path: String)
    case cannotOpen(path: String, reason: String)
    case unknownDog(String)
    case unknownSession(String)
    case unknownSample(String)
    case unknownTrial(String)
    case ambiguousId(String, kind: String)
    /// A name two or more dogs share (two stations' "Rex" are two dogs): their ids, to choose by.
    case ambiguousDogName(String, ids: [String])
    case duplicateSample(label: String)
    case duplicateDog(name: String, id: String)
    case malformedDate(String)
    case invalidInput(String)
    case writerClosed
    /// A write failed (disk full, I/O error): the records wait in the writer's memory spool
    /// and are retried; they are not on disk yet.
    case notYetOnDisk(reason: String)
    case database(String)
    /// A row holds a word this lineup does not know (a log from a newer lineup, or edited by
    /// hand): which table, which row, which column, what it says and what it could say.
    case unknownWord(table: String, row: String, column: String, value: String, known: [String])
    /// SQLite found the file damaged (a flipped bit, a torn write, a bad card): which check or
    /// read found it and its first complaint, so the person knows to restore or recover.
    case damaged(path: String, problem: String)
    /// Another lineupd holds the log's lock (``LogLock``): who, as its lock file says.
    case logInUse(path: String, holder: String)
    /// A row holds a number out of its range (hostile or damaged): which table and row, and
    /// what is wrong with it. Nothing is sized by it.
    case badRow(table: String, row: String, problem: String)
    /// The session is a double-blind session still running: a reader withholds it until it
    /// ends (`LiveDoubleBlind`), so nothing of it can be shown or checked yet.
    case withheld(WithheldSession)

    public var description: String {
        switch self {
        case .databaseMissing(let path):
            // lineup-sync names the log with --log; every other program with --db.
            let option = Self.program == "lineup-sync" ? "--log PATH" : "--db PATH or LINEUP_DB"
            return "no session log at \(path) (use \(option))"
        case .databaseLocked(let path):
            return "the session log at \(path) is locked by another process; try again"
        case .newerSchema(let path, let unknown):
            return
                "the session log at \(path) was written by a newer lineup (schema \(unknown.joined(separator: ", "))); update \(Self.program)"
        case .olderSchema(let path, let missing):
            return
                "the session log at \(path) has an older schema (missing \(missing.joined(separator: ", "))); start lineupd once to migrate it"
        case .notASessionLog(let path):
            return "\(path) is not a lineup session log"
        case .cannotOpen(let path, let reason):
            return "cannot open \(path): \(reason)"
        case .unknownDog(let text): return "no dog \"\(text)\" in the log"
        case .unknownSession(let text): return "no session \"\(text)\" in the log"
        case .unknownSample(let text): return "no sample \"\(text)\" in the log"
        case .unknownTrial(let text): return "no trial \"\(text)\" in the log"
        case .ambiguousId(let text, let kind):
            return "\"\(text)\" matches more than one \(kind); give more of the id"
        case .ambiguousDogName(let name, let ids):
            return
                "\"\(name)\" names \(ids.count) dogs (ids \(ids.joined(separator: ", "))): give the one meant by its id or an id prefix"
        case .duplicateSample(let label): return "a sample labelled \"\(label)\" is already in the log"
        case .duplicateDog(let name, let id):
            return "a dog named \"\(name)\" is already in the log (id \(id.prefix(8))); give the new dog another name"
        case .malformedDate(let text):
            return "malformed date \"\(text)\": use YYYY-MM-DD or ISO 8601 like 2025-05-01T14:30:00+02:00"
        case .invalidInput(let text): return text
        case .writerClosed: return "the log writer is closed"
        case .notYetOnDisk(let reason):
            return "not on disk yet (\(reason)): kept in memory and retried"
        case .database(let text): return "database error: \(text)"
        case .unknownWord(let table, let row, let column, let value, let known):
            return
                "the log's \(table) row \(row) has \(column) \"\(value)\", which this lineupctl does not know (known: \(known.joined(separator: ", "))); was it written by a newer lineup or edited by hand?"
        case .damaged(let path, let problem):
            // .dump, not .recover: Debian 12's sqlite3 has no .recover (no sqlite_dbpage), and
            // .dump of a damaged file ends in ROLLBACK, which would throw away what it saved.
            let file = shellQuoted(path)
            return
                "the session log at \(path) is damaged (\(problem)): restore it from a backup, or save what is still readable: "
                + "sqlite3 \(file) .dump | sed 's/^ROLLBACK; -- due to errors$/COMMIT;/' | sqlite3 recovered.db"
        case .logInUse(let path, let holder):
            return
                "another lineupd (\(holder)) is writing the session log at \(path): stop it first, or give this one another --db"
        case .badRow(let table, let row, let problem):
            return
                "the log's \(table) row \(row) has \(problem); the log is damaged or was edited by hand: nothing was read from it"
        case .withheld(let session):
            return WithheldSession.sentence([session], "its trials, layouts, outcomes and events are")
        }
    }

    /// The program saying it, for "update lineupd" from lineupd and "update lineupctl" from
    /// lineupctl; "lineup" from anything else (a test). By the name it was started as: the
    /// package's lineupctl, lineup-web and lineup-sync are links to one binary, lineup-net, which
    /// is the name ProcessInfo gives them all.
    static var program: String {
        let name = (CommandLine.arguments.first ?? "").split(separator: "/").last.map(String.init) ?? ""
        return ["lineupd", "lineupctl", "lineup-web", "lineup-sync", "lineup-lab"].contains(name) ? name : "lineup"
    }

    /// No log at `path` as this user sees it: either there is none, or a directory on the way
    /// cannot be entered (FileManager says "no file" for both; the second is a permission to
    /// ask for, not a log to create).
    static func absent(_ path: String) -> SessionLogError {
        var info = stat()
        guard stat(path, &info) != 0, errno == EACCES else { return .databaseMissing(path: path) }
        var directory = URL(fileURLWithPath: path).standardizedFileURL
        var blocked = directory.deletingLastPathComponent().path
        while directory.path != "/" {
            directory = directory.deletingLastPathComponent()
            if access(directory.path, X_OK) != 0 { blocked = directory.path }
        }
        return .cannotOpen(
            path: path, reason: "permission denied: this user cannot enter \(blocked) (is it in the station's group?)")
    }

    /// Maps SQLite's errors to the researcher's words.
    static func from(_ error: any Error, path: String) -> SessionLogError {
        if let known = error as? SessionLogError { return known }
        if let word = error as? FilterWordError { return SessionLogError(word) }
        guard let dbError = error as? DatabaseError else {
            return .database(String(describing: error))
        }
        switch dbError.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED: return .databaseLocked(path: path)
        case .SQLITE_NOTADB: return .notASessionLog(path: path)
        // Damage met while reading (a page that does not parse), not a foreign file.
        case .SQLITE_CORRUPT:
            return .damaged(path: path, problem: dbError.message ?? "database disk image is malformed")
        case .SQLITE_FULL: return .database("the disk holding \(path) is full")
        case .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_AUTH, .SQLITE_READONLY:
            return .cannotOpen(path: path, reason: dbError.message ?? "\(dbError.resultCode)")
        default: return .database(dbError.message ?? "\(dbError.resultCode)")
        }
    }
}

/// `path` as a shell word: as it is when it has nothing the shell would read otherwise.
func shellQuoted(_ path: String) -> String {
    let plain = path.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._/-+=:,@".contains($0)) }
    return plain && !path.isEmpty ? path : "'" + path.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

/// The station's session log: one SQLite database in WAL mode, written by one writer,
/// read by anyone in the station's group.
///
/// Shaped as GRDB's demo `AppDatabase`: the writer connection is private, the schema is
/// a migrator, and each write method is one transaction.
public final class SessionLog: Sendable {
    /// The station's database in its state directory.
    public static let defaultPath = "/var/lib/lineup/lineup.db"

    /// `LINEUP_DB` if set, else ``defaultPath``.
    public static var pathFromEnvironment: String {
        ProcessInfo.processInfo.environment["LINEUP_DB"].flatMap { $0.isEmpty ? nil : $0 }
            ?? defaultPath
    }

    public let path: String
    let pool: DatabasePool

    /// Opens the log for writing, creating it if `create` and migrating it forward.
    /// `cacheKibibytes`: SQLite's page cache for each of its connections (the writer and two
    /// readers).
    ///
    /// Refuses a log written by a newer lineup: its schema may hold rows this build
    /// would misread, so nothing is written to it.
    public init(path: String, create: Bool = true, busyTimeout: TimeInterval = 5, cacheKibibytes: Int = 1024)
        throws
    {
        self.path = path
        if !create && !FileManager.default.fileExists(atPath: path) {
            throw SessionLogError.absent(path)
        }
        var config = Configuration()
        config.busyMode = .timeout(busyTimeout)
        config.label = "lineup.log"
        // The station appends and rarely reads back: a small pool and page cache keep the
        // daemon's memory small on a board.
        config.maximumReaderCount = 2
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA cache_size = \(-cacheKibibytes)")
            // FULL: each commit reaches the disk before commitTrial returns, so an
            // announced outcome survives a power cut, not only a crash.
            try db.execute(sql: "PRAGMA synchronous = FULL")
            // When the WAL starts over after a checkpoint, trim the file to 16 MiB.
            try db.execute(sql: "PRAGMA journal_size_limit = 16777216")
            // Keep -wal and -shm when the daemon closes: a researcher who may only read
            // the state directory can then still open the log (SQLite cannot create
            // them for a read-only connection).
            var persist: CInt = 1
            _ = sqlite3_file_control(db.sqliteConnection, "main", SQLITE_FCNTL_PERSIST_WAL, &persist)
        }
        do {
            pool = try DatabasePool(path: path, configuration: config)
            // GRDB sets synchronous = NORMAL on the writer as it turns WAL on, after
            // prepareDatabase: commits were then not synced, and a power cut lost announced
            // trials (hardware/vm/powercut.sh). FULL again, on the one writer connection.
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
            try pool.read { db in try Self.checkSchema(db, path: path, allowOlder: true) }
            try Schema.migrator.migrate(pool)
        } catch {
            throw SessionLogError.from(error, path: path)
        }
    }

    /// Runs a read of a live log again while SQLite says SQLITE_READONLY_RECOVERY, for at most
    /// 2 s: a reader with a read-only `-shm` (`readonly_shm=1`) that finds the WAL index's
    /// header torn (lineupd writing it at that moment) and the write lock free by the time it
    /// looks says so instead of waiting, though the next look finds it whole. Seen once in CI
    /// (LabOwnershipTests, "attempt to write a readonly database" beside a running lineupd); the
    /// error comes at the read's first statement, before any row, so the read starts again clean.
    static func pastTornIndex<T>(_ read: () throws -> T) throws -> T {
        let deadline = DispatchTime.now().uptimeNanoseconds + 2_000_000_000
        while true {
            do {
                return try read()
            } catch let error as DatabaseError
                where error.extendedResultCode == .SQLITE_READONLY_RECOVERY
                && DispatchTime.now().uptimeNanoseconds < deadline
            {
                usleep(5_000)
            }
        }
    }

    /// Opens the log read-only: it works while the daemon writes, never writes itself,
    /// and refuses a log whose schema this build does not know, or one `check` finds damaged.
    ///
    /// `everything`: the running double-blind session too (`LiveDoubleBlind`); only for
    /// lineup-sync, which copies the log to the lab's store, never shows it, and must not skip
    /// rows it would then never send.
    public static func openReader(
        path: String, busyTimeout: TimeInterval = 2, check: LogCheck = .none, everything: Bool = false
    ) throws -> LogReader {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw SessionLogError.absent(path)
        }
        if isDirectory.boolValue {
            throw SessionLogError.cannotOpen(path: path, reason: "it is a directory")
        }
        var config = Configuration()
        config.readonly = true
        config.busyMode = .timeout(busyTimeout)
        config.label = "lineup.log.reader"
        // A running double-blind session stays out of every reading until it ends.
        if !everything { config.prepareDatabase { db in try LiveDoubleBlind.withhold(db, logPath: path) } }
        // Strictly read-only, `-shm` included (LogFiles.swift says what was measured): reading
        // a log never changes a byte of it, whoever reads it.
        // Only a readable file is copied: an unreadable one is SQLite's own error, said as such.
        let shmMissing = !FileManager.default.fileExists(atPath: path + "-shm") && access(path, R_OK) == 0
        do {
            let queue = try DatabaseQueue(path: readOnlyURI(path), configuration: config)
            try pastTornIndex { try queue.read { db in try checkSchema(db, path: path, allowOlder: false) } }
            let reader = LogReader(database: queue, path: path)
            try reader.check(check)
            return reader
        } catch let error as DatabaseError
            where shmMissing
            && (error.resultCode == .SQLITE_READONLY || error.resultCode == .SQLITE_CANTOPEN)
        {
            // A WAL log without its -shm: read a private copy (see `privateCopy(of:)`).
            let copy = try privateCopy(of: path)
            do {
                let queue = try DatabaseQueue(path: copy.path, configuration: config)
                try queue.read { db in try checkSchema(db, path: path, allowOlder: false) }
                return LogReader(database: queue, path: path, copy: copy)
            } catch {
                throw SessionLogError.from(error, path: path)
            }
        } catch {
            throw SessionLogError.from(error, path: path)
        }
    }

    /// A reader over this log's own pool (for the daemon's status and for tests).
    public var reader: LogReader { LogReader(database: pool, path: path) }

    /// Starts the one writer thread of this log. The WAL is copied into the database once it
    /// holds `checkpointFrames` pages (see `Checkpointer`).
    public func makeWriter(
        capacity: Int = 65_536, batchInterval: Duration = .milliseconds(25), batchSize: Int = 4_096,
        checkpointFrames: Int = 1_000
    ) -> LogWriter {
        LogWriter(
            pool: pool, path: path, capacity: capacity, batchInterval: batchInterval, batchSize: batchSize,
            checkpointFrames: checkpointFrames)
    }

    /// Appends records in one transaction, directly on the caller's thread: for records
    /// that are not events (sessions, notes), and for tests. The researcher's additions go
    /// through ``addDog(name:born:notes:)`` and its siblings, which check them first.
    public func append(_ records: [any AppendableRecord]) throws {
        do {
            try pool.write { db in
                for record in records { try record.append(to: db) }
            }
        } catch {
            throw SessionLogError.from(error, path: path)
        }
    }

    /// Writes a consistent copy of the log to `destination` through SQLite's online
    /// backup; safe while the daemon writes.
    public static func backup(from reader: LogReader, to destination: String) throws {
        try reader.backup(to: destination)
    }

    /// The migrations in a database that this build does not know mean a newer
    /// schema; an empty database is fine for the writer, which will migrate it.
    static func checkSchema(_ db: Database, path: String, allowOlder: Bool) throws {
        let hasMigrations = try db.tableExists("grdb_migrations")
        if !hasMigrations {
            let tables = try Int.fetchOne(
                db,
                sql: "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
            if (tables ?? 0) > 0 { throw SessionLogError.notASessionLog(path: path) }
            if allowOlder { return }
            throw SessionLogError.olderSchema(path: path, missingVersions: Schema.knownVersions)
        }
        let applied = try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations")
        let known = Set(Schema.knownVersions)
        let unknown = applied.filter { !known.contains($0) }.sorted()
        if !unknown.isEmpty { throw SessionLogError.newerSchema(path: path, unknownVersions: unknown) }
        let missing = Schema.knownVersions.filter { !applied.contains($0) }
        if !missing.isEmpty && !allowOlder {
            throw SessionLogError.olderSchema(path: path, missingVersions: missing)
        }
    }
}

extension SessionLog {
    /// One transaction on the caller's thread, for tests.
    func write(_ body: (Database) throws -> Void) throws {
        do {
            try pool.write(body)
        } catch {
            throw SessionLogError.from(error, path: path)
        }
    }
}
