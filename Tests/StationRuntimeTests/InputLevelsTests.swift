import Foundation
import StationConfig
import StationControl
import Testing

@testable import StationIO
@testable import StationRuntime

/// `status`'s live levels: the simulated station's real hot loop reads a nose put at a station,
/// and `status` says it is active since the edge's own (virtual) timestamp, then clear again;
/// while a double-blind session runs, the stations' levels are withheld and the buttons' stay.
@Suite(.serialized) struct InputLevelsTests {
    /// A station with no dog on the simulated board, clicking into ALSA's null device.
    static func station() throws -> (StationService, SimulatedLineup, String) {
        var board = StationConfiguration.simulated()
        board.audio.device = "null"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("levels-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let lineup = try SimulatedLineup(lineCount: InputMap(configuration: board).count)
        let player = try ClickPlayer(audio: board.audio, keepTrying: false)
        let service = try StationService(
            options: StationService.Options(
                board: board, databasePath: directory.appendingPathComponent("lineup.db").path, realtime: false,
                printTrials: false),
            source: lineup, simulated: lineup, player: player)
        try service.start()
        return (service, lineup, directory.path)
    }

    /// Waits (bounded) for the hot thread to have read what was injected: the check is the condition.
    static func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = MonotonicClock.now() + 10_000_000_000
        while MonotonicClock.now() < deadline {
            if condition() { return true }
            usleep(2_000)
        }
        return condition()
    }

    static func level(_ status: StationStatus, _ input: String) -> InputLevel? {
        status.inputLevels?.first { $0.input == input }
    }

    @Test func aNoseAtAStationReadsActiveThenClear() throws {
        let (service, lineup, _) = try Self.station()
        defer { service.shutdown() }
        let before = service.status()
        #expect(
            before.inputLevels?.map(\.input) == ["A", "B", "C", "D", "E", "clicker", "error", "ready"],
            "\(before.inputLevels ?? [])")
        #expect(before.inputLevels?.allSatisfy { !$0.active } == true)
        #expect(before.stationLevelsWithheld == nil)

        // The nose arrives at C, stamped 5 s ago: "since" is the edge's time, not when status asked.
        let arrived = MonotonicClock.now() - 5_000_000_000
        #expect(lineup.inject(line: 2, active: true, at: arrived))
        #expect(Self.eventually { Self.level(service.status(), "C")?.active == true })
        #expect(service.inputLevels.read().changedAt[2] == arrived)
        let active = service.status()
        let c = try #require(Self.level(active, "C"))
        #expect(c.isStation)
        #expect(c.secondsSinceChange >= 5 && c.secondsSinceChange < 65, "\(c)")
        #expect(active.inputLevels?.filter(\.active).map(\.input) == ["C"])

        // It leaves 1.5 s after it came: clear since then.
        let left = arrived + 1_500_000_000
        #expect(lineup.inject(line: 2, active: false, at: left))
        #expect(Self.eventually { Self.level(service.status(), "C")?.active == false })
        #expect(service.inputLevels.read().changedAt[2] == left)
        let clear = try #require(Self.level(service.status(), "C"))
        #expect(clear.secondsSinceChange >= 3.5 && clear.secondsSinceChange < c.secondsSinceChange, "\(clear)")

        // A button reads the same way: the ready button held down.
        #expect(lineup.inject(line: 7, active: true, at: MonotonicClock.now()))
        #expect(Self.eventually { Self.level(service.status(), "ready")?.active == true })
        #expect(Self.level(service.status(), "ready")?.isStation == false)
    }

    @Test func aDoubleBlindSessionWithholdsTheStationsLevels() throws {
        let (service, lineup, _) = try Self.station()
        defer { service.shutdown() }
        let labels = ["T-1", "C-1", "C-2", "C-3", "C-4", "C-5"]
        for label in labels {
            _ = try service.addSample(SampleEntry(label: label, kind: label.hasPrefix("T") ? .target : .control))
        }
        _ = try service.addDog(DogEntry(name: "Rex"))
        _ = try service.startSession(
            SessionRequest(
                dog: "Rex", program: "research-5-station", step: "phase-3/1", trials: 2, samples: labels, seed: 7))
        #expect(lineup.inject(line: 1, active: true, at: MonotonicClock.now()))
        #expect(Self.eventually { service.inputLevels.read().active & 0b10 != 0 })
        let blind = service.status()
        #expect(blind.stationLevelsWithheld == true)
        #expect(blind.inputLevels?.map(\.input) == ["clicker", "error", "ready"], "\(blind.inputLevels ?? [])")
        #expect(blind.inputLevels?.contains { $0.isStation } == false)

        // The session over, the stations' levels are back, B still active.
        #expect(lineup.inject(line: 1, active: false, at: MonotonicClock.now()))
        try service.abort()
        try service.endSession(suggestions: nil)
        let after = service.status()
        #expect(after.stationLevelsWithheld == nil)
        #expect(after.inputLevels?.count == 8)
    }
}
