import Foundation
import Glibc
import SessionLog
import StationControl
import Testing
import TrainingEngine

/// The daemon as it runs on a board, with the simulated lineup: a real `lineupd` process
/// serving its control socket, driven by the real client library.
@Suite("lineupd serving its control socket", .serialized)
struct ServingStationTests {
    final class Daemon {
        let process = Process()
        let directory: String
        let socket: String
        let db: String
        let stdout = Pipe()
        let stderr = Pipe()

        init?(speed: Double) throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            let binary = root.appendingPathComponent(".build/debug/lineupd").path
            guard FileManager.default.isExecutableFile(atPath: binary) else {
                Issue.record("lineupd is not built: run `swift build` before `swift test`")
                return nil
            }
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("serve-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            socket = directory + "/control.sock"
            db = directory + "/lineup.db"
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = [
                "--simulate", "--serve", "--socket", socket, "--db", db, "--speed", String(speed), "--no-realtime",
            ]
            var environment = ProcessInfo.processInfo.environment
            environment["NOTIFY_SOCKET"] = nil
            process.environment = environment
            process.standardOutput = stdout
            process.standardError = stderr
            try process.run()
        }

        var client: ControlClient { ControlClient(path: socket, timeout: 5) }

        /// Waits (bounded) until the socket answers.
        func waitReady() -> Bool {
            eventually(10) { (try? client.status()) != nil }
        }

        func terminate() -> (status: Int32, stdout: String) {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
            let out = stdout.fileHandleForReading.readDataToEndOfFile()
            return (process.terminationStatus, String(decoding: out, as: UTF8.self))
        }
    }

    @Test func aDoubleBlindBlockOverTheSocket() throws {
        guard let daemon = try Daemon(speed: 50) else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady())
        let client = daemon.client
        #expect(try client.status().state == "idle")

        let id = try client.startSession(
            SessionRequest(
                dog: "Rex", program: "research-5-station", step: "phase-3/1", mode: .doubleBlind, trials: 3, seed: 11))
        #expect(!id.isEmpty)
        // The handler's view is refused the layout; the loading assistant's is given it.
        #expect(throws: ControlClientError.self) { try client.layout(view: .handler) }
        let layout = try client.layout(view: .assistant)
        #expect(layout.count == 5)
        #expect(layout.filter { $0.kind == .target }.count <= 1)
        // A second session while one runs is refused.
        #expect(throws: ControlClientError.self) {
            _ = try client.startSession(SessionRequest(dog: "Ada", program: "study", step: "x/y", mode: .automated))
        }
        for trial in 1...3 {
            try client.ready()
            #expect(eventually(10) { (try? client.status().trial) == trial }, "trial \(trial) never ended")
        }
        try client.endSession(suggestions: "shorter blocks")
        #expect(try client.status().state == "idle")
        let (status, out) = daemon.terminate()
        #expect(status == 0)
        #expect(out.split(separator: "\n").filter { $0.hasPrefix("trial ") }.count == 3, "stdout: \(out)")

        let reader = try SessionLog.openReader(path: daemon.db)
        #expect(try reader.trials().count == 3)
        let details = try reader.session(id: id)
        #expect(details.mode == TrainingMode.doubleBlind.rawValue)
        #expect(try reader.eventCount(LogFilter(eventKind: .edge)) > 0)
    }

    @Test func sigtermDuringATrialMarksItAbortedAndLeavesTheLogWhole() throws {
        // Slow enough that the trial is still running when the signal comes.
        guard let daemon = try Daemon(speed: 1) else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady())
        let client = daemon.client
        _ = try client.startSession(
            SessionRequest(dog: "Rex", program: "research-5-station", step: "phase-3/1", mode: .automated, trials: 5))
        try client.ready()
        usleep(300_000)
        let (status, _) = daemon.terminate()
        #expect(status == 0)
        let reader = try SessionLog.openReader(path: daemon.db)
        let trials = try reader.trials()
        #expect(trials.count == 1)
        #expect(trials.first?.outcome == TrialOutcome.aborted.rawValue)
        let check = try reader.read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") }
        #expect(check == "ok")
    }

    @Test func aTrainerLedExerciseTakesTheClickerAndErrorCommandsAndEnds() throws {
        guard let daemon = try Daemon(speed: 50) else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady())
        let client = daemon.client
        _ = try client.startSession(
            SessionRequest(dog: "Ada", program: "study", step: "indicate/1", mode: .trainerLed))
        // A trainer-led exercise has no layout to hide or show.
        #expect(throws: ControlClientError.self) { try client.layout(view: .assistant) }
        try client.ready()  // starts the timed exercise
        #expect(eventually(10) { (try? client.status().state) == "session" })
        try client.endSession(suggestions: nil)
        #expect(daemon.terminate().status == 0)
    }
}

/// Waits for a condition other threads or processes make true, for at most `seconds`.
func eventually(_ seconds: Double, _ condition: () -> Bool) -> Bool {
    let until = Date().addingTimeInterval(seconds)
    while Date() < until {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}
