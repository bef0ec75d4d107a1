import Foundation
import Glibc
import SessionLog
import StationControl
import Testing
import TrainingEngine

/// Broken sensors put on the simulated lineup (`--fault`), and the station's answer as the
/// real built lineupd gives it: in its log, on stderr, in `status` and to watchers. Seeds are
/// fixed; each test checks the layouts it relies on, so a change of seed fails loudly.
@Suite("lineupd with broken sensors", .serialized, .ownThreads)
struct SensorFaultTests {
    /// A simulated block in a fresh directory: the run and its log's path.
    func block(_ arguments: [String], speed: Int = 30) async throws -> (
        run: (status: Int32, stdout: String, stderr: String), db: String
    ) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("faults-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let db = directory + "/lineup.db"
        let run = try await lineupdAwaited(
            ["--simulate", "--speed", "\(speed)", "--device", "null", "--no-realtime", "--db", db] + arguments,
            in: directory)
        return (run, db)
    }

    /// `lineupctl events --json` of a log, oldest first.
    func events(_ db: String) throws -> [[String: Any]] {
        let out = try lineupctl(["events", "--db", db, "--json", "--limit", "0", "--oldest-first"])
        #expect(out.status == 0, "\(out.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]])
    }

    func stderrLines(_ text: String, containing words: String) -> [Substring] {
        text.split(separator: "\n").filter { $0.contains(words) }
    }

