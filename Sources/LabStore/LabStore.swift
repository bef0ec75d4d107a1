import Foundation
import Logging
import PostgresNIO
import Synchronization

/// What went wrong with the lab store, each with what a person needs to act.
public enum LabStoreError: Error, Equatable, CustomStringConvertible {
    /// The connection file is missing, unreadable, too open, or says something unknown.
    case connectionFile(path: String, problem: String)
    case unreachable(store: String, reason: String)
    /// The connection went away in the middle of a batch.
    case connectionLost(store: String, table: String, rows: Int)
    /// The server refused a statement (a grant, a trigger, a constraint).
    case refused(store: String, message: String)
    case stationLog(path: String, problem: String)
    /// This login may not sync this station: too many rights, too few, or another's station.
    case loginRefused(store: String, reason: String)
    /// After a run, the store holds another number of a table's rows of this station than
    /// the log holds up to where the sync says it has sent.
    case incomplete(store: String, table: String, inStore: Int, inLog: Int)

    public var description: String {
        switch self {
        case .connectionFile(let path, let problem): "connection file \(path): \(problem)"
        case .unreachable(let store, let reason): "the lab store \(store) cannot be reached: \(reason)"
        case .connectionLost(let store, let table, let rows):
            "the connection to the lab store \(store) was lost during a batch of \(rows) \(table) rows; "
                + "the store keeps that batch only if its commit arrived, and the next run sends what it lacks"
        case .refused(let store, let message): "the lab store \(store) refused: \(message)"
        case .stationLog(let path, let problem): "station log \(path): \(problem)"
        case .loginRefused(let store, let reason): "the lab store \(store) refused this sync: \(reason)"
        case .incomplete(let store, let table, let inStore, let inLog):
            "the lab store \(store) holds \(inStore) \(table) rows of this station where its log holds \(inLog) "
                + "up to what the sync has sent: the sync is not complete"
        }
    }
}

/// Where the store is and who connects: read from a connection file, never from the command
/// line, so the password is in no process listing and in no log line.
public struct LabConnection: Sendable, Equatable {
    /// A host name, or a directory holding PostgreSQL's Unix socket (it starts with `/`).
    public var host: String
    public var port: Int
    public var database: String
    public var user: String
    public var password: String?
    /// libpq's sslmode; nil is the project's default (`effectiveSSLMode`, LabConnection+TLS.swift).
    public var sslMode: LabSSLMode?
    /// The CA's certificate (PEM) the server's must be signed by: libpq's sslrootcert.
    public var rootCertificate: String?

    public init(
        host: String, port: Int = 5432, database: String, user: String, password: String?,
        sslMode: LabSSLMode? = nil, rootCertificate: String? = nil
    ) {
        self.host = host
        self.port = port
        self.database = database
        self.user = user
        self.password = password
        self.sslMode = sslMode
        self.rootCertificate = rootCertificate
    }

    /// Names the store in messages: host, port, database and user, never the password.
    public var display: String { "\(user)@\(host):\(port)/\(database)" }

    func configuration() throws -> PostgresConnection.Configuration {
        if isSocket {
            return .init(
                unixSocketPath: "\(host)/.s.PGSQL.\(port)", username: user, password: password, database: database)
        }
        return .init(host: host, port: port, username: user, password: password, database: database, tls: try tls())
    }

    /// Reads `key = value` lines (host, port, database, user, password, sslmode, sslrootcert;
    /// `#` comments).
    /// Refuses a file its group or others may read: it holds the password.
    public static func read(path: String) throws -> LabConnection {
        try read(path: path, reader: geteuid())
    }

