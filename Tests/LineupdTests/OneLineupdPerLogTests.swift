import Foundation
import Glibc
import SessionLog
import StationControl
import Testing

/// Issue 23's "done when": two lineupd on one log, the second refuses in one line, and the
/// first's session ends `ended`. Before the lock the second served on a socket of its own
/// and, as it started, logged the first's live session as interrupted.
@Suite("one lineupd per log", .serialized)
struct OneLineupdPerLogTests {
    @Test func aSecondLineupdOnTheLogRefusesAndTheFirstsSessionEndsEnded() throws {
        guard let first = try ServingStationTests.Daemon(speed: 30) else { return }
        defer { if first.process.isRunning { _ = first.terminate() } }
        #expect(first.waitReady())
        let id = try first.client.startSession(
            SessionRequest(dog: "Rex", program: "research-5-station", step: "phase-3/1", trials: 2, unlabelled: true))

        // Another socket, so only the log is shared.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let secondSocket = first.directory + "/second.sock"
        let second = Process()
        second.executableURL = root.appendingPathComponent(".build/debug/lineupd")
        second.arguments = [
            "--simulate", "--serve", "--socket", secondSocket, "--db", first.db, "--speed", "30", "--no-realtime",
        ]
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
        #expect(exited, "the second lineupd kept running: \(said)")
        #expect(second.terminationStatus == 1)
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
}
