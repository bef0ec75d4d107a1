import Foundation
import SessionLog
import Testing

/// The researcher's tools never destroy or alter the record (issue 24): no command writes its
/// output onto the log or one of its files, reading and merging leave every file of a source
/// byte-identical (a pending WAL included), and a hostile row is refused in one line, under a
/// memory limit, instead of sizing an allocation.
@Suite(.serialized, .ownThreads) struct LogSafetyTests {
    let directory: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("safety-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// A station's log: a simulated block of `trials` trials.
    func station(_ path: String, trials: Int, seed: Int) async throws {
        let result = try await lineupdAwaited([
            "--simulate", "--db", path, "--trials", "\(trials)", "--seed", "\(seed)", "--speed", "30",
            "--no-realtime", "--device", "null",
        ])
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// Every file of the log that exists (main, -wal, -shm, -journal) and its SHA-256.
    func hashes(_ log: String) throws -> [String: String] {
        var out: [String: String] = [:]
        for suffix in ["", "-wal", "-shm", "-journal"] where FileManager.default.fileExists(atPath: log + suffix) {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: log + suffix)))
            out[suffix.isEmpty ? "main" : suffix] = SHA256Digest.hex(of: SHA256Digest.digest(bytes))
        }
        return out
    }

    @Test func reportOntoTheLogOrItsFilesIsRefusedWithNothingWritten() async throws {
        let log = directory + "/lineup.db"
        try await station(log, trials: 3, seed: 1)
        #expect(FileManager.default.fileExists(atPath: log + "-wal"))
        let before = try hashes(log)
        try FileManager.default.createSymbolicLink(atPath: directory + "/link.html", withDestinationPath: log)
        // The log, its -wal, its -shm, a symlink to it, and the log spelt another way.
        for output in [log, log + "-wal", log + "-shm", directory + "/link.html", directory + "/./lineup.db"] {
            let result = try lineupctl(["report", "--db", log, "-o", output])
            #expect(result.status == 1, "\(output): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(
                result.stderr.contains("choose another file for the report; nothing was written"), "\(result.stderr)")
        }
        // backup and merge --into share the check.
        let backup = try lineupctl(["backup", "--db", log, log + "-journal"])
        #expect(backup.status == 1 && backup.stderr.contains("a file of the session log"), "\(backup.stderr)")
        #expect(!FileManager.default.fileExists(atPath: log + "-journal"))
        let merge = try lineupctl(["merge", log, "--into", log + "-wal"])
        #expect(merge.status == 1 && merge.stderr.contains("choose another file for the lab log"), "\(merge.stderr)")

        #expect(try hashes(log) == before)
        #expect(try SessionLog.openReader(path: log).trials().count == 3)
        // And a report beside it is written.
        let fine = try lineupctl(["report", "--db", log, "-o", directory + "/report.html"])
        #expect(fine.status == 0, "\(fine.stderr)")
    }

    @Test func benchLogAndTheAccountsFileOptionPointedAtTheLogChangeNothing() async throws {
        let log = directory + "/lineup.db"
        try await station(log, trials: 2, seed: 3)
        let before = try hashes(log)
        let bench = try lineupBench(["log", "--db", log, "--seconds", "0.2"])
        #expect(bench.status == 1, "\(bench.stdout)")
        #expect(
            bench.stderr == "lineup-bench: \(log) already exists; lineup-bench log writes a new log\n",
            "\(bench.stderr)")
        let users = try lineupctl(["web", "user", "list", "--users", log])
        #expect(users.status != 0)
        #expect(users.stderr.split(separator: "\n").count == 1, "\(users.stderr)")
        #expect(users.stderr.contains("it is not an accounts file"), "\(users.stderr)")
        #expect(users.stderr.contains("(a session log?)"), "\(users.stderr)")
        #expect(try hashes(log) == before)
    }

    @Test func mergeAndPullLeaveEverySourceByteIdentical() async throws {
        let live = directory + "/pi-1.db"
        try await station(live, trials: 2, seed: 2)
        // A writer that is still running: its newest rows are in the WAL, not yet in the file.
        let writer = try SessionLog(path: live, create: false)
        _ = try writer.addDog(name: "Pending", born: nil, notes: "only in the WAL")
        // And a log whose last writer is gone (killed) and left its pending WAL and index.
        let crashed = directory + "/pi-2.db"
        for suffix in ["", "-wal", "-shm"] {
            try FileManager.default.copyItem(atPath: live + suffix, toPath: crashed + suffix)
        }
        let sources = [live, crashed]
        let before = try sources.map(hashes)
        #expect(before.allSatisfy { $0.keys.sorted() == ["-shm", "-wal", "main"] })

        let lab = directory + "/lab.db"
        let merged = try lineupctl(["merge", live, crashed, "--into", lab])
        #expect(merged.status == 0, "\(merged.stderr)")
        #expect(try sources.map(hashes) == before)
        // The pending rows were read: the dog added in the WAL is in the lab.
        #expect(try SessionLog.openReader(path: lab).dogs().contains { $0.name == "Pending" })

        // pull: ssh is a script that runs the command line here with the host's log.
        let ssh = directory + "/ssh"
        try """
        #!/bin/sh
        host="$1"; shift
        LINEUP_DB="\(directory)/$host.db" exec sh -c "$*"
        """.write(toFile: ssh, atomically: true, encoding: .utf8)
        chmod(ssh, 0o755)
        let built = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/lineupctl").path
        let pulled = try lineupctl(
            ["pull", "pi-1", "pi-2", "--into", directory + "/lab2.db", "--ssh", ssh, "--remote-lineupctl", built])
        #expect(pulled.status == 0, "\(pulled.stderr)")
        // The reading commands too.
        for arguments in [["stats"], ["export", "--what", "trials"], ["report"]] {
            let read = try lineupctl(arguments + ["--db", crashed])
            #expect(read.status == 0, "\(arguments): \(read.stderr)")
        }
        #expect(try sources.map(hashes) == before)
        withExtendedLifetime(writer) {}

        // A read-only user (nobody, in a directory it cannot write) reads the source afterwards,
        // and a copy of it whose -shm is missing.
        let shared = directory + "/shared"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        for suffix in ["", "-wal", "-shm"] {
            try FileManager.default.copyItem(atPath: crashed + suffix, toPath: shared + "/with-shm.db" + suffix)
        }
        for suffix in ["", "-wal"] {
            try FileManager.default.copyItem(atPath: crashed + suffix, toPath: shared + "/no-shm.db" + suffix)
        }
        for path in [directory, shared] { chmod(path, 0o755) }
        for name in try FileManager.default.contentsOfDirectory(atPath: shared) { chmod(shared + "/" + name, 0o644) }
        let readOnly = try hashes(shared + "/with-shm.db")
        for name in ["with-shm.db", "no-shm.db"] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = [
                "--reuid=65534", "--regid=65534", "--clear-groups", built, "dogs", "--db", shared + "/" + name,
            ]
            let result = try runToEnd(process)
            #expect(result.status == 0 && result.stdout.contains("Pending"), "\(name): \(result.stderr)")
        }
        #expect(try hashes(shared + "/with-shm.db") == readOnly)
        #expect(!FileManager.default.fileExists(atPath: shared + "/no-shm.db-shm"))
    }

    @Test func aHostileStationNumberIsRefusedInOneLineUnderAMemoryLimit() async throws {
        let log = directory + "/hostile.db"
        try await station(log, trials: 2, seed: 3)
        let insert = Process()
        insert.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        insert.arguments = [
            log,
            "INSERT INTO trial_station (trial_id, station, kind) SELECT id, 300000000, 'blank' FROM trial LIMIT 1",
        ]
        let inserted = try runToEnd(insert)
        #expect(inserted.status == 0, "\(inserted.stderr)")
        let built = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/lineupctl").path
        for arguments in [["report", "-o", directory + "/r.html"], ["export", "--what", "trials"]] {
            // 2 GiB of address space: far more than the log needs, far less than the row asks.
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -v 2097152; exec \"$0\" \"$@\"", built] + arguments + ["--db", log]
            let result = try runToEnd(process)
            #expect(result.status == 1, "\(arguments): \(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(arguments): \(result.stderr)")
            #expect(
                result.stderr.contains("trial_station row") && result.stderr.contains("station 300000000"),
                "\(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory + "/r.html"))
    }
}
