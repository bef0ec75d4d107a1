import Foundation
import ReadingRows
import SessionLog
import StationConfig
import StationControl
import Testing

@testable import StationIO
@testable import StationRuntime

/// A sound device that stops playing, through the station lineupd runs: the trainer's clicker
/// clicks into a stream that takes the click and does not play it; `status` says so (what an
/// alerts process reads), the log has the fault once, and both clear at the click that plays.
@Suite(.serialized) struct SoundFaultStatusTests {
    @Test func aStalledStreamIsInStatusAndTheLogOnceThenClears() throws {
        var board = StationConfiguration.simulated()
        board.audio.device = "null"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sound-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("lineup.db").path
        let inputs = InputMap(configuration: board)
        let clicker = try #require(inputs.line(of: .clicker))
        let lineup = try SimulatedLineup(lineCount: inputs.count)
        let device = FailingPCM(
            wrapping: try ALSAPlayback(
                device: "null", rate: board.audio.rate, channels: board.audio.channels,
                periodFrames: board.audio.periodFrames, periods: board.audio.periods))
        let player = try ClickPlayer(sound: board.audio.click, opener: { device }, keepTrying: false)
        let service = try StationService(
            options: StationService.Options(board: board, databasePath: database, realtime: false, printTrials: false),
            source: lineup, simulated: lineup, player: player)
        try service.start()
        defer { service.shutdown() }
        var request = SessionRequest(
            dog: "Rex", program: "research-5-station", step: "initial/food", newDog: true, unlabelled: true)
        request.durationSeconds = 3600
        let session = try service.startSession(request).session
        _ = try service.ready()
        #expect(service.status().soundFault == nil && service.status().soundFaults == 0)

        device.mode = .stalls
        let pressed = MonotonicClock.now()
        #expect(lineup.inject(line: clicker, active: true, at: pressed))
        #expect(InputLevelsTests.eventually { service.status().soundFault == "sound-stalled" })
        let failing = service.status()
        #expect(failing.soundFaults == 1 && failing.failedClicks == 1)

        // The check came at least 12 ms after the press: a release 6 ms after it and a press now
        // are each past the 5 ms debounce.
        device.mode = .works
        #expect(lineup.inject(line: clicker, active: false, at: pressed + 6_000_000))
        #expect(lineup.inject(line: clicker, active: true, at: MonotonicClock.now()))
        #expect(InputLevelsTests.eventually { service.status().soundFault == nil })
        #expect(service.status().soundFaults == 1 && service.status().failedClicks == 1)
        try service.endSession(suggestions: nil)

        let reader = try SessionLog.openReader(path: database)
        var filter = LogFilter()
        filter.sessionId = session
        filter.eventKind = .fault
        let faults = try reader.events(filter).compactMap(\.detail).filter { $0.contains("sound-") }
        #expect(faults.count == 1 && faults.first?.contains(#""fault":"sound-stalled""#) == true, "\(faults)")
        filter.eventKind = .note
        let notes = try reader.events(filter).compactMap(\.detail).filter { $0.contains("sound-") }
        #expect(notes == [#"{"fault":"sound-recovered","why":"sound-stalled"}"#], "\(notes)")
    }
}
