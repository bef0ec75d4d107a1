import Foundation
import SessionLog
import Testing

/// Issue 24's smaller messages: each says what is true for the program and user saying it.
@Suite(.ownThreads) struct ReaderMessagesTests {
    private func temporaryDirectory(_ name: String) throws -> String {
        let dir = NSTemporaryDirectory() + "reader-messages-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// lineupd on a log a newer lineup wrote says to update lineupd (it said "update lineupctl").
    @Test func lineupdOnANewerLogSaysUpdateLineupd() async throws {
        let dir = try temporaryDirectory("newer")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/lineup.db"
        _ = try SessionLog(path: path)
        // A later lineup added a migration this build does not know (sqlite3: .ci/run installs it).
        let added = try runToEnd(
            process(
                "/usr/bin/sqlite3", [path, "INSERT INTO grdb_migrations (identifier) VALUES ('v99-from-the-future')"]))
        try #require(added.status == 0, "\(added.stderr)")
        let result = try await lineupdAwaited(["--simulate", "--serve", "--socket", dir + "/c.sock", "--db", path])
        #expect(result.status != 0)
        #expect(result.stderr.contains("written by a newer lineup"), "\(result.stderr)")
        #expect(result.stderr.contains("update lineupd"), "\(result.stderr)")
        #expect(!result.stderr.contains("lineupctl"), "\(result.stderr)")
        let reading = try await runBuiltAwaited("lineupctl", ["sessions", "--db", path])
        #expect(reading.stderr.contains("update lineupctl"), "\(reading.stderr)")
    }

    /// A log in a directory this user cannot enter is a permission to ask for, not a missing
    /// log ("no session log at ..." before). Root enters everything, so the reader is `nobody`.
    @Test(
        .enabled(
            if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser")
                && getpwnam("nobody") != nil, "needs root, runuser and the user nobody"))
    func aLogInADirectoryThatCannotBeEnteredIsSaidSo() async throws {
        let outer = try temporaryDirectory("closed")
        defer { try? FileManager.default.removeItem(atPath: outer) }
        chmod(outer, 0o755)
        let closed = outer + "/state"
        try FileManager.default.createDirectory(atPath: closed, withIntermediateDirectories: false)
        _ = try SessionLog(path: closed + "/lineup.db")
        chmod(closed, 0o700)
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let tool = root.appendingPathComponent(".build/debug/lineupctl").path
        // nobody must be able to run the built tool at all (a checkout under a closed home is not).
        let runs = try runToEnd(process("/usr/sbin/runuser", ["-u", "nobody", "--", tool, "--version"]))
        guard runs.status == 0 else {
            Issue.record("nobody cannot run \(tool) here: \(runs.stderr)")
            return
        }
        let result = try runToEnd(
            process("/usr/sbin/runuser", ["-u", "nobody", "--", tool, "sessions", "--db", closed + "/lineup.db"]))
        #expect(result.status != 0)
        #expect(!result.stderr.contains("no session log"), "\(result.stderr)")
        #expect(result.stderr.contains("permission denied: this user cannot enter \(closed)"), "\(result.stderr)")
    }

    private func process(_ path: String, _ arguments: [String]) -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = arguments
        return p
    }
}
