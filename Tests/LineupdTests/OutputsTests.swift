import Foundation
import ReadingRows
import SessionLog
import StationControl
import Testing
import TrainingEngine

/// The board's outputs driven by lineupd: the buzzer clicks beside ALSA, and a step's
/// stations' outputs (valves here) open while the dog searches; an unattended rig's trials
/// start by themselves (`ready = "auto"`).
@Suite("outputs and unattended blocks", .serialized, .ownThreads)
struct OutputsTests {
    static let rig = """
        name = "rig"
        title = "Olfactometer rig"
        [[phases]]
        id = "valves"
        title = "Valves"
        [[phases.steps]]
        id = "1"
        title = "Three valves"
        mode = "automated"
        ready = "auto"
        station_outputs = "search"
        inter_trial_s = 3
        lineup = { stations = 3, targets = 1, blanks = 2 }
        [[phases.steps.exercises]]
        id = "1"
        title = "Block of 3"
        instruction = "Nothing to load: the valves present the odours."
        duration_s = 10
        trials = 3
        """

    @Test func valvesOpenWhileTheDogSearchesAndTheBuzzerClicksBesideALSA() throws {
        let programs = FileManager.default.temporaryDirectory.appendingPathComponent("programs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: programs, withIntermediateDirectories: true)
        try Self.rig.write(to: programs.appendingPathComponent("rig.toml"), atomically: true, encoding: .utf8)
        let board = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("hardware/pi4-5-stations.toml").path
        guard
            let daemon = try ServingStationTests.Daemon(
                speed: 10,
                extra: ["--no-virtual-dog", "--config", board, "--device", "null", "--programs", programs.path])
        else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady(dogs: ["Aino"]))
        let client = daemon.client
        #expect(try client.status().outputsOn == [])
        _ = try client.startSession(
            SessionRequest(dog: "Aino", program: "rig", step: "valves/1", seed: 3, unlabelled: true))
        // No ready press: the first trial starts by itself, its three valves open (D and E,
        // unused by the step, stay shut).
        #expect(
            eventually(10) { [StationState.searching, .holding].contains((try? client.status().state) ?? .idle) },
            "no trial started"
        )
        #expect(try client.status().outputsOn == ["A", "B", "C"])
        let target = try #require(try client.layout(view: .assistant).first { $0.kind == .target })
        try client.simulate(SimulatedInput(input: target.station, active: true))
        #expect(eventually(10) { (try? client.status().clicks) == 1 }, "no click for the held target")
        try client.simulate(SimulatedInput(input: target.station, active: false))
        // The click sounded through ALSA and the buzzer at once.
        #expect(eventually(5) { (try? client.status().buzzerPulses) == 1 })
        // Between trials the valves are shut; the other two trials run out on their own.
        #expect(eventually(5) { (try? client.status().outputsOn) == [] })
        #expect(eventually(20) { (try? client.status().trialsDone) == 3 }, "the block did not finish by itself")
        #expect(try client.status().outputsOn == [])
        try client.endSession(suggestions: nil)
        #expect(daemon.terminate().status == 0)
        let reader = try SessionLog.openReader(path: daemon.db)
        let trials = try reader.trials()
        #expect(trials.count == 3)
        #expect(try reader.eventCount(LogFilter(eventKind: .button)) == 0)  // nobody pressed ready
    }
}
