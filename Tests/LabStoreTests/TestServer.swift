import Foundation
import Glibc
import LabStore
import PostgresNIO
import SessionLog
import Testing

/// A throwaway PostgreSQL server of the test's own: initdb into a temporary directory, its Unix
/// socket in that directory, no TCP. PostgreSQL refuses to run as root, so as root its programs
/// run as the `postgres` user (Debian's package makes it) in a directory that user may write
/// (chown is not allowed in every sandbox, so the directory is opened instead).
final class TestServer: @unchecked Sendable {
    let directory: String
    let port: Int
    let binaries: String
    let asUser: String?
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
    static func startOrSkip(_ test: String) throws -> TestServer? {
        guard let binaries = binaries() else {
            print("LabStoreTests skipped \(test): PostgreSQL is not installed (apt-get install postgresql)")
            return nil
        }
        print("LabStoreTests ran \(test) against a real PostgreSQL (\(binaries))")
        return try TestServer(binaries: binaries)
    }

    init(binaries: String) throws {
        self.binaries = binaries
        directory = "/tmp/lineup-pg-\(UUID().uuidString.prefix(8))"
        // Only the socket file's name depends on the port; any number is free in our own directory.
        port = Int.random(in: 20_000...60_000)
        asUser = getuid() == 0 ? "postgres" : nil
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
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
        try start()
    }

    func start() throws {
        try run(
            "\(binaries)/pg_ctl",
            [
                "-D", "\(directory)/data", "-l", "\(directory)/server.log", "-w", "-o",
                "-k \(directory) -p \(port) -c listen_addresses='' -c fsync=off", "start",
            ])
    }

    func stop(mode: String = "fast") throws {
        try run("\(binaries)/pg_ctl", ["-D", "\(directory)/data", "-m", mode, "-w", "stop"])
    }

    func restart() throws {
        try run(
            "\(binaries)/pg_ctl",
            [
                "-D", "\(directory)/data", "-l", "\(directory)/server.log", "-m", "fast", "-w", "-o",
                "-k \(directory) -p \(port) -c listen_addresses='' -c fsync=off", "restart",
            ])
    }

    deinit {
        try? stop(mode: "immediate")
        try? FileManager.default.removeItem(atPath: directory)
    }

    func connection(user: String, password: String, database: String) -> LabConnection {
        LabConnection(host: directory, port: port, database: database, user: user, password: password)
    }

    var admin: LabConnection { connection(user: "lineup_admin", password: Self.adminPassword, database: "postgres") }

    /// Runs a server program to its end. posix_spawn and waitpid, not Process: the server
    /// pg_ctl leaves running would hold a pipe open for ever, and Process was seen not to reap
    /// runuser here (a zombie, waitUntilExit never returning).
    @discardableResult
    func run(_ program: String, _ arguments: [String]) throws -> String {
        let argv = (asUser.map { ["/sbin/runuser", "-u", $0, "--"] } ?? []) + [program] + arguments
        let outputPath = NSTemporaryDirectory() + "lineup-pg-out-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, cArguments, environ)
        guard spawned == 0 else {
            throw TestServerError(message: "cannot start \(argv[0]): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
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

/// Runs lineup-sync to its end.
func runSync(_ arguments: [String], environment extra: [String: String] = [:]) throws -> SyncRun {
    guard let path = lineupSyncPath() else {
        throw TestServerError(message: "lineup-sync is not built: run `swift build` before `swift test`")
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return SyncRun(
        status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errData, as: UTF8.self))
}
