import Foundation
import ReadingRows
import SessionLog
import StationControl
import Testing
import TrainingEngine

/// Issue 23: a program file can never bring the station down. Each file here killed lineupd at
/// a session start, or lineupctl at `program check` / `programs`, before the loader held every
/// number to the project's range: now each is refused in one line naming the key, and a
/// served station goes on clicking afterwards.
@Suite(.ownThreads) struct BrokenProgramTests {
    /// A small program; `replacing` swaps one of its lines (matched from its start).
    static func program(_ name: String, _ replacing: [String: String] = [:], mode: String = "automated") -> String {
        var lines = [
            "name = \"\(name)\"", "title = \"Broken\"",
            "[[phases]]", "id = \"p\"", "title = \"P\"",
            "[[phases.steps]]", "id = \"1\"", "title = \"S\"", "mode = \"\(mode)\"",
            "lineup = { stations = 5, targets = 1, controls = 4 }",
            "hold_s = 2.0", "inter_trial_s = 5",
            "criterion = { kind = \"consecutive-correct\", n = 30 }",
            "[[phases.steps.exercises]]", "id = \"1\"", "title = \"E\"", "instruction = \"I\"",
            "duration_s = 30", "repeats = 4", "trials = 20",
        ]
        for (key, line) in replacing {
            lines[lines.firstIndex { $0.hasPrefix(key + " ") }!] = line
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The broken files, by name, and the key each refusal must name.
    static let broken: [(name: String, text: String, key: String)] = [
        ("trials", program("trials", ["trials": "trials = 1000000000"]), "exercises[0].trials"),
        (
            "repeats", program("repeats", ["repeats": "repeats = 1000000000"], mode: "trainer-led"),
            "exercises[0].repeats"
        ),
        ("duration", program("duration", ["duration_s": "duration_s = 1e300"]), "exercises[0].duration_s"),
        ("hold", program("hold", ["hold_s": "hold_s = 1e300"]), "steps[0].hold_s"),
        ("interval", program("interval", ["inter_trial_s": "inter_trial_s = 1e300"]), "steps[0].inter_trial_s"),
        (
            "controls",
            program("controls", ["lineup": "lineup = { stations = 5, targets = 1, controls = 9223372036854775807 }"]),
            "lineup.controls"
        ),
        (
            "unmeetable",
            program(
                "unmeetable", ["criterion": "criterion = { kind = \"consecutive-correct\", n = 9223372036854775807 }"]),
            "criterion.n"
        ),
        (
            "one-station",
            program("one-station", ["lineup": "lineup = { stations = 1, targets = 1, max_same_station_in_a_row = 2 }"]),
            "lineup.max_same_station_in_a_row"
        ),
        ("header", "name = \"header\"\ntitle = \"x\"\n[/phases]\n", "line 3, column 2"),
    ]

    static func directory() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("broken-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for file in broken {
            try file.text.write(toFile: "\(directory)/\(file.name).toml", atomically: true, encoding: .utf8)
        }
        return directory
    }

    @Test func programCheckAndProgramsRefuseEachInOneLineAndNeverCrash() throws {
        let directory = try Self.directory()
        for file in Self.broken {
            let path = "\(directory)/\(file.name).toml"
            let checked = try lineupctl(["program", "check", path, "--stations", "5"])
            #expect(checked.status == 1 && checked.stdout.isEmpty, "\(file.name): \(checked.stderr)")
            #expect(checked.stderr.hasPrefix("lineupctl: \(path): "), "\(checked.stderr)")
            #expect(checked.stderr.contains(file.key), "\(file.name): \(checked.stderr)")
            #expect(checked.stderr.split(separator: "\n").count == 1, "\(checked.stderr)")
        }
        let listed = try lineupctl(["programs", "--programs", directory])
        #expect(listed.status == 0, "\(listed.stderr)")
        for file in Self.broken {
            let line = try #require(listed.stdout.split(separator: "\n").first { $0.hasPrefix(file.name + " ") })
            #expect(line.contains("DOES NOT LOAD: \(directory)/\(file.name).toml: "), "\(line)")
            #expect(line.contains(file.key), "\(line)")
        }
    }

    @Test func aServedStationRefusesEveryBrokenProgramAndGoesOnClicking() throws {
        let directory = try Self.directory()
        guard let daemon = try ServingStationTests.Daemon(speed: 30, extra: ["--programs", directory]) else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady(dogs: ["Rex"]))
        let client = daemon.client
        for file in Self.broken {
            let mode: TrainingMode? = file.name == "repeats" ? .trainerLed : nil
            do {
                _ = try client.startSession(
                    SessionRequest(dog: "Rex", program: file.name, step: "p/1", mode: mode, unlabelled: true))
                Issue.record("\(file.name) started a session")
                try? client.endSession(suggestions: nil)
            } catch {
                let message = "\(error)"
                #expect(message.contains(file.key) && !message.contains("\n"), "\(file.name): \(message)")
            }
            #expect(daemon.process.isRunning, "lineupd died on \(file.name): \(daemon.stderrSoFar)")
            #expect(try client.status().state == .idle)
        }
        // Requests with numbers no block can have are refused by the station itself.
        var long = SessionRequest(dog: "Rex", program: "research-5-station", step: "phase-3/1", unlabelled: true)
        long.durationSeconds = 1e300
        for request in [
            SessionRequest(
                dog: "Rex", program: "research-5-station", step: "phase-3/1", trials: 1_000_000_000, unlabelled: true),
            SessionRequest(
                dog: "Rex", program: "research-5-station", step: "phase-3/1", trials: Int.min, unlabelled: true),
            long,
        ] {
            #expect(throws: ControlClientError.self) { _ = try client.startSession(request) }
        }
        #expect(daemon.process.isRunning, "\(daemon.stderrSoFar)")

        // Still a station: a block runs, and the station clicks the dog's hits.
        let id = try client.startSession(
            SessionRequest(
                dog: "Rex", program: "research-5-station", step: "phase-3/1", trials: 8, seed: 23, unlabelled: true))
        // A guess naming station Int.min: `n - 1` trapped lineupd.
        let guessed = try lineupctl(
            ["guess", "--", "-9223372036854775808"], environment: ["LINEUP_SOCKET": daemon.socket])
        #expect(guessed.status == 1 && guessed.stderr.contains("no station"), "\(guessed.stderr)")
        #expect(daemon.process.isRunning, "\(daemon.stderrSoFar)")
        for trial in 1...8 {
            try client.ready()
            #expect(eventually(20) { (try? client.status().trialsDone) == trial }, "trial \(trial) never ended")
        }
        try client.endSession(suggestions: nil)
        #expect(daemon.terminate().status == 0)
        let reader = try SessionLog.openReader(path: daemon.db)
        let hits = try reader.trials().filter { $0.outcome == .hit }.count
        let clicks = try reader.events(LogFilter(sessionId: id, eventKind: .click)).count
        #expect(hits > 0 && clicks >= hits, "\(hits) hits, \(clicks) clicks")
    }
}
