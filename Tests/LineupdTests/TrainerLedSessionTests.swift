import Foundation
import Glibc
import ReadingRows
import SessionLog
import StationControl
import Testing
import TrainingEngine

/// The trainer's session end to end: the real lineupd (simulated lineup, no virtual dog), the
/// nose put at chosen stations and the clicker and error buttons pressed by hand through
/// `simulate`, and the rounds read back through `session show --json`, `stats` and `export`.
@Suite("a trainer-led session, round by round", .serialized, .ownThreads)
struct TrainerLedSessionTests {
    /// A simulated station moved only by hand, with the dog Aino and the target sample T-1.
    static func station() throws -> ServingStationTests.Daemon? {
        guard let daemon = try ServingStationTests.Daemon(speed: 10, extra: ["--no-virtual-dog"]) else { return nil }
        #expect(daemon.waitReady(dogs: ["Aino"]))
        _ = try daemon.client.addSample(SampleEntry(label: "T-1", kind: .target))
        return daemon
    }

    @Test func roundsAreTrialsWithTheirSamplesInEveryView() throws {
        guard let daemon = try Self.station() else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        let client = daemon.client
        let env = ["LINEUP_SOCKET": daemon.socket]
        // study's target-scent/1: the target and one empty container, on stations A and B of
        // the five; each repetition lasts 30 s (3 s at speed 10).
        let start = try lineupctl(
            [
                "session", "start", "--dog", "Aino", "--program", "study", "--step", "target-scent/1", "--mode",
                "trainer-led", "--sample", "T-1", "--seed", "5", "--duration", "30", "--json",
            ], environment: env)
        #expect(start.status == 0, "\(start.stderr)")
        let session = try #require(try? JSONDecoder().decode(SessionStarted.self, from: Data(start.stdout.utf8)))
            .session

        /// Runs one repetition: the nose at `at` (a station name, or nil), then the presses.
        func round(_ n: Int, noseAt pick: (String) -> String?, presses: [String]) throws -> String {
            let layout = try client.layout(view: .handler)
            // The step's two containers only: C, D and E are unused, never blanks.
            #expect(layout.map(\.station) == ["A", "B"])
            let target = try #require(layout.first { $0.kind == .target })
            #expect(target.sample == "T-1")
            try client.ready()
            #expect(eventually(10) { (try? client.status().exercise) == n }, "repetition \(n) never started")
            // A second press during a round means nothing (the next round keeps its own set-up).
            // It is refused, saying so: the reply is the engine's answer.
            if n == 1 {
                #expect(throws: ControlClientError.self) { try client.ready() }
                let again = try lineupctl(["ready"], environment: env)
                #expect(again.status == 1 && again.stderr.contains("repetition 1 of 4 is running"), "\(again.stderr)")
            }
            let station = pick(target.station)
            if let station { try client.simulate(SimulatedInput(input: station, active: true)) }
            usleep(100_000)  // the nose settles at the station (a world's time, not a check)
            for button in presses {
                let pressed = try lineupctl(["simulate", button, "press"], environment: env)
                #expect(pressed.status == 0, "\(pressed.stderr)")
            }
            if let station { try client.simulate(SimulatedInput(input: station, active: false)) }
            #expect(eventually(15) { (try? client.status().exercisesDone) == n }, "repetition \(n) never ended")
            return target.station
        }
        let other: (String) -> String = { $0 == "A" ? "B" : "A" }
        // 1: clicked at the target (hit); 2: error press at the empty one (false alert);
        // 3: clicked at the empty one (false alert); 4: nothing pressed (miss).
        let targets = [
            try round(1, noseAt: { $0 }, presses: ["clicker"]),
            try round(2, noseAt: other, presses: ["error"]),
            try round(3, noseAt: other, presses: ["clicker"]),
            try round(4, noseAt: { _ in nil }, presses: []),
        ]
        let status = try client.status()
        #expect(status.exercisesDone == 4 && status.exerciseRepeats == 4)
        // Each repetition's end was heard: a timer cue through the same ALSA stream as the click.
        #expect(
            status.cues == 4 && status.failedCues == 0, "cues \(status.cues ?? 0), failed \(status.failedCues ?? 0)")
        try client.endSession(suggestions: "shorter rounds")
        let note = try lineupctl(["session", "note", String(session.prefix(8)), "a windy day"], environment: env)
        #expect(note.status == 0, "\(note.stderr)")
        #expect(daemon.terminate().status == 0)