    @Test func aStuckSensorIsLoggedItsTrialMarkedAndNothingClicks() async throws {
        // The dog never holds (sensitivity 0): every hold is the stuck sensor's.
        let (run, db) = try await block([
            "--trials", "3", "--seed", "7", "--sensitivity", "0", "--false-alert-rate", "0", "--fault", "stuck:B@2-2",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let reader = try SessionLog.openReader(path: db)
        let trials = try reader.trials().sorted { $0.number < $1.number }
        try #require(trials.count == 3, "\(run.stdout)")
        // Seed 7's trial 2 has its target elsewhere (or none): a stuck B is no indication at it.
        #expect(trials[1].layout[1].kind != SampleKind.target, "seed 7 changed: \(trials[1].layout)")
        #expect(trials[1].reason == "sensor fault: station B stuck during the trial")
        #expect(trials[1].outcome == TrialOutcome.falseAlert)
        #expect(trials[0].reason == nil && trials[2].reason == nil)
        // The trial after it started: the fault was lifted at its end, and B trusted again.
        #expect(trials[2].outcome != TrialOutcome.aborted)

        let all = try events(db)
        let faults = all.filter { $0["kind"] as? String == "fault" }
        #expect(faults.count == 1, "\(faults)")
        #expect(faults.first?["station"] as? Int == 2)
        #expect(faults.first?["detail"] as? String == #"{"sensor":"stuck"}"#)
        #expect(faults.first?["trial_id"] as? String == trials[1].id)
        #expect(all.contains { $0["detail"] as? String == #"{"sensor":"recovered"}"# && $0["station"] as? Int == 2 })
        #expect(all.filter { $0["kind"] as? String == "click" }.isEmpty, "a stuck sensor earned a click")
        // One line for the journal, and no other complaint.
        #expect(stderrLines(run.stderr, containing: "station B").count == 1, "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
        #expect(run.stdout.contains("sensor faults: stuck 1"), "\(run.stdout)")
    }

    @Test func aChatterStormElsewhereLeavesTheClicksAndIsCounted() async throws {
        let (run, db) = try await block(
            [
                "--trials", "6", "--seed", "7", "--sensitivity", "1", "--false-alert-rate", "0", "--fault",
                "chatter:A@2-5",
            ], speed: 10)  // the storm is physical (not sped up): at 30x the 67 ms hold is shorter than the
        // ~20 debounced edges that flag it, and a storm could complete a hold at A first (seen once)
        #expect(run.status == 0, "\(run.stderr)")
        let reader = try SessionLog.openReader(path: db)
        let trials = try reader.trials().sorted { $0.number < $1.number }
        try #require(trials.count == 6)
        let all = try events(db)
        let clicks = all.filter { $0["kind"] as? String == "click" }
        // Trials in the storm with their target elsewhere: the dog (sensitivity 1) held at it
        // and was clicked, each once; the trial is marked.
        let elsewhere = trials[1...4].filter {
            $0.layout.contains { $0.kind == SampleKind.target }
                && $0.layout[0].kind != SampleKind.target
        }
        #expect(elsewhere.count >= 2, "seed 7 changed: \(trials.map(\.layout))")
        for trial in elsewhere {
            #expect(trial.outcome == TrialOutcome.hit, "trial \(trial.number): \(run.stdout)")
            #expect(clicks.filter { $0["trial_id"] as? String == trial.id }.count == 1, "trial \(trial.number)")
            #expect(trial.reason == "sensor fault: station A chattering during the trial")
        }
        // One storm a trial, each flagged once and said once.
        let faults = all.filter { $0["kind"] as? String == "fault" }
        #expect(faults.count == 4, "\(faults)")
        #expect(faults.allSatisfy { $0["detail"] as? String == #"{"sensor":"chatter"}"# && $0["station"] as? Int == 1 })
        #expect(stderrLines(run.stderr, containing: "station A is chattering").count == 4, "\(run.stderr)")
        // What came in is counted exactly: every raw edge is in the log (an edge or a button
        // event), and what the debouncer and the lineup made of the storm is in the summary.
        let summary = try #require(run.stdout.split(separator: "\n").first { $0.contains("raw edges") })
        let numbers = summary.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        let (raw, chatter, droppedByLineup, written, droppedByLog, overflows) =
            (numbers[0], numbers[1], numbers[2], numbers[3], numbers[4], numbers[5])
        let logged = all.filter { ["edge", "button"].contains($0["kind"] as? String) }.count
        #expect(droppedByLog == 0 && overflows == 0, "\(summary)")
        #expect(raw == logged, "\(summary); \(logged) edge and button events logged")
        #expect(written == all.count, "\(summary); \(all.count) events in the log")
        let flaggedAsChatter = all.filter { $0["detail"] as? String == #"{"chatter":true}"# }.count
        #expect(chatter > 100 && chatter <= flaggedAsChatter, "\(summary); \(flaggedAsChatter) logged as chatter")
        #expect(droppedByLineup == 0, "the lineup's pipe filled: \(summary)")
    }

    @Test func badFaultsAreRefusedInOneLine() async throws {
        let cases = [
            ("stick:B", "\"stick\" is not a fault (stuck, chatter, dead, sound-not-taken, sound-stalled, sound-error)"),
            ("stuck:Q", "no station \"Q\" (the stations are A, B, C, D, E, or 1 to 5)"),
            ("stuck:9", "no station \"9\""),
            ("dead", "no station: give KIND:STATION"),
            ("stuck:B@0", "\"0\" is not a trial: trials count from 1"),
            ("stuck:B@4-2", "\"4-2\" is not a range of trials"),
            ("stuck:B@30", "trial 30 is after the block's last (20)"),
            ("sound-stalled:B", "a sound fault names no station: give sound-stalled[@FIRST[-LAST]]"),
            ("sound-not-taken@0", "\"0\" is not a trial: trials count from 1"),
            ("sound-error@3-x", "\"3-x\" is not a range of trials"),
            ("sound-stalled@30", "trial 30 is after the block's last (20)"),
        ]
        for (fault, words) in cases {
            let (run, db) = try await block(["--fault", fault])
            #expect(run.status == 1, "\(fault)")
            #expect(run.stderr.hasPrefix("lineupd: --fault \(fault): \(words)"), "\(run.stderr)")
            #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: db), "\(fault): a log was written")
        }
        let clash = try await block(["--fault", "dead:B", "--fault", "stuck:2@3"])
        #expect(clash.run.stderr == "lineupd: --fault: two faults on station B in the same trials (dead, stuck)\n")
        let sound = try await block(["--fault", "sound-stalled@2-4", "--fault", "sound-not-taken@4"])
        #expect(
            sound.run.stderr
                == "lineupd: --fault: two faults on the sound in the same trials (sound-stalled, sound-not-taken)\n")
        let fast = try await block(["--fast", "--fault", "dead:B"])
        #expect(fast.run.status == 1 && fast.run.stderr.contains("not --fast"), "\(fast.run.stderr)")
    }
}

/// The dead sensor's block is the longest of them (24 trials, for the 20 searched trials the
/// silent flag waits for) and shares nothing with the others: a suite of its own, so it runs
/// beside them rather than after them.
@Suite("lineupd with a dead sensor", .ownThreads)
struct DeadSensorTests {
    let faults = SensorFaultTests()

    @Test func aDeadSensorIsReportedSilentAfterTwentySearchedTrials() async throws {
        let (run, db) = try await faults.block(["--trials", "24", "--seed", "7", "--fault", "dead:C"])
        #expect(run.status == 0, "\(run.stderr)")
        let all = try faults.events(db)
        // The dead line never reached the station.
        #expect(!all.contains { $0["kind"] as? String == "edge" && $0["station"] as? Int == 3 })
        let silent = all.filter { $0["kind"] as? String == "fault" }
        #expect(silent.count == 1, "\(silent)")
        #expect(silent.first?["station"] as? Int == 3)
        #expect(silent.first?["detail"] as? String == #"{"sensor":"silent"}"#)
        // At the end of the 20th trial in which the dog searched (visited some station): a
        // dog that went straight to a dead target searched nowhere the station could see.
        let lines = run.stdout.split(separator: "\n").filter { $0.hasPrefix("trial ") }
        #expect(lines.count == 24)
        let searched = lines.enumerated().filter { !$0.element.contains("no station visited") }.map { $0.offset + 1 }
        try #require(searched.count >= 20, "\(lines)")
        let trials = try SessionLog.openReader(path: db).trials()
        let twentieth = try #require(trials.first { $0.number == searched[19] })
        #expect(silent.first?["trial_id"] as? String == twentieth.id)
        #expect(
            faults.stderrLines(run.stderr, containing: "station C has not seen the dog").count == 1, "\(run.stderr)")
    }
}

/// The serving daemon: a stuck sensor in `status`, `lineupctl status` and `watch`; the log
/// disk's free space checked at each session start against the board's `[log]` thresholds.
@Suite("lineupd serving with broken sensors and a full disk", .serialized, .ownThreads)
struct ServingFaultTests {
    @Test func aStuckSensorIsFlaggedInStatusAndReachesWatchers() throws {
        // The dog never holds, so trial 2 runs to its time-out and B is found stuck in it.
        guard
            let daemon = try ServingStationTests.Daemon(
                speed: 30, extra: ["--fault", "stuck:B@2", "--sensitivity", "0", "--false-alert-rate", "0"])
        else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady())
        let client = daemon.client
        let watched = try #require(Watched(path: daemon.socket))
        _ = try client.startSession(
            SessionRequest(
                dog: "Rex", program: "research-5-station", step: "phase-3/1", trials: 3, seed: 5, unlabelled: true))
        #expect(try client.status().flaggedStations == [])
        try client.ready()
        #expect(eventually(10) { (try? client.status().trialsDone) == 1 }, "trial 1 never ended")
        try client.ready()
        #expect(
            eventually(10) { (try? client.status().flaggedStations) == [FlaggedStation(station: "B", fault: .stuck)] },
            "B never flagged: \(daemon.stderrSoFar)")
        // The flag is the engine's (published on the hot thread), the count the log feeder's (its
        // own thread, once it drains the fault's record): under load the count comes later.
        #expect(eventually(10) { (try? client.status().sensorFaults) == ["stuck": 1] }, "never counted")
        let shown = try lineupctl(["status"], environment: ["LINEUP_SOCKET": daemon.socket])
        #expect(
            shown.stdout.contains("Sensors     flagged: B stuck; faults since start: stuck 1"), "\(shown.stdout)")
        #expect(eventually(10) { (try? client.status().trialsDone) == 2 }, "trial 2 never ended")
        // B stays stuck: the third start is refused, and B keeps its name for what is wrong.
        try client.ready()
        #expect(eventually(10) { (try? client.status().sensorFaults?["active-at-start"]) == 1 })
        #expect(try client.status().flaggedStations == [FlaggedStation(station: "B", fault: .stuck)])
        try client.endSession(suggestions: nil)
        #expect(daemon.terminate().status == 0)
        #expect(watched.done.wait(timeout: .now() + 10) == .success)
        let faults = watched.lines.compactMap { line -> [String: String]? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String],
                object["kind"] == "fault"
            else { return nil }
            return object
        }
        #expect(faults.map { $0["fault"] } == ["stuck", "active-at-start"], "\(watched.lines)")
        #expect(faults.allSatisfy { $0["station"] == "B" }, "\(faults)")
        #expect(faults.first?["trial"] == "2", "\(faults)")
    }

    /// A simulated board with `[log]` thresholds; the vm board's lines and timing.
    func board(warn: Int, minimum: Int) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let vm = try String(contentsOf: root.appendingPathComponent("hardware/vm/vm.toml"), encoding: .utf8)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("board-\(UUID().uuidString).toml")
        try (vm + "\n[log]\nwarn_free_mb = \(warn)\nmin_free_mb = \(minimum)\n").write(
            to: path, atomically: true, encoding: .utf8)
        return path.path
    }

    /// The thresholds far above any real disk (10 TB), so the real filesystem is "full".
    @Test func aStationAlreadyActiveWhenTheSessionStartsRefusesTheFirstStart() throws {
        // A lid left on station A before the session: the new session's engine must know.
        guard let daemon = try ServingStationTests.Daemon(speed: 10, extra: ["--no-virtual-dog"]) else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady(dogs: ["Rex"]))
        let client = daemon.client
        try client.simulate(SimulatedInput(input: "A", active: true))
        usleep(100_000)  // the edge reaches the station before the session (the world's time)
        _ = try client.startSession(
            SessionRequest(dog: "Rex", program: "research-5-station", step: "phase-3/1", trials: 1, unlabelled: true))
        // The press is refused, and the reply says which station stops it.
        #expect {
            try client.ready()
        } throws: { error in
            "\(error)".contains("station A is active")
        }
        #expect(
            eventually(5) { (try? client.status().flaggedStations)?.contains { $0.station == "A" } == true },
            "the start was not refused for A")
        #expect(![StationState.searching, .holding].contains(try client.status().state))
        // Lifted, the next press starts the trial.
        try client.simulate(SimulatedInput(input: "A", active: false))
        try client.ready()
        #expect(
            eventually(5) { [StationState.searching, .holding].contains((try? client.status().state) ?? .idle) },
            "the trial did not start once A was clear")
        try client.abort()
        try client.endSession(suggestions: nil)
        #expect(daemon.terminate().status == 0)
    }

    @Test func aSessionIsRefusedBelowTheMinimumWithNothingWritten() throws {
        let config = try board(warn: 10_000_000, minimum: 10_000_000)
        guard let daemon = try ServingStationTests.Daemon(speed: 20, extra: ["--config", config]) else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady())
        let status = try daemon.client.status()
        let free = try #require(status.logFreeMegabytes)
        #expect(free < 10_000_000 && status.logMinFreeMegabytes == 10_000_000)
        let start = try lineupctl(
            [
                "session", "start", "--dog", "Rex", "--program", "research-5-station", "--step", "phase-3/1",
                "--unlabelled",
            ], environment: ["LINEUP_SOCKET": daemon.socket])
        #expect(start.status == 1)
        #expect(
            start.stderr.contains("MB free on \(daemon.directory) (the log's disk); a session needs 10000000 MB"),
            "\(start.stderr)")
        #expect(start.stderr.split(separator: "\n").count == 1, "\(start.stderr)")
        // lineupd's stderr reaches this process through a pipe read on another thread: the
        // reply can arrive before the line does.
        #expect(eventually(10) { daemon.stderrSoFar.contains("session refused: only") }, "\(daemon.stderrSoFar)")
        let shown = try lineupctl(["status"], environment: ["LINEUP_SOCKET": daemon.socket])
        #expect(shown.stdout.contains("MB free (below 10000000 MB: sessions are refused)"), "\(shown.stdout)")
        #expect(try daemon.client.status().state == .idle)
        #expect(daemon.terminate().status == 0)
        let reader = try SessionLog.openReader(path: daemon.db)
        #expect(try reader.sessions().isEmpty)
        #expect(try reader.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM program") } == 0)
    }

    @Test func aSessionStartsWithAWarningBelowTheWarningThreshold() throws {
        let config = try board(warn: 10_000_000, minimum: 0)
        guard let daemon = try ServingStationTests.Daemon(speed: 20, extra: ["--config", config]) else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady())
        let start = try lineupctl(
            [
                "session", "start", "--dog", "Rex", "--program", "research-5-station", "--step", "phase-3/1",
                "--unlabelled",
            ], environment: ["LINEUP_SOCKET": daemon.socket])
        #expect(start.status == 0, "\(start.stderr)")
        #expect(start.stdout.hasPrefix("Session "), "\(start.stdout)")
        #expect(start.stderr.hasPrefix("lineupctl: warning: only "), "\(start.stderr)")
        #expect(start.stderr.contains("[log] warn_free_mb is 10000000 MB"), "\(start.stderr)")
        #expect(start.stderr.split(separator: "\n").count == 1, "\(start.stderr)")
        // lineupd's stderr reaches this process through a pipe read on another thread: the
        // reply can arrive before the line does.
        #expect(eventually(10) { daemon.stderrSoFar.contains("lineupd: warning: only ") }, "\(daemon.stderrSoFar)")
        try daemon.client.endSession(suggestions: nil)
        let answer = try daemon.client.sessionStart(
            SessionRequest(dog: "Rex", program: "research-5-station", step: "phase-3/1", unlabelled: true))
        #expect(answer.warning?.contains("free some space before it fills") == true)
        #expect(daemon.terminate().status == 0)
        #expect(try SessionLog.openReader(path: daemon.db).sessions().count == 2)
    }
}