    /// `reader` is the user the file is read for: systemd's credential gives it alone an ACL
    /// entry (LabConnection+Credential.swift).
    static func read(path: String, reader: uid_t) throws -> LabConnection {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw LabStoreError.connectionFile(path: path, problem: String(cString: strerror(errno)))
        }
        let mode = info.st_mode & 0o777
        if othersMayOpen(path: path, mode: mode, reader: reader) {
            throw LabStoreError.connectionFile(
                path: path,
                problem: "readable by its group or others (mode \(String(mode, radix: 8))) and it holds the "
                    + "lab store's password: chmod 600 \(path)")
        }
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else {
            throw LabStoreError.connectionFile(path: path, problem: "cannot be read as text")
        }
        return try parse(text, path: path)
    }

    static func parse(_ text: String, path: String) throws -> LabConnection {
        var values: [String: String] = [:]
        var lines: [String: Int] = [:]
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw LabStoreError.connectionFile(path: path, problem: "line \(index + 1) is not `key = value`")
            }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            let known = ["host", "port", "database", "user", "password", "sslmode", "sslrootcert"]
            guard known.contains(key) else {
                throw LabStoreError.connectionFile(
                    path: path,
                    problem: "line \(index + 1): unknown key `\(key)` (known: \(known.joined(separator: ", ")))")
            }
            // The last one winning in silence (issue 33) hides which the file meant.
            if let first = lines[key] {
                throw LabStoreError.connectionFile(
                    path: path, problem: "line \(index + 1): `\(key)` is given twice (first on line \(first))")
            }
            lines[key] = index + 1
            values[key] = value
        }
        for key in ["host", "database", "user"] where (values[key] ?? "").isEmpty {
            throw LabStoreError.connectionFile(path: path, problem: "`\(key)` is missing")
        }
        var port = 5432
        if let text = values["port"] {
            guard let number = Int(text), (1...65535).contains(number) else {
                throw LabStoreError.connectionFile(path: path, problem: "port `\(text)` is not a number in 1...65535")
            }
            port = number
        }
        let tls = try LabSSLMode.settings(mode: values["sslmode"], rootCertificate: values["sslrootcert"]) {
            LabStoreError.connectionFile(path: path, problem: $0)
        }
        return LabConnection(
            host: values["host"]!, port: port, database: values["database"]!, user: values["user"]!,
            password: values["password"], sslMode: tls.mode, rootCertificate: tls.rootCertificate)
    }
}

/// One connection to the lab store.
public struct LabStore: Sendable {
    public let connection: PostgresConnection
    public let display: String
    let logger: Logger

    public static func connect(_ settings: LabConnection) async throws -> LabStore {
        var logger = Logger(label: "lineup.lab-store")
        logger.logLevel = .critical
        let configuration: PostgresConnection.Configuration
        do {
            configuration = try settings.configuration()
        } catch {
            // The CA's file was checked when the settings were read; it changed since.
            throw LabStoreError.unreachable(
                store: settings.display, reason: "sslrootcert \(settings.rootCertificate ?? ""): \(error)")
        }
        do {
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
            return LabStore(connection: connection, display: settings.display, logger: logger)
        } catch {
            throw LabStoreError.unreachable(
                store: settings.display, reason: settings.tlsFailure(error) ?? Self.reason(error))
        }
    }

    public func close() async {
        try? await connection.close()
    }

    /// How long one statement may take before the connection is given up as lost.
    public var deadline: Duration = .seconds(120)

    /// Runs one statement; a server's refusal becomes `.refused` with its message.
    @discardableResult
    public func execute(_ query: PostgresQuery) async throws -> PostgresRowSequence {
        let connection = connection
        let logger = logger
        return try await guarded { try await connection.query(query, logger: logger) }
    }

