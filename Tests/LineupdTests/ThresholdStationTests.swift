import Foundation
import ReadingRows
import SessionLog
import StationControl
import Testing
import TrainingEngine

/// Issue 38 on the served simulated station: a real `lineupd --simulate --serve` whose virtual
/// dog has a detection threshold runs a double-blind 2-down-1-up staircase over a ladder of four
/// dilutions to its stop. The loading assistant's layout names each trial's dilution, which is
/// the staircase's answer to the dog's trials before; the handler's channels (its layout, the
/// watch stream, status, the journal) name no dilution and no station while it runs; each
/// trial's procedure state is in the log; `verify-blinding` and `verify-scoring` (the
/// independent re-scorer, which walks the staircase again) pass.
@Suite(.serialized, .ownThreads) struct ThresholdStationTests {
    static let program = """
        name = "stair-test"
        title = "Staircase test"

        [[phases]]
        id = "thr"
        title = "Threshold"

        [[phases.steps]]
        id = "stair"
        title = "2-down-1-up, double-blind"
        mode = "double-blind"
        lineup = { stations = 3, targets = 1, blanks = 2 }
        inter_trial_s = 3
        procedure = { kind = "staircase", ladder_rungs = 4, down = 2, start_rung = 3, stop_after_reversals = 3, stop_after_trials = 16, catch_trial_rate = 0.15 }

        [[phases.steps.exercises]]
        id = "1"
        title = "Staircase"
        instruction = "Load the dilution the layout names."
        duration_s = 20
        trials = 16

        """

