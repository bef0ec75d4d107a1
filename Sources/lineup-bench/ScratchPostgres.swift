import Foundation
import Glibc
import LabStore
import SessionLog

/// A throwaway PostgreSQL server for `bench lab`: initdb into a temporary directory, its Unix
/// socket there, no TCP, fsync off (the bench measures the store's work, not the disk's). As
/// Tests/LabStoreTests/TestServer.swift does (a test's code cannot be linked here): PostgreSQL
/// refuses to run as root, so as root its programs run as the `postgres` user.
final class ScratchPostgres: @unchecked Sendable {
    let directory: String
    let port: Int
    let binaries: String
    let asUser: String?
    let adminPassword = "bench-admin-not-a-secret"

    init() throws {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init)
        guard
            let version = versions.sorted().last(where: {
                FileManager.default.isExecutableFile(atPath: "\(root)/\($0)/bin/initdb")
            })
        else {
            throw SessionLogError.invalidInput("bench lab: PostgreSQL is not installed (apt-get install postgresql)")
        }
        binaries = "\(root)/\(version)/bin"
        directory = "/tmp/lineup-bench-pg-\(UUID().uuidString.prefix(8))"
        port = Int.random(in: 20_000...60_000)
        asUser = getuid() == 0 ? "postgres" : nil
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let passwordFile = "\(directory)/admin-password"
        try Data(adminPassword.utf8).write(to: URL(fileURLWithPath: passwordFile))
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
        try run(
            "\(binaries)/pg_ctl",
            [
                "-D", "\(directory)/data", "-l", "\(directory)/server.log", "-w", "-o",
                "-k \(directory) -p \(port) -c listen_addresses='' -c fsync=off", "start",
            ])
    }

    /// Stops the server and removes its directory (the logs made beside it too).
    func remove() {
        try? run("\(binaries)/pg_ctl", ["-D", "\(directory)/data", "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// For `bench lab --keep`: the server left running, what is in its directory, and the
    /// commands that reach and stop it.
    func howToReach() -> String {
        let runAs = asUser.map { "runuser -u \($0) -- " } ?? ""
        return """
            bench lab: the server is left running in \(directory) (port \(port)): researcher.conf, merged.db and \
            the station logs are there.
              PGPASSWORD=reader-pw psql -h \(directory) -p \(port) -U bench_reader lab
              lineupctl stats --lab \(directory)/researcher.conf --by dog
              lineupctl stats --db \(directory)/merged.db --by dog
              \(runAs)\(binaries)/pg_ctl -D \(directory)/data -m immediate stop && rm -r \(directory)
            """
    }

    func connection(user: String, password: String, database: String) -> LabConnection {
        LabConnection(host: directory, port: port, database: database, user: user, password: password)
    }

    struct Lab: Sendable {
        var station: LabConnection
        var researcher: LabConnection
    }

    /// A lab database owned by `lineup_owner`, migrated by it, with one station login and one
    /// researcher login in the project's roles.
    func makeLab() async throws -> Lab {
        let admin = try await LabStore.connect(
            connection(user: "lineup_admin", password: adminPassword, database: "postgres"))
        try await admin.execute("CREATE ROLE lineup_owner LOGIN CREATEROLE PASSWORD 'owner-pw'")
        try await admin.execute("CREATE DATABASE lab OWNER lineup_owner")
        await admin.close()
        let owner = try await LabStore.connect(connection(user: "lineup_owner", password: "owner-pw", database: "lab"))
        try await owner.migrate()
        try await owner.execute("CREATE ROLE bench_station LOGIN PASSWORD 'station-pw' IN ROLE lineup_station")
        try await owner.execute("CREATE ROLE bench_reader LOGIN PASSWORD 'reader-pw' IN ROLE lineup_researcher")
        await owner.close()
        return Lab(
            station: connection(user: "bench_station", password: "station-pw", database: "lab"),
            researcher: connection(user: "bench_reader", password: "reader-pw", database: "lab"))
    }

    /// A connection file (mode 0600) for lineup-sync.
    func connectionFile(_ c: LabConnection, in directory: String, name: String) throws -> String {
        let path = "\(directory)/\(name)"
        let text =
            "host = \(c.host)\nport = \(c.port)\ndatabase = \(c.database)\nuser = \(c.user)\npassword = \(c.password ?? "")\n"
        guard
            FileManager.default.createFile(
                atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        else { throw SessionLogError.invalidInput("bench lab: cannot write \(path)") }
        return path
    }

    /// Runs a server program to its end, as `postgres` when root.
    func run(_ program: String, _ arguments: [String]) throws {
        let argv = (asUser.map { ["/sbin/runuser", "-u", $0, "--"] } ?? []) + [program] + arguments
        let (status, output) = try Self.spawn(argv[0], Array(argv.dropFirst())).wait()
        guard status == 0 else {
            throw SessionLogError.invalidInput("bench lab: \(program) failed: \(output)")
        }
    }

    /// A started program, its output (stdout and stderr) going to a file read when it ends.
    /// posix_spawn and waitpid, not Process: the server pg_ctl leaves running would hold a pipe
    /// open for ever, and Process was seen not to reap runuser (TestServer.swift).
    struct Spawned {
        let pid: pid_t
        let outputPath: String

        func wait() -> (status: Int32, output: String) {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(atPath: outputPath)
            return (status, text)
        }
    }

    static func spawn(_ program: String, _ arguments: [String]) throws -> Spawned {
        let outputPath = NSTemporaryDirectory() + "lineup-bench-out-\(UUID().uuidString.prefix(8))"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = [program] + arguments
        let cArguments = argv.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, program, &actions, nil, cArguments, environ)
        guard spawned == 0 else {
            throw SessionLogError.invalidInput(
                "bench lab: cannot start \(program): \(String(cString: strerror(spawned)))")
        }
        return Spawned(pid: pid, outputPath: outputPath)
    }
}