    /// The rows of one query, fully read.
    public func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        let connection = connection
        let logger = logger
        return try await guarded {
            var result: [PostgresRow] = []
            for try await row in try await connection.query(query, logger: logger) { result.append(row) }
            return result
        }
    }

    /// Streams the rows of one query to `body` as they arrive. The deadline bounds each silence,
    /// not the whole stream (a million trials may rightly take longer than one statement): the
    /// server must answer the query, then send rows, within `deadline` of each other; the watch
    /// looks once a deadline, so a silence is noticed within two. A silence past it, or the
    /// connection's close, ends the stream in one `.unreachable`; `body`'s own errors pass as
    /// they are.
    public func stream(_ query: PostgresQuery, _ body: (PostgresRow) throws -> Void) async throws {
        guard !connection.isClosed else {
            throw LabStoreError.unreachable(store: display, reason: "the server closed the connection")
        }
        let watch = StreamWatch()
        let connection = connection
        let deadline = deadline
        let watchdog = Task {
            var before = -1
            while (try? await Task.sleep(for: deadline)) != nil {
                let now = watch.rows.load(ordering: .relaxed)
                if now == before {
                    // Only a stream still running is given up: one that ended as the watch
                    // woke keeps its connection.
                    guard watch.giveUp() else { return }
                    // Closing is what ends the wait for the next row.
                    try? await connection.close()
                    return
                }
                before = now
            }
        }
        defer { watchdog.cancel() }
        var failure: (any Error)?
        do {
            for try await row in try await connection.query(query, logger: logger) {
                watch.rows.add(1, ordering: .relaxed)
                do { try body(row) } catch {
                    failure = error
                    break
                }
            }
            // Rows that stopped because the watch closed the connection are not the whole answer.
            if !watch.end() { throw silence(watch, deadline) }
        } catch {
            if watch.wasGivenUp { throw silence(watch, deadline) }
            throw map(error)
        }
        if let failure { throw failure }
    }

    /// A stream the watch gave up: no row for a whole deadline.
    private func silence(_ watch: StreamWatch, _ deadline: Duration) -> LabStoreError {
        .unreachable(
            store: display,
            reason: "no answer to a query within \(deadline.components.seconds) s "
                + "(after \(watch.rows.load(ordering: .relaxed)) of its rows)")
    }

    /// Runs one statement against the connection's close and the deadline, whichever comes
    /// first. postgres-nio 1.33 never answers a query written after the server closed the
    /// connection (the write to the closed channel drops the query's promise): lineup-sync
    /// waited for ever after a server restart. A closed connection is now a lost one at once.
    func guarded<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let lost = LabStoreError.unreachable(store: display, reason: "the server closed the connection")
        guard !connection.isClosed else { throw lost }
        let gate = FirstAnswer<T>()
        let connection = connection
        let deadline = deadline
        let display = display
        do {
            return try await withCheckedThrowingContinuation { continuation in
                gate.start(continuation)
                Task { await gate.finish { try await body() } }
                connection.closeFuture.whenComplete { _ in gate.fail(lost) }
                gate.timer = Task {
                    guard (try? await Task.sleep(for: deadline)) != nil else { return }
                    // Only a deadline that came first closes: an answer that arrived as the timer
                    // woke keeps its connection (closing it anyway failed the next statement).
                    guard
                        gate.fail(
                            LabStoreError.unreachable(
                                store: display,
                                reason: "no answer to a statement within \(deadline.components.seconds) s"))
                    else { return }
                    // The statement is abandoned: close so nothing more is sent on this connection.
                    try? await connection.close()
                }
            }
        } catch {
            throw map(error)
        }
    }

    func map(_ error: any Error) -> any Error {
        if let known = error as? LabStoreError { return known }
        if let psql = error as? PSQLError, psql.code == .server {
            return LabStoreError.refused(store: display, message: Self.reason(error))
        }
        return LabStoreError.unreachable(store: display, reason: Self.reason(error))
    }

    /// Whether the error means the connection itself went away (not a refusal).
    static func isConnectionLoss(_ error: any Error) -> Bool {
        if case .unreachable = error as? LabStoreError { return true }
        guard let psql = error as? PSQLError else { return false }
        return [.serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown]
            .contains(psql.code)
    }

    /// The server's own message when it sent one (PSQLError's description hides it).
    static func reason(_ error: any Error) -> String {
        if let psql = error as? PSQLError {
            if let message = psql.serverInfo?[.message] {
                let code = psql.serverInfo?[.sqlState]
                let state = code.map { " (SQLSTATE \($0))" } ?? ""
                // A row a constraint refused: the server's detail names it ("Failing row contains ...").
                let detail =
                    code?.hasPrefix("23") == true ? (psql.serverInfo?[.detail]).map { ": \($0)" } ?? "" : ""
                return message + detail + state
            }
            if let underlying = psql.underlying { return "\(psql.code): \(underlying)" }
            return "\(psql.code)"
        }
        return "\(error)"
    }

    /// Applies the migrations this store lacks, all in one transaction, under an advisory lock
    /// so two migrating processes cannot interleave; returns the versions it applied.
    /// `through` stops after that version (a test's store as an older lineup-sync left it).
    @discardableResult
    public func migrate(through last: String? = nil) async throws -> [String] {
        try await execute("BEGIN")
        do {
            // 0x6c696e65 is "line": one lock number for the lab store's migrations.
            try await execute("SELECT pg_advisory_xact_lock(1818848869)")
            try await execute(
                """
                CREATE TABLE IF NOT EXISTS public.lab_migration (
                    version text PRIMARY KEY,
                    applied_at timestamptz NOT NULL DEFAULT now())
                """)
            let applied = Set(
                try await rows("SELECT version FROM public.lab_migration").map { try $0.decode(String.self) })
            var now: [String] = []
            for migration in LabSchema.migrations where !applied.contains(migration.version) {
                for statement in migration.statements {
                    try await execute(PostgresQuery(unsafeSQL: statement))
                }
                try await execute("INSERT INTO public.lab_migration (version) VALUES (\(migration.version))")
                now.append(migration.version)
                if migration.version == last { break }
            }
            try await execute("GRANT SELECT ON public.lab_migration TO \(unescaped: LabSchema.researcherRole)")
            try await execute("COMMIT")
            return now
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
    }

    /// The migrations this store has, in the order they were applied.
    public func appliedMigrations() async throws -> [String] {
        // Migrations applied in one transaction share `applied_at`: their order is their number
        // (as text "v10" would sort before "v2").
        try await rows(
            """
            SELECT version FROM public.lab_migration
            ORDER BY applied_at, substring(version FROM '^v([0-9]+)')::int, version
            """
        ).map {
            try $0.decode(String.self)
        }
    }
}

