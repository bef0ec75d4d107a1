import Foundation
import Glibc
import SessionLog
import StationControl
import Testing
import TrainingEngine

/// `lineupctl verify-scoring` (issue 32) on the logs the simulated station writes: a seeded
/// simulated block, and served sessions of every mode with the virtual dog (automated,
/// double-blind, and trainer-led rounds pressed by the simulated trainer); then on a copy
/// whose outcome was altered with sqlite3, which it must name.
@Suite("verify-scoring on the station's own logs", .serialized, .ownThreads)
struct VerifyScoringTests {
    @Test func aSimulatedBlockRescoresAsLogged() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rescore-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = "\(dir)/block.db"
        let run = try await lineupdAwaited(
            [
                "--simulate", "--trials", "12", "--seed", "9", "--speed", "30", "--device", "null", "--no-realtime",
                "--false-alert-rate", "0.2", "--db", db,
            ]
        )
        #expect(run.status == 0, "\(run.stderr)")
        let verified = try lineupctl(["verify-scoring", "--db", db])
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        #expect(verified.stdout.contains("All 12 trials of 1 session rescored"), "\(verified.stdout)")
    }

    @Test func servedSessionsOfEveryModeRescoreAsLoggedAndAnAlteredOutcomeIsNamed() throws {
        guard let daemon = try ServingStationTests.Daemon(speed: 10, extra: ["--false-alert-rate", "0.3"]) else {
            return
        }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady(dogs: ["Aino"]))
        let client = daemon.client
        for (step, mode, trials) in [
            ("target-scent/2", TrainingMode.automated, 4), ("discrimination/2", .doubleBlind, 4),
            ("target-scent/1", .trainerLed, 4),
        ] {
            var request = SessionRequest(dog: "Aino", program: "study", step: step, mode: mode)
            request.seed = 21
            request.unlabelled = true
            if mode == .trainerLed { request.durationSeconds = 10 } else { request.trials = trials }
            _ = try client.startSession(request)
            for n in 1...trials {
                // The virtual dog may still stand at a station: the start waits until it leaves.
                #expect(eventually(10) { (try? client.ready()) != nil }, "\(step) trial \(n) never started")
                let done = eventually(30) {
                    let s = try? client.status()
                    return (mode == .trainerLed ? s?.exercisesDone : s?.trialsDone) == n
                }
                #expect(done, "\(step) trial \(n) never ended")
            }
            try client.endSession(suggestions: nil)
        }
        #expect(daemon.terminate().status == 0)

        let verified = try lineupctl(["verify-scoring", "--db", daemon.db])
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        #expect(verified.stdout.contains("All 12 trials of 3 sessions rescored"), "\(verified.stdout)")

        // A copy of the log with the second trial's outcome altered (the log's triggers refuse
        // an update: a forger drops them first).
        let copy = daemon.db + ".altered"
        try FileManager.default.copyItem(atPath: daemon.db, toPath: copy)
        if FileManager.default.fileExists(atPath: daemon.db + "-wal") {
            try FileManager.default.copyItem(atPath: daemon.db + "-wal", toPath: copy + "-wal")
        }
        let reader = try SessionLog.openReader(path: daemon.db)
        let trial = try #require(try reader.trials().sorted { $0.number < $1.number }.dropFirst().first)
        let altered = trial.outcome == .hit ? "miss" : "hit"
        // Its indicated station too: the disagreement names it as the board does (issue 32).
        let forged = trial.indicatedStation == 1 ? 2 : 1
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        sqlite.arguments = [
            copy,
            "DROP TRIGGER trial_append_only_update; UPDATE trial SET outcome = '\(altered)', indicated_station = \(forged) WHERE id = '\(trial.id)';",
        ]
        try sqlite.run()
        sqlite.waitUntilExit()
        #expect(sqlite.terminationStatus == 0)
        let caught = try lineupctl(["verify-scoring", String(trial.sessionId.prefix(8)), "--db", copy])
        #expect(caught.status == 1, "\(caught.stdout)")
        let lines = caught.stdout.split(separator: "\n").filter { $0.contains("the log says") }
        #expect(
            lines.contains {
                $0.contains(
                    "session \(trial.sessionId.prefix(8)) trial \(trial.number): outcome: the log says \(altered)")
                    && $0.contains("the re-scorer says \(trial.outcome.rawValue)")
            }, "\(caught.stdout)")
        let name = forged == 1 ? "A" : "B"
        #expect(
            lines.contains {
                $0.contains("trial \(trial.number): indicated station: the log says station \(name) (\(forged)),")
            }, "\(caught.stdout)")
    }
}