    @Test func aDoubleBlindStaircaseRunsToItsStopAndVerifies() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stair-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.program.write(toFile: directory + "/stair-test.toml", atomically: true, encoding: .utf8)
        // The ladder holds 1:10 to 1:10,000; the dog is half-way up at 1:1,000.
        guard
            let daemon = try ServingStationTests.Daemon(
                speed: 30, extra: ["--programs", directory, "--dog-threshold", "0.001", "--dog-threshold-width", "1"],
                directory: directory)
        else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady())
        let env = ["LINEUP_SOCKET": daemon.socket, "LINEUP_DB": daemon.db]
        #expect(try lineupctl(["samples", "add", "TH-1", "--kind", "target"], environment: env).status == 0)
        let ladder = try lineupctl(
            ["samples", "add-ladder", "--stock", "TH-1", "--factor", "10", "--steps", "4"], environment: env)
        #expect(ladder.status == 0, "\(ladder.stderr)")
        let rungs = ["TH-1/1e4", "TH-1/1e3", "TH-1/1e2", "TH-1/1e1"]  // weakest first
        let client = daemon.client
        let watched = try #require(Watched(path: daemon.socket))

        // A ladder of the wrong length, or of plain samples, starts nothing.
        #expect(throws: ControlClientError.self) {
            _ = try client.startSession(
                SessionRequest(dog: "Rex", program: "stair-test", step: "thr/stair", samples: Array(rungs.prefix(3))))
        }
        #expect(throws: ControlClientError.self) {
            _ = try client.startSession(
                SessionRequest(
                    dog: "Rex", program: "stair-test", step: "thr/stair", samples: ["TH-1"] + Array(rungs.prefix(3))))
        }
        let id = try client.startSession(
            SessionRequest(dog: "Rex", program: "stair-test", step: "thr/stair", samples: rungs.reversed(), seed: 5))
        #expect(!id.isEmpty)

        var assistantSaw: [String?] = []
        var handlerSaw: [String] = []
        for trial in 1...16 {
            #expect(throws: ControlClientError.self) { try client.layout(view: .handler) }
            guard let layout = try? client.layout(view: .assistant) else { break }  // the staircase stopped
            #expect(layout.count == 3 && layout.filter { $0.kind == .target }.count <= 1)
            assistantSaw.append(layout.first { $0.kind == .target }?.sample)
            handlerSaw.append(try lineupctl(["status"], environment: env).stdout)
            do {
                try client.ready()
            } catch {
                Issue.record("trial \(trial): \(error)")
                break
            }
            #expect(eventually(20) { (try? client.status().trialsDone) == trial }, "trial \(trial) never ended")
        }
        // Stopped: a ready press says the block is complete.
        #expect(throws: ControlClientError.self) { try client.ready() }
        let running = watched.lines
        try client.endSession(suggestions: nil)
        let (status, out) = daemon.terminate()
        #expect(status == 0)

        // The handler's channels, while it ran: no dilution, no station.
        for text in handlerSaw + running + [out.components(separatedBy: "the double-blind session is over")[0]] {
            #expect(!text.contains("TH-1"), "\(text)")
        }
        let stationLines = running.filter { $0.contains(#""station":"#) && !$0.contains(#""kind":"fault""#) }
        #expect(stationLines.isEmpty, "\(stationLines.prefix(3))")

        // The log: each trial's dilution is the one the assistant was shown, and its state.
        let reader = try SessionLog.openReader(path: daemon.db)
        let session = try #require(try reader.sessions().first { $0.step == "stair" })
        let trials = try reader.trials(LogFilter(sessionId: session.id))
        #expect(trials.count == assistantSaw.count && trials.count >= 4, "\(trials.count) trials")
        #expect(trials.map { $0.layout.first { $0.kind == .target }?.sample } == assistantSaw)
        #expect(trials.allSatisfy { $0.procedure != nil })
        #expect(trials.map { $0.procedure?.dilution } == assistantSaw)
        #expect(trials.first?.procedure?.rung == 3 && trials.first?.procedure?.dilution == "TH-1/1e1")
        let last = try #require(trials.last?.procedure)
        #expect(last.stopped)
        #expect(last.reversals == 3 || trials.count == 16, "\(last)")

        let blinding = try runBuilt("lineupctl", ["verify-blinding", session.id, "--db", daemon.db])
        #expect(blinding.status == 0, "\(blinding.stdout)\(blinding.stderr)")
        #expect(blinding.stdout.contains("all \(trials.count) trials match"), "\(blinding.stdout)")
        let scoring = try runBuilt("lineupctl", ["verify-scoring", session.id, "--db", daemon.db])
        #expect(scoring.status == 0, "\(scoring.stdout)\(scoring.stderr)")
        let listed = try runBuilt("lineupctl", ["trials", "--session", session.id, "--db", daemon.db])
        #expect(listed.stdout.contains("PROCEDURE") && listed.stdout.contains("rung 3 (TH-1/1e1)"), "\(listed.stdout)")

        // Copies of the log altered with sqlite3, each check's triggers dropped to do it.
        let target = try #require(trials.dropFirst().first { $0.procedure?.catchTrial == false })
        let rung = try #require(target.procedure?.rung)
        // The procedure's row says another rung: the re-scorer, walking the staircase again, names it.
        let rungCopy = try Self.altered(
            daemon.db, directory,
            """
            DROP TRIGGER trial_procedure_append_only_update;
            UPDATE trial_procedure SET rung = \(rung == 0 ? 1 : rung - 1) WHERE trial_number = \(target.number);
            """)
        let rescored = try runBuilt("lineupctl", ["verify-scoring", session.id, "--db", rungCopy])
        #expect(rescored.status == 1, "\(rescored.stdout)")
        #expect(rescored.stdout.contains("trial \(target.number): dilution: the log says rung"), "\(rescored.stdout)")
        // The target's station holds another dilution than was committed: verify-blinding names it.
        let other = rung == 0 ? rungs[1] : rungs[rung - 1]
        let dilutionCopy = try Self.altered(
            daemon.db, directory,
            """
            DROP TRIGGER trial_station_append_only_update;
            UPDATE trial_station SET sample_id = (SELECT id FROM sample WHERE label = '\(other)')
                WHERE trial_id = '\(target.id)' AND kind = 'target';
            """)
        let caught = try runBuilt("lineupctl", ["verify-blinding", session.id, "--db", dilutionCopy])
        #expect(caught.status == 1, "\(caught.stdout)")
        #expect(
            caught.stdout.contains("trial \(target.number): its dilution does not match its commitment"),
            "\(caught.stdout)")
    }

    /// A backup of `db` changed by `sql` with sqlite3, its path.
    static func altered(_ db: String, _ directory: String, _ sql: String) throws -> String {
        let copy = directory + "/altered-\(UUID().uuidString.prefix(8)).db"
        #expect(try runBuilt("lineupctl", ["backup", copy, "--db", db]).status == 0)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        p.arguments = [copy, sql]
        let result = try runToEnd(p)
        try #require(result.status == 0, "\(result.stderr)")
        return copy
    }
}