/// Resumes a continuation once, with the first answer: the statement's, the connection's close
/// or the deadline; later ones are dropped.
final class FirstAnswer<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, any Error>?
    private var done = false
    var timer: Task<Void, Never>? {
        get { lock.withLock { storedTimer } }
        set {
            let cancelNow = lock.withLock { () -> Bool in
                storedTimer = newValue
                return done
            }
            if cancelNow { newValue?.cancel() }
        }
    }
    private var storedTimer: Task<Void, Never>?

    func start(_ continuation: CheckedContinuation<T, any Error>) {
        lock.withLock { self.continuation = continuation }
    }

    func finish(_ body: @Sendable () async throws -> T) async {
        do {
            resume(.success(try await body()))
        } catch {
            resume(.failure(error))
        }
    }

    /// Whether this failure was the first answer (else it is dropped).
    @discardableResult func fail(_ error: any Error) -> Bool { resume(.failure(error)) }

    @discardableResult private func resume(_ result: Result<T, any Error>) -> Bool {
        let (first, continuation, timer) = lock.withLock {
            () -> (Bool, CheckedContinuation<T, any Error>?, Task<Void, Never>?) in
            guard !done else { return (false, nil, nil) }
            done = true
            defer { self.continuation = nil }
            return (true, self.continuation, storedTimer)
        }
        timer?.cancel()
        continuation?.resume(with: result)
        return first
    }
}

/// How a stream is going, for its watch: rows so far, and whether the watch gave up on it.
final class StreamWatch: Sendable {
    let rows = Atomic<Int>(0)
    /// 0 running, 1 ended, 2 given up by the watch: whichever of the last two comes first.
    private let state = Atomic<Int>(0)

    /// The watch gives the stream up, unless it has ended; whether it did.
    func giveUp() -> Bool { state.compareExchange(expected: 0, desired: 2, ordering: .relaxed).exchanged }
    /// The stream ended (its rows all read, or its body's error) before the watch gave it up;
    /// whether it did.
    func end() -> Bool { state.compareExchange(expected: 0, desired: 1, ordering: .relaxed).exchanged }
    var wasGivenUp: Bool { state.load(ordering: .relaxed) == 2 }
}
