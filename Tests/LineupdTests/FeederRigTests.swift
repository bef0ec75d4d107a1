import Foundation
import ProgramFiles
import ReadingRows
import SessionLog
import StationControl
import Testing
import TrainingEngine

/// The shipped `olfactometer-rig` program on a board with a `[feeder]`, run by the built
/// lineupd on its simulated lineup with the virtual dog: the trials start by themselves
/// (`ready = "auto"`), and each click is followed by one feeder pulse in the log, at the
/// board's delay and width, in the click's trial.
@Suite("the feeder on an unattended rig", .serialized, .ownThreads)
struct FeederRigTests {
    static let board = """
        [board]
        name = "olfactometer"
        [[stations]]
        name = "A"
        line = "GPIO17"
        output = "GPIO12"
        [[stations]]
        name = "B"
        line = "GPIO27"
        output = "GPIO13"
        [[stations]]
        name = "C"
        line = "GPIO22"
        output = "GPIO16"
        [feeder]
        line = "GPIO19"
        delay_ms = 50
        pulse_ms = 30
        """

    @Test func theShippedProgramLoadsAsAnUnattendedRig() throws {
        let program = try #require(try Program.builtin(named: "olfactometer-rig"))
        let steps = program.phases.flatMap(\.steps)
        #expect(steps.count == 2)
        for step in steps {
            #expect(step.mode == .automated)
            #expect(step.ready == .auto)
        }
    }

    @Test func eachClickIsFollowedByOneFeederPulseInTheLog() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("feeder-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let boardPath = directory.appendingPathComponent("station.toml").path
        try Self.board.write(toFile: boardPath, atomically: true, encoding: .utf8)
        guard
            let daemon = try ServingStationTests.Daemon(
                speed: 30, extra: ["--config", boardPath, "--device", "null"])
        else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady(dogs: ["Aino"]))
        let client = daemon.client
        _ = try client.startSession(
            SessionRequest(
                dog: "Aino", program: "olfactometer-rig", step: "target/1", trials: 4, seed: 5, unlabelled: true))
        // Nobody presses ready: the block runs out by itself.
        #expect(eventually(60) { (try? client.status().trialsDone) == 4 }, "the block did not finish by itself")
        try client.endSession(suggestions: nil)
        #expect(daemon.terminate().status == 0)

        let reader = try SessionLog.openReader(path: daemon.db)
        let clicks = try reader.events(LogFilter(eventKind: .click))
        let fed = try reader.events(LogFilter(eventKind: .feeder))
        #expect(!clicks.isEmpty, "the virtual dog earned no click")
        #expect(fed.count == clicks.count, "one pulse per click (the trials are seconds apart)")
        for pulse in fed {
            let detail = try EventDetail.decode(FeederDetail.self, from: try #require(pulse.detail))
            let click = try #require(clicks.first { $0.kernelNs == detail.clickEdgeNs }, "a pulse after no click")
            #expect(pulse.trialId == click.trialId)
            #expect(pulse.value == 1, "the simulated lineup's feeder line was set")
            #expect(try #require(pulse.kernelNs) - detail.clickEdgeNs >= 50_000_000)
            #expect(try #require(pulse.durationNs) >= 30_000_000)
        }
    }
}
