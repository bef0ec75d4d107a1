import Foundation
import Glibc
import StationControl
import Testing

/// Issue 36: whether the log can be written is asked of the system directly
/// (`logWriteProblem`, LogWriteProblemTests), not only learnt from a failed write: the real
/// lineupd's `status` says so between sessions (where nothing writes, so nothing would fail), a
/// session is refused before it starts, and it clears once the log can be written again.
@Suite(.serialized, .ownThreads) struct LogWriteProbeTests {
    @Test func aLogWhoseDirectoryIsGoneIsSaidUnwritableAndRefusesSessions() throws {
        guard let daemon = try ServingStationTests.Daemon(speed: 30) else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady())
        #expect(try daemon.client.status().logWritable == true)
        #expect(try daemon.client.status().logUnwritable == nil)
        // The log's directory goes away under lineupd (a card or stick unmounted, a path
        // renamed): nothing has written, so nothing has failed yet.
        let moved = daemon.directory + "-moved"
        #expect(rename(daemon.directory, moved) == 0)
        let client = ControlClient(path: moved + "/control.sock", timeout: 5)
        let status = try client.status()
        #expect(status.logWritable == false, "\(status)")
        #expect(
            status.logUnwritable == "\(daemon.directory) cannot be written by lineupd (No such file or directory)",
            "\(status.logUnwritable ?? "nil")")
        let shown = try lineupctl(["status"], environment: ["LINEUP_SOCKET": moved + "/control.sock"])
        #expect(
            shown.stdout.contains("Log error   \(daemon.directory) cannot be written by lineupd"), "\(shown.stdout)")
        let request = SessionRequest(
            dog: "Rex", program: "research-5-station", step: "phase-3/1", trials: 2, unlabelled: true)
        #expect {
            _ = try client.startSession(request)
        } throws: { error in
            "\(error)".contains("cannot be written by lineupd (No such file or directory): no trial could be recorded")
        }
        #expect(try client.status().session == nil)
        // Back in place: writable, and the session starts.
        #expect(rename(moved, daemon.directory) == 0)
        #expect(try daemon.client.status().logWritable == true)
        #expect(try daemon.client.status().logUnwritable == nil)
        _ = try daemon.client.startSession(request)
        try daemon.client.endSession(suggestions: nil)
    }
}