        // session show --json: four rounds, each with its layout, samples and outcome.
        let shown = try lineupctl(["session", "show", session, "--db", daemon.db, "--json"])
        #expect(shown.status == 0, "\(shown.stderr)")
        let details = try #require(
            try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
        let trials = try #require(details["trials"] as? [[String: Any]])
        #expect(trials.map { $0["outcome"] as? String } == ["hit", "false-alert", "false-alert", "miss"])
        for (trial, target) in zip(trials, targets) {
            let layout = try #require(trial["layout"] as? [[String: Any]])
            #expect(layout.count == 2)
            let targetStation = target == "A" ? 1 : 2
            let slot = try #require(layout.first { ($0["station"] as? Int) == targetStation })
            #expect(slot["sample"] as? String == "T-1")
            #expect(slot["kind"] as? String == "target")
        }
        #expect(trials[0]["indicated_station"] as? Int == (targets[0] == "A" ? 1 : 2))
        #expect(trials[1]["indicated_station"] as? Int == (targets[1] == "A" ? 2 : 1))
        #expect((details["comments"] as? [String]) == ["a windy day"])
        #expect((details["improvement_suggestions"] as? [String]) == ["shorter rounds"])
        let settings = try #require(details["settings"] as? String)
        #expect(settings.contains(#""unused_stations":"C,D,E""#), "\(settings)")

        // stats: the same rounds counted by the one implementation.
        let stats = try lineupctl(["stats", "--dog", "Aino", "--db", daemon.db, "--json"])
        #expect(stats.status == 0, "\(stats.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [[String: Any]])
        let presentations = try #require(rows.first?["presentations"] as? [String: Any])
        #expect(presentations["hits"] as? Int == 1)
        #expect(presentations["misses"] as? Int == 3)

        // export: four trial rows, the sample in the target's column, no third station.
        let export = try lineupctl(["export", "--what", "trials", "--db", daemon.db])
        #expect(export.status == 0, "\(export.stderr)")
        let lines = export.stdout.split(whereSeparator: \.isNewline)
        #expect(lines.count == 5)
        #expect(lines.first?.contains("station_2_sample") == true)
        #expect(lines.first?.contains("station_3_") == false)
        #expect(lines.dropFirst().allSatisfy { $0.contains("T-1") })

