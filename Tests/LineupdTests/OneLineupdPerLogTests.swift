import Foundation
import Glibc
import SessionLog
import StationControl
import Testing

/// Issue 23's "done when": two lineupd on one log, the second refuses in one line, and the
/// first's session ends `ended`. Before the lock the second served on a socket of its own
/// and, as it started, logged the first's live session as interrupted.
@Suite("one lineupd per log", .serialized, .ownThreads)
struct OneLineupdPerLogTests {
    /// Starts another served lineupd on `db` with its own socket and waits (bounded) for it to
    /// end: whether it did, its exit status and what it said on stderr.
    static func secondLineupd(db: String, socket: String) throws -> (exited: Bool, status: Int32, said: String) {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let second = Process()
        second.executableURL = root.appendingPathComponent(".build/debug/lineupd")
        second.arguments = ["--simulate", "--serve", "--socket", socket, "--db", db, "--speed", "30", "--no-realtime"]
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = nil
        second.environment = environment
        let err = Pipe()
        second.standardError = err
        second.standardOutput = FileHandle.nullDevice
        try second.run()
        let exited = eventually(15) { !second.isRunning }
        if !exited {
            kill(second.processIdentifier, SIGTERM)
            second.waitUntilExit()
        }
        let said = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (exited, second.terminationStatus, said)
    }

    @Test func aSecondLineupdOnTheLogRefusesAndTheFirstsSessionEndsEnded() throws {
        guard let first = try ServingStationTests.Daemon(speed: 30) else { return }
        defer { if first.process.isRunning { _ = first.terminate() } }
        #expect(first.waitReady())
        let id = try first.client.startSession(
            SessionRequest(dog: "Rex", program: "research-5-station", step: "phase-3/1", trials: 2, unlabelled: true))

        let secondSocket = first.directory + "/second.sock"
        let (exited, status, said) = try Self.secondLineupd(db: first.db, socket: secondSocket)
        #expect(exited, "the second lineupd kept running: \(said)")
        #expect(status == 1)
        #expect(said.split(separator: "\n").count == 1, "\(said)")
        #expect(
            said.contains(
                "another lineupd (pid \(first.process.processIdentifier), control socket \(first.socket)) is writing the session log at \(first.db)"
            ), "\(said)")
        #expect(!FileManager.default.fileExists(atPath: secondSocket))

        // Readers are not stopped by the lock, and the first station runs on.
        let listed = try lineupctl(["sessions", "--db", first.db])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains(String(id.prefix(8))))
        try first.client.ready()
        #expect(eventually(10) { (try? first.client.status().trialsDone) == 1 }, "the first trial never ended")
        try first.client.endSession(suggestions: nil)
        #expect(first.terminate().status == 0)
        let details = try SessionLog.openReader(path: first.db).session(id: id)
        #expect(details.endedHow == "ended", "\(details.endedHow ?? "nil"): \(details.endDetail ?? "")")
    }

    /// The lock is the daemon's, not its station's: a reload makes the station again and keeps
    /// it, and it is let go at exit, so the next lineupd starts.
    @Test func theLockOutlivesAReloadAndIsLetGoAtExit() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let config = root.appendingPathComponent("hardware/vm/vm.toml").path
        guard let first = try ServingStationTests.Daemon(speed: 20, extra: ["--config", config]) else { return }
        defer { if first.process.isRunning { _ = first.terminate() } }
        #expect(first.waitReady())
        kill(first.process.processIdentifier, SIGHUP)
        usleep(300_000)
        #expect(eventually(10) { (try? first.client.status().state) == .idle })
        let refused = try Self.secondLineupd(db: first.db, socket: first.directory + "/second.sock")
        #expect(refused.exited && refused.status == 1, "\(refused.said)")
        #expect(refused.said.contains("another lineupd (pid \(first.process.processIdentifier)"), "\(refused.said)")
        let (status, out) = first.terminate()
        #expect(status == 0)
        #expect(out.contains("reloaded \(config)"), "stdout: \(out)")
        guard let next = try ServingStationTests.Daemon(speed: 30, directory: first.directory) else { return }
        defer { if next.process.isRunning { _ = next.terminate() } }
        #expect(next.waitReady(), "\(next.stderrSoFar)")
        #expect(next.terminate().status == 0)
    }
}
