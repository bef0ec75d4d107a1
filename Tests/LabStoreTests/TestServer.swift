import Foundation
import Glibc
import LabStore
import PostgresNIO
import SessionLog
import Testing

/// A throwaway PostgreSQL server of the test's own: initdb into a temporary directory, its Unix
/// socket in that directory, no TCP; with `tls`, also TCP on 127.0.0.1 with TLS certificates of
/// its own (`TestCertificates`). PostgreSQL refuses to run as root, so as root its programs
/// run as the `postgres` user (Debian's package makes it) in a directory that user may write
/// (chown is not allowed in every sandbox, so the directory is opened instead).
final class TestServer: @unchecked Sendable {
    let directory: String
    let port: Int
    let binaries: String
    let asUser: String?
    /// The certificates of a TLS server (nil: socket only).
    let certificates: TestCertificates?
    static let adminPassword = "admin-not-a-secret"

    /// Debian's binaries, newest version first; nil when PostgreSQL is not installed.
    static func binaries() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init)
            .sorted()
        for version in versions.reversed()
        where FileManager.default.isExecutableFile(atPath: "\(root)/\(version)/bin/initdb") {
            return "\(root)/\(version)/bin"
        }
        return nil
    }

    /// Skips (with the reason printed) only when the binaries are absent; .ci/run installs
    /// them and fails when this line appears in its test log.
    /// Starts the server on a thread of its own: `initdb` and `pg_ctl` block for seconds (tens
    /// on a loaded machine), and blocking Swift's cooperative pool (one thread per core, two
    /// here) starved every other test in the process: LivePageTests' live page got no status
    /// frame within 5 s, and LabStreamTests' 1 s deadline could not fire within its time limit.
    static func startOrSkip(_ test: String, tls: Bool = false) async throws -> TestServer? {
        guard let binaries = binaries() else {
            print("LabStoreTests skipped \(test): PostgreSQL is not installed (apt-get install postgresql)")
            return nil
        }
        print("LabStoreTests ran \(test) against a real PostgreSQL (\(binaries))")
        return try await offThePool { try TestServer(binaries: binaries, tls: tls) }
    }

    init(binaries: String, tls: Bool = false) throws {
        self.binaries = binaries
        directory = "/tmp/lineup-pg-\(UUID().uuidString.prefix(8))"
        // Only the socket file's name depends on the port; any number is free in our own
        // directory. Over TCP the port must be free on the machine: the kernel picks one.
        port = try tls ? Self.freeTCPPort() : Int.random(in: 20_000...60_000)
        asUser = getuid() == 0 ? "postgres" : nil
        certificates = tls ? TestCertificates(directory: "\(directory)/tls") : nil
        Self.stopLeftovers()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // Whose server this is, so a later run can stop it if this test process was killed.
        try Data("\(getpid())".utf8).write(to: URL(fileURLWithPath: "\(directory)/owner-pid"))
        let passwordFile = "\(directory)/admin-password"
        try Data(Self.adminPassword.utf8).write(to: URL(fileURLWithPath: passwordFile))
        if asUser != nil {
            chmod(directory, 0o777)
            chmod(passwordFile, 0o644)
        }
        try run(
            "\(binaries)/initdb",
            [
                "-D", "\(directory)/data", "-U", "lineup_admin", "--auth=scram-sha-256", "--pwfile=\(passwordFile)",
                "--no-sync", "-E", "UTF8", "--locale=C",
            ])
        if let certificates { try certificates.make(self) }
        try start()
    }

    /// Whether a TLS server has `ssl = on` (`setSSL` turns it off to show a server without TLS).
    var ssl: Bool {
        get { sslLock.withLock { sslOn } }
        set { sslLock.withLock { sslOn = newValue } }
    }
    private var sslOn = true
    private let sslLock = NSLock()

    /// pg_ctl's `-o`: the socket, the port, and for a TLS server TCP on 127.0.0.1 with its
    /// certificate and its own pg_hba.conf (TCP only with TLS).
    var serverOptions: String {
        let base = "-k \(directory) -p \(port) -c fsync=off"
        guard let tls = certificates else { return base + " -c listen_addresses=''" }
        return base
            + " -c listen_addresses=127.0.0.1 -c ssl=\(ssl ? "on" : "off") -c ssl_cert_file=\(tls.directory)/server.crt"
            + " -c ssl_key_file=\(tls.directory)/server.key -c hba_file=\(tls.directory)/pg_hba.conf"
    }

    func start() throws {
        try run(
            "\(binaries)/pg_ctl",
            ["-D", "\(directory)/data", "-l", "\(directory)/server.log", "-w", "-o", serverOptions, "start"])
    }

    func stop(mode: String = "fast") throws {
        try run("\(binaries)/pg_ctl", ["-D", "\(directory)/data", "-m", mode, "-w", "stop"])
    }

    func restart() throws {
        try run(
            "\(binaries)/pg_ctl",
            [
                "-D", "\(directory)/data", "-l", "\(directory)/server.log", "-m", "fast", "-w", "-o",
                serverOptions, "restart",
            ])
    }

    /// A TCP port no one listens on now, as the kernel picks it.
    static func freeTCPPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestServerError(message: "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw TestServerError(message: "bind: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Restarts the server with TLS on or off.
    func setSSL(_ on: Bool) async throws {
        ssl = on
        try await offThePool { try self.restart() }
    }

    /// Runs when the test ends, passed or failed (the test's last reference goes).
    deinit {
        try? stop(mode: "immediate")
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Stops and removes the servers of test processes that were killed before their deinit
    /// ran (a killed `swift test` left them running). Only directories that name their owner
    /// and whose owner is gone: another worktree's running test keeps its server.
    static func stopLeftovers() {
        guard let binaries = binaries() else { return }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? []
        for name in names where name.hasPrefix("lineup-pg-") {
            let directory = "/tmp/\(name)"
            guard let text = try? String(contentsOfFile: "\(directory)/owner-pid", encoding: .utf8),
                let owner = pid_t(text), Glibc.kill(owner, 0) == -1 && errno == ESRCH
            else { continue }
            let asUser = getuid() == 0 ? ["/sbin/runuser", "-u", "postgres", "--"] : []
            if FileManager.default.fileExists(atPath: "\(directory)/data/postmaster.pid"),
                let child = try? Child(
                    asUser + ["\(binaries)/pg_ctl", "-D", "\(directory)/data", "-m", "immediate", "-w", "stop"])
            {
                _ = try? child.wait(within: .seconds(60), for: "pg_ctl stop of a leftover server")
            }
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    func connection(user: String, password: String, database: String) -> LabConnection {
        LabConnection(host: directory, port: port, database: database, user: user, password: password)
    }

    var admin: LabConnection { connection(user: "lineup_admin", password: Self.adminPassword, database: "postgres") }

    /// Runs a server program to its end (a minute at most), as the postgres user when root.
    @discardableResult
    func run(_ program: String, _ arguments: [String]) throws -> String {
        let argv = (asUser.map { ["/sbin/runuser", "-u", $0, "--"] } ?? []) + [program] + arguments
        let child = try Child(argv)
        let status = try child.wait(within: .seconds(60), for: "\(program) \(arguments.joined(separator: " "))")
        let text = child.stdout() + child.stderr()
        guard status == 0 else {
            throw TestServerError(message: "\(program) \(arguments.joined(separator: " ")) failed: \(text)")
        }
        return text
    }

    /// A lab database owned by `lineup_owner`, migrated by it; a station login and a
    /// researcher login in the project's roles.
    func makeLab() async throws -> Lab {
        let admin = try await LabStore.connect(self.admin)
        try await admin.execute("CREATE ROLE lineup_owner LOGIN CREATEROLE PASSWORD 'owner-pw'")
        try await admin.execute("CREATE DATABASE lab OWNER lineup_owner")
        await admin.close()
        let owner = try await LabStore.connect(connection(user: "lineup_owner", password: "owner-pw", database: "lab"))
        try await owner.migrate()
        try await owner.execute("CREATE ROLE station_a LOGIN PASSWORD 'station-pw' IN ROLE lineup_station")
        try await owner.execute("CREATE ROLE reader_r LOGIN PASSWORD 'reader-pw' IN ROLE lineup_researcher")
        await owner.close()
        return Lab(server: self)
    }

    struct Lab {
        let server: TestServer
        var owner: LabConnection { server.connection(user: "lineup_owner", password: "owner-pw", database: "lab") }
        var station: LabConnection { server.connection(user: "station_a", password: "station-pw", database: "lab") }
        var researcher: LabConnection { server.connection(user: "reader_r", password: "reader-pw", database: "lab") }

        /// Writes a connection file for the station's login, mode 0600.
        func stationFile(in directory: String) throws -> String {
            let path = "\(directory)/lab-store.conf"
            let c = station
            let text =
                "# the lab store\nhost = \(c.host)\nport = \(c.port)\ndatabase = \(c.database)\nuser = \(c.user)\npassword = \(c.password!)\n"
            FileManager.default.createFile(
                atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
            return path
        }
    }
}

/// A TLS server's certificates, made by the `openssl` program: a throwaway CA, a certificate
/// for `localhost` (and no address) signed by it, and a second CA that signed nothing here.
struct TestCertificates: Sendable {
    let directory: String
    var authority: String { "\(directory)/ca.crt" }
    var otherAuthority: String { "\(directory)/other-ca.crt" }

    /// Made as the server's user (its key must be that user's, mode 0600).
    func make(_ server: TestServer) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if server.asUser != nil { chmod(directory, 0o777) }
        let openssl = "/usr/bin/openssl"
        // Elliptic-curve keys: made in milliseconds, where RSA takes a loaded machine seconds.
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        for name in ["ca", "other-ca"] {
            try server.run(
                openssl,
                ["req", "-x509"] + key + [
                    "-keyout", "\(directory)/\(name).key", "-out", "\(directory)/\(name).crt", "-days", "2",
                    "-subj", "/CN=lineup test \(name)",
                ])
        }
        try server.run(
            openssl,
            ["req"] + key + [
                "-keyout", "\(directory)/server.key", "-out", "\(directory)/server.csr", "-subj", "/CN=localhost",
            ])
        let extensions = "\(directory)/server.ext"
        FileManager.default.createFile(
            atPath: extensions, contents: Data("subjectAltName = DNS:localhost\n".utf8),
            attributes: [.posixPermissions: 0o644])
        try server.run(
            openssl,
            [
                "x509", "-req", "-in", "\(directory)/server.csr", "-CA", authority, "-CAkey", "\(directory)/ca.key",
                "-CAcreateserial", "-out", "\(directory)/server.crt", "-days", "2", "-extfile", extensions,
            ])
        try server.run("/bin/chmod", ["600", "\(directory)/server.key"])
        // TCP only with TLS, as docs/lab.md sets up a lab's server; the socket as before.
        FileManager.default.createFile(
            atPath: "\(directory)/pg_hba.conf",
            contents: Data("local all all scram-sha-256\nhostssl all all 127.0.0.1/32 scram-sha-256\n".utf8),
            attributes: [.posixPermissions: 0o644])
    }
}

struct TestServerError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// One value of one query, as a string ("" for NULL), through a fresh connection.
func value(_ sql: String, as connection: LabConnection) async throws -> String {
    let store = try await LabStore.connect(connection)
    defer { Task { await store.close() } }
    let rows = try await store.rows(PostgresQuery(unsafeSQL: sql))
    guard let row = rows.first else { return "" }
    return try row.decode(String?.self) ?? ""
}

/// The built `lineup-sync` beside the test bundle or under `.build/debug`.
func lineupSyncPath() -> String? {
    var candidates: [URL] = []
    candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("lineup-sync"))
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    candidates.append(root.appendingPathComponent(".build/debug/lineup-sync"))
    return candidates.map(\.path).first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// The built product `name` under `.build/debug` (for the linking check).
func builtProduct(_ name: String) -> String? {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    let path = root.appendingPathComponent(".build/debug/\(name)").path
    return FileManager.default.isExecutableFile(atPath: path) ? path : nil
}

struct SyncRun {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs lineup-sync to its end, two minutes at most (then it is killed and the test fails
/// saying so, with what it printed).
func runSync(_ arguments: [String], environment extra: [String: String] = [:]) throws -> SyncRun {
    guard let path = lineupSyncPath() else {
        throw TestServerError(message: "lineup-sync is not built: run `swift build` before `swift test`")
    }
    let child = try Child([path] + arguments, environment: extra)
    let status = try child.wait(within: .seconds(120), for: "lineup-sync \(arguments.joined(separator: " "))")
    return SyncRun(status: status, stdout: child.stdout(), stderr: child.stderr())
}

/// A child process whose output goes to files (never a pipe another child could inherit and
/// hold open), spawned with every other descriptor closed, and whose every wait has a
/// deadline: a test fails with what it was waiting for instead of hanging.
final class Child: @unchecked Sendable {
    let pid: pid_t
    let description: String
    private let outPath: String
    private let errPath: String
    /// The write end of the child's stdin, when it was asked for.
    private var input: Int32 = -1
    private var status: Int32?

    init(
        _ argv: [String], environment extra: [String: String] = [:], unset: [String] = [], withInput: Bool = false
    ) throws {
        description = argv.map { ($0 as NSString).lastPathComponent }.prefix(3).joined(separator: " ")
        let base = NSTemporaryDirectory() + "lineup-child-\(UUID().uuidString.prefix(8))"
        outPath = base + ".out"
        errPath = base + ".err"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var fds: [Int32] = [-1, -1]
        if withInput {
            guard pipe(&fds) == 0 else { throw TestServerError(message: "pipe: \(errno)") }
            _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            posix_spawn_file_actions_adddup2(&actions, fds[0], 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        // Nothing of the test process's (pipes, sockets of other children) leaks into the child:
        // a server started by pg_ctl would otherwise hold them open for its whole life.
        closeFrom3(&actions)
        var merged = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        for key in unset { merged[key] = nil }
        let environment = merged.map { "\($0)=\($1)" }
        let cArguments = argv.map { strdup($0) } + [nil]
        let cEnvironment = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in cArguments + cEnvironment { free(pointer) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, cArguments, cEnvironment)
        if withInput { close(fds[0]) }
        guard spawned == 0 else {
            if withInput { close(fds[1]) }
            throw TestServerError(message: "cannot start \(argv[0]): \(String(cString: strerror(spawned)))")
        }
        self.pid = pid
        input = fds[1]
    }

    deinit {
        if status == nil {
            Glibc.kill(pid, SIGKILL)
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) == -1 && errno == EINTR {}
        }
        if input >= 0 { close(input) }
        try? FileManager.default.removeItem(atPath: outPath)
        try? FileManager.default.removeItem(atPath: errPath)
    }

    func stdout() -> String { (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "" }
    func stderr() -> String { (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "" }

    func kill(_ signal: Int32) { Glibc.kill(pid, signal) }

    /// A line on the child's stdin (it must have been started `withInput`).
    func writeLine() {
        _ = "\n".withCString { write(input, $0, 1) }
    }

    /// Its exit status, or 128 + the signal that ended it; polled, because waitpid itself has
    /// no deadline. Past the deadline the child is killed and the test fails saying so.
    func wait(within limit: Duration, for what: String) throws -> Int32 {
        if let status { return status }
        let deadline = ContinuousClock.now + limit
        while true {
            var raw: Int32 = 0
            let result = waitpid(pid, &raw, WNOHANG)
            if result == pid {
                let code = raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
                status = code
                return code
            }
            if result == -1 && errno != EINTR {
                throw TestServerError(message: "waitpid for \(what): \(String(cString: strerror(errno)))")
            }
            if ContinuousClock.now >= deadline {
                Glibc.kill(pid, SIGKILL)
                var ignored: Int32 = 0
                while waitpid(pid, &ignored, 0) == -1 && errno == EINTR {}
                status = 128 + SIGKILL
                throw TestServerError(
                    message: "\(what) did not end within \(limit) (killed); it printed: \(stdout())\(stderr())")
            }
            usleep(2_000)
        }
    }

    /// The first line of its stdout holding `text`, waiting for it until the deadline; fails at
    /// once when the child ends without printing it.
    func waitForLine(containing text: String, within limit: Duration, for what: String) throws -> String {
        let deadline = ContinuousClock.now + limit
        while true {
            if let line = stdout().split(separator: "\n").first(where: { $0.contains(text) }) { return String(line) }
            var raw: Int32 = 0
            if status == nil, waitpid(pid, &raw, WNOHANG) == pid {
                status = raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
            }
            if status != nil {
                if let line = stdout().split(separator: "\n").first(where: { $0.contains(text) }) {
                    return String(line)
                }
                throw TestServerError(message: "\(what): the process ended first; it printed: \(stdout())\(stderr())")
            }
            if ContinuousClock.now >= deadline {
                throw TestServerError(
                    message: "\(what): not within \(limit); it printed: \(stdout())\(stderr())")
            }
            usleep(2_000)
        }
    }
}

/// glibc's posix_spawn_file_actions_addclosefrom_np (not in Swift's Glibc module: it needs
/// _GNU_SOURCE), found at run time; without it, each descriptor open now is closed.
private func closeFrom3(_ actions: inout posix_spawn_file_actions_t) {
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
        _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
        return
    }
    let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    for fd in open.compactMap(Int32.init) where fd >= 3 {
        posix_spawn_file_actions_addclose(&actions, fd)
    }
}

/// Polls `condition` until it holds; past the deadline the test fails saying what it waited for.
func waitUntil(_ limit: Duration, for what: String, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + limit
    while !(try await condition()) {
        if ContinuousClock.now >= deadline {
            throw TestServerError(message: "waited \(limit) for \(what)")
        }
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// Runs blocking work (a child process waited for) on a thread of its own, so Swift's
/// cooperative pool stays free for the tests running beside it.
func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}