        // The presses are events of their round, with the sample at the nose's station.
        let reader = try SessionLog.openReader(path: daemon.db)
        let events = try reader.events(LogFilter(sessionId: session), limit: nil)
        let presses = events.filter {
            ($0.detail ?? "").contains("manual_click") || ($0.detail ?? "").contains("error_mark")
        }
        #expect(presses.count == 3)
        #expect(presses.allSatisfy { $0.trialId != nil })
        #expect((presses.first?.detail ?? "").contains("sample"))
    }

    /// docs/trainer.md as a trainer follows it: every line of its shell blocks in the page's
    /// order, the station started by the page's own `lineupd` line (in a directory of its own,
    /// without the real-time request and with the `null` sound device), the page's `export`
    /// kept, and `3f2a9c1e` read as the id `session start` printed. Each command must succeed
    /// with nothing on stderr, and what the page says of them must be what they do: the
    /// status line as shown, the station at life's pace, the round ended by the session's end
    /// logged as aborted, the suggestions and the note kept.
    @Test func theWalkThroughRunsAsWritten() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let page = try String(contentsOf: root.appendingPathComponent("docs/trainer.md"), encoding: .utf8)
        let directory =
            FileManager.default.temporaryDirectory.appendingPathComponent("walk-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let paths = ["/tmp/lineup.sock": directory + "/lineup.sock", "/tmp/lineup.db": directory + "/lineup.db"]
        var environment: [String: String] = [:]
        var station: Process? = nil
        defer {
            if let station, station.isRunning {
                kill(station.processIdentifier, SIGTERM)
                station.waitUntilExit()
            }
        }
        var session: String? = nil
        var outputs: [(command: String, stdout: String)] = []
        var lines: [String] = []
        var inShell = false
        for raw in page.split(separator: "\n", omittingEmptySubsequences: false) {
            if raw.hasPrefix("```") {
                inShell = !inShell && raw == "```sh"
            } else if inShell, !raw.trimmingCharacters(in: .whitespaces).isEmpty {
                lines.append(ReadmeExamplesTests.stripComment(String(raw)))
            }
        }
        #expect(lines.count > 15, "the page's commands were not found")
        for written in lines {
            var line = written
            for (from, to) in paths { line = line.replacingOccurrences(of: from, with: to) }
            if let session { line = line.replacingOccurrences(of: "3f2a9c1e", with: String(session.prefix(8))) }
            var words = ReadmeExamplesTests.words(line)
            switch words.first {
            case "lineupd" where words.last == "&":
                #expect(station == nil, "the page starts a second station")
                words.removeFirst()
                words.removeLast()
                let process = Process()
                process.executableURL = root.appendingPathComponent(".build/debug/lineupd")
                process.arguments = words + ["--no-realtime", "--device", "null"]
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                station = process
                let socket = try #require(words.firstIndex(of: "--socket").map { words[$0 + 1] })
                #expect(
                    eventually(10) { (try? ControlClient(path: socket).status()) != nil },
                    "the page's station never answered")
            case "export":
                for pair in words.dropFirst() {
                    let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                    if parts.count == 2 { environment[parts[0]] = parts[1] }
                }
            case "lineupctl":
                let result = try lineupctl(Array(words.dropFirst()), environment: environment)
                #expect(result.status == 0 && result.stderr.isEmpty, "docs/trainer.md: \(written)\n\(result.stderr)")
                outputs.append((written, result.stdout))
                if words.starts(with: ["lineupctl", "session", "start"]) {
                    // "Session 2d0b1dc7-… started for Rex (trainer-led); …"
                    session = result.stdout.split(separator: " ").dropFirst().first.map(String.init)
                }
            default:
                Issue.record("docs/trainer.md: a line this test cannot run as written: \(written)")
            }
        }
        #expect(station != nil, "the page never starts its station")

        // The status the page shows is the status printed, but for the seconds, which are
        // the round's 20 less the moment it took to ask.
        let block = try #require(
            page.components(separatedBy: "```text\n").dropFirst().first?.components(separatedBy: "\n```").first)
        let shown = block.split(separator: "\n").map(String.init)
        let status = try #require(outputs.first { $0.command == "lineupctl status" }?.stdout)
        let printed = status.split(separator: "\n").map(String.init)
        #expect(shown.count == 2, "\(block)")
        let state = try #require(printed.first { $0.hasPrefix("State ") }, "\(status)")
        #expect(state == shown.first, "printed: \(state)\npage: \(shown)")
        let time = try #require(printed.first { $0.hasPrefix("Time left ") }, "\(status)")
        func withoutSeconds(_ line: String) -> String {
            line.replacingOccurrences(of: #"\d+ s$"#, with: "N s", options: .regularExpression)
        }
        #expect(withoutSeconds(time) == withoutSeconds(shown.last ?? ""), "printed: \(time)\npage: \(shown)")
        let left = time.split(separator: " ").dropLast().last.flatMap { Int($0) }
        #expect(left.map { (11...20).contains($0) } == true, "\(time)")

        // Life's pace: the session ran at speed 1 (the station's clock is the program's).
        let show = try #require(outputs.first { $0.command.hasPrefix("lineupctl session show") }?.stdout)
        #expect(show.contains(#""speed":"1.0""#), "\(show)")
        #expect(show.contains("1 trial: 0 hits, 0 misses, 0 false alerts, 0 correct rejections, 1 aborted"), "\(show)")
        #expect(
            show.contains("Rex was tired after the car ride") && show.contains("Reward faster; fresh container lids"))
    }

    /// The page's simulated trainer: with the virtual dog on, it presses the clicker when the
    /// dog holds at the target and the error button when it holds at another station. A dog
    /// that holds only at the target earns four hits, each a click at the target; one that
    /// holds only elsewhere earns four false alerts, each an error press there.
    @Test func theSimulatedTrainerPressesAsThePageSays() async throws {
        // The two dogs' stations share nothing: they run side by side, each on its own log.
        var stations: [(daemon: ServingStationTests.Daemon, dog: [String], outcome: TrialOutcome, press: String)] = []
        var sessions: [String] = []
        defer { for station in stations where station.daemon.process.isRunning { _ = station.daemon.terminate() } }
        for (dog, outcome, press) in [
            (["--sensitivity", "1", "--false-alert-rate", "0"], TrialOutcome.hit, "manual_click"),
            (["--sensitivity", "0", "--false-alert-rate", "1"], TrialOutcome.falseAlert, "error_mark"),
        ] {
            guard let daemon = try ServingStationTests.Daemon(speed: 5, extra: dog) else { return }
            stations.append((daemon, dog, outcome, press))
            #expect(daemon.waitReady(dogs: ["Aino"]))
            // 10 s rounds, 2 s at speed 5: the dog's slowest search of two stations takes 1.3 s.
            var request = SessionRequest(dog: "Aino", program: "study", step: "target-scent/1", mode: .trainerLed)
            request.durationSeconds = 10
            request.seed = 3
            sessions.append(try daemon.client.startSession(request))
        }
        for round in 1...4 {
            for station in stations { try station.daemon.client.ready() }
            for station in stations {
                let client = station.daemon.client
                let done = await eventuallyAwaited(15) { (try? client.status().exercisesDone) == round }
                #expect(done, "round \(round), \(station.dog)")
            }
        }
        for (station, session) in zip(stations, sessions) {
            let (daemon, dog, outcome, press) = station
            try daemon.client.endSession(suggestions: nil)
            #expect(daemon.terminate().status == 0)
            let reader = try SessionLog.openReader(path: daemon.db)
            let rounds = try reader.trials(LogFilter(sessionId: session))
            #expect(rounds.map(\.outcome) == Array(repeating: outcome, count: 4), "\(dog)")
            let presses = try reader.events(LogFilter(sessionId: session), limit: nil).filter {
                ($0.detail ?? "").contains("manual_click") || ($0.detail ?? "").contains("error_mark")
            }
            #expect(presses.count == 4 && presses.allSatisfy { ($0.detail ?? "").contains(press) }, "\(presses)")
            // Each press was where the dog held: the round's indicated station.
            #expect(Set(presses.compactMap(\.station)) == Set(rounds.compactMap(\.indicatedStation)))
        }
    }

    @Test func everyExerciseOfTheFirstPhaseDoneGraduatesIt() throws {
        // A dog that holds only at the target, and the simulated trainer's click there: every
        // round a hit. Rounds done are not rounds done correctly (issue 32): rounds without a
        // click (misses) no longer complete an exercise.
        guard
            let daemon = try ServingStationTests.Daemon(
                speed: 30, extra: ["--sensitivity", "1", "--false-alert-rate", "0"])
        else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady(dogs: ["Aino"]))
        let client = daemon.client
        // study's "indicate" phase: step 1 (exercises 1 and 2) and step 2 (exercise 1), each
        // exercise four correct rounds; 10 s rounds, 0.33 s at speed 30.
        var milestones: [String] = []
        for (step, exercise) in [("indicate/1", "1"), ("indicate/1", "2"), ("indicate/2", "1")] {
            // Sessions of four rounds until the exercise's last four were correct (the virtual
            // dog may miss a round's time now and then); at most three.
            var phases: [[String: Any]] = []
            for _ in 1...3 {
                var request = SessionRequest(
                    dog: "Aino", program: "study", step: step, exercise: exercise, mode: .trainerLed)
                request.durationSeconds = 10
                _ = try client.startSession(request)
                for round in 1...4 {
                    try client.ready()
                    #expect(eventually(10) { (try? client.status().exercisesDone) == round }, "\(step) round \(round)")
                }
                try client.endSession(suggestions: nil)
                let progress = try lineupctl(["progress", "--dog", "Aino", "--db", daemon.db, "--json"])
                phases = try #require(
                    try JSONSerialization.jsonObject(with: Data(progress.stdout.utf8)) as? [[String: Any]])
                let steps = phases.first?["steps"] as? [[String: Any]] ?? []
                let entry = steps.first { $0["step"] as? String == String(step.split(separator: "/")[1]) }
                let done = (entry?["exercises"] as? [[String: Any]] ?? []).first {
                    $0["exercise"] as? String == exercise
                }
                if let done, done["in_a_row"] as? Int == done["required"] as? Int { break }
            }
            milestones.append("\(phases.first?["progress_percent"] as? Double ?? -1)")
        }
        // Half of step 1 (50 % of the phase's first half), all of step 1, then the phase.
        #expect(milestones == ["25.0", "50.0", "100.0"])
        #expect(daemon.terminate().status == 0)
        let shown = try lineupctl(["progress", "--dog", "Aino", "--db", daemon.db])
        #expect(shown.status == 0, "\(shown.stderr)")
        let lines = shown.stdout.split(whereSeparator: \.isNewline).map(String.init)
        let indicate = try #require(lines.first { $0.hasPrefix("indicate ") })
        #expect(indicate.contains("100 %") && indicate.contains("2/2") && indicate.contains("yes, "), "\(indicate)")
        // Every phase of the program is shown, those not started at 0 %.
        #expect(lines.contains { $0.hasPrefix("target-scent ") && $0.contains(" 0 %") }, "\(shown.stdout)")
        #expect(lines.contains { $0.hasPrefix("discrimination ") && $0.contains(" 0 %") })
        // Issue 37: the next step, by the same verdicts (the page's queue starts the same).
        #expect(
            lines.contains(
                "Next step: target-scent/1 (Target and one empty container), exercise 1, trainer-led, 1 to 4 repetitions"
            ),
            "\(shown.stdout)")
        let reader = try SessionLog.openReader(path: daemon.db)
        let phase = try #require(try reader.progress(dogId: reader.resolveDog("Aino")).first)
        #expect(phase.graduated != nil)
        #expect(phase.steps.map(\.passed).allSatisfy { $0 != nil })
    }

    @Test func theStepsContainersCanBeAnyOfTheBoardsStations() throws {
        guard let daemon = try Self.station() else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        let client = daemon.client
        let env = ["LINEUP_SOCKET": daemon.socket]
        // Two containers on stations C and E of the five; a wrong count or name is refused.
        for (stations, message) in [(["C"], "uses 2 station(s); 1 were named"), (["C", "Q"], "no station \"Q\"")] {
            let refused = try lineupctl(
                [
                    "session", "start", "--dog", "Aino", "--program", "study", "--step", "target-scent/1", "--mode",
                    "trainer-led",
                ] + stations.flatMap { ["--station", $0] }, environment: env)
            #expect(refused.status == 1 && refused.stderr.contains(message), "\(refused.stderr)")
        }
        let start = try lineupctl(
            [
                "session", "start", "--dog", "Aino", "--program", "study", "--step", "target-scent/1", "--mode",
                "trainer-led", "--sample", "T-1", "--seed", "5", "--station", "C", "--station", "5",
            ], environment: env)
        #expect(start.status == 0, "\(start.stderr)")
        let layout = try client.layout(view: .handler)
        #expect(layout.map(\.station) == ["C", "E"])
        let target = try #require(layout.first { $0.kind == .target })
        try client.ready()
        #expect(eventually(10) { (try? client.status().exercise) == 1 })
        // The nose at A, a station the step does not use: logged, never part of the round.
        try client.simulate(SimulatedInput(input: "A", active: true))
        try client.simulate(SimulatedInput(input: "A", active: false))
        try client.simulate(SimulatedInput(input: target.station, active: true))
        usleep(100_000)
        try client.simulate(SimulatedInput(input: "clicker", active: true))
        try client.simulate(SimulatedInput(input: "clicker", active: false))
        try client.simulate(SimulatedInput(input: target.station, active: false))
        #expect(eventually(15) { (try? client.status().exercisesDone) == 1 })
        try client.endSession(suggestions: nil)
        #expect(daemon.terminate().status == 0)
        let reader = try SessionLog.openReader(path: daemon.db)
        let trial = try #require(try reader.trials().first)
        #expect(trial.outcome == .hit)
        let targetNumber = target.station == "C" ? 3 : 5
        #expect(trial.indicatedStation == targetNumber)
        let events = try reader.events(LogFilter(), limit: nil)
        #expect(events.contains { $0.kind == "edge" && $0.station == 1 })
        #expect(!events.contains { $0.kind == "sniff" && $0.station == 1 })
        #expect(events.contains { $0.kind == "sniff" && $0.station == targetNumber })
    }
}

/// Issue 37: `session start --repetitions N` through lineupctl: outside the program's bounds
/// refused in one line naming the step and the bounds (exit 1, nothing started); within them,
/// the session's rounds are N.
@Suite("a trainer-led session's repetitions", .serialized, .ownThreads)
struct RepetitionsCommandTests {
    @Test func theRepetitionsAreChosenWithinTheProgramsBounds() throws {
        guard let daemon = try TrainerLedSessionTests.station() else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        let env = ["LINEUP_SOCKET": daemon.socket]
        let start = [
            "session", "start", "--dog", "Aino", "--program", "study", "--step", "target-scent/1", "--sample", "T-1",
            "--repetitions",
        ]
        let refused = try lineupctl(start + ["6"], environment: env)
        #expect(refused.status == 1, "\(refused.stdout)")
        #expect(
            refused.stderr.trimmingCharacters(in: .newlines)
                == "lineupctl: step target-scent/1 of study: exercise 1 may be done 1 to 4 times in a session (the program's repeats), not 6 (bad-request)",
            "\(refused.stderr)")
        #expect(try daemon.client.status().session == nil)
        let started = try lineupctl(start + ["2"], environment: env)
        #expect(started.status == 0, "\(started.stderr)")
        let status = try daemon.client.status()
        #expect(status.trials == 2 && status.exerciseRepeats == 2, "\(status)")
        try daemon.client.endSession(suggestions: nil)
        #expect(daemon.terminate().status == 0)
    }
}
