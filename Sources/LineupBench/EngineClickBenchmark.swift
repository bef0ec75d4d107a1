import Foundation
import Glibc
import ReadingRows
import SessionLog
import StationConfig
import StationControl
import StationIO
import StationRuntime
import TrainingEngine

/// Why the engine-handler benchmark could not run, in one line.
public struct ClickBenchmarkError: Error, CustomStringConvertible {
    public var description: String
}

/// `bench click`'s default path: the station lineupd runs, assembled by `StationService` as
/// lineupd assembles it (the engine's `EngineHandler` on the hot thread, its snapshot, the one
/// ring to the log feeder, the feeder writing a real log on its own thread), on the simulated
/// board. A trainer-led session (research-5-station, initial/food) is started and its round
/// begun with a ready press; each pulse is the trainer's clicker button: edge, debounce, the
/// engine's decision, the click through ALSA. The storm is on the session's five stations, so
/// the engine sees it too. Figures come from the log the feeder wrote: each click's edge and
/// handed times, and the edges logged.
extension ClickBenchmark {
    /// What the JSON's `path` says of this run.
    public static let enginePath = "engine-handler, trainer's clicker"
    /// What the JSON's `path` says of `--handler fixed`.
    public static let fixedPath = "fixed handler, a station's edge"

    public static func runEngineHandler(
        _ s: Settings, allocations: AllocationCounter? = nil
    ) throws(ClickBenchmarkError) -> Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lineup-bench-click-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw ClickBenchmarkError(description: "cannot make \(directory.path) for the benchmark's log: \(error)")
        }
        defer { try? FileManager.default.removeItem(at: directory) }
        let databasePath = directory.appendingPathComponent("lineup.db").path

        var board = StationConfiguration.simulated(stationCount: 5)
        board.timing.debounceMilliseconds = s.debounceMilliseconds
        board.audio.device = s.device
        board.audio.rate = s.rate
        board.audio.periodFrames = s.periodFrames
        board.audio.periods = s.periods
        if let feeder = s.feeder {
            // A spare line of the simulated board's header.
            board.feeder = FeederSpec(
                output: OutputLine(locator: .name("GPIO19")), delayMilliseconds: feeder.delayMilliseconds,
                pulseMilliseconds: feeder.pulseMilliseconds)
        }
        let outputMap = StationOutputMap(board: board)
        let inputs = InputMap(configuration: board)
        guard let clicker = inputs.line(of: .clicker) else {
            throw ClickBenchmarkError(description: "the simulated board has no clicker button")
        }
        let stations = (0..<inputs.stationCount).map(UInt32.init)

        let lineup: SimulatedLineup
        let player: ClickPlayer
        do {
            lineup = try SimulatedLineup(lineCount: inputs.count, outputCount: outputMap.lines.count)
            player = try ClickPlayer(audio: board.audio, keepTrying: false)
        } catch {
            throw ClickBenchmarkError(description: error.message)
        }
        var options = StationService.Options(
            board: board, databasePath: databasePath, realtime: s.realtime, printTrials: false,
            stationName: "bench")
        options.onHotThread = { allocations?.attach(pthread_self()) }
        let service: StationService
        let sessionId: String
        do {
            service = try StationService(
                options: options, source: lineup, simulated: lineup, player: player,
                outputs: outputMap.lines.isEmpty ? nil : (lineup, outputMap))
            try service.start()
            var request = SessionRequest(
                dog: "bench", program: "research-5-station", step: "initial/food", newDog: true, unlabelled: true)
            // One round long enough for every pulse.
            request.durationSeconds = 3600
            sessionId = try service.startSession(request).session
            _ = try service.ready()
        } catch {
            throw ClickBenchmarkError(description: "cannot start the trainer-led session: \(error)")
        }

        let driven = drive(s, lineup: lineup, pulseLine: clicker, stormLines: stations, allocations: allocations)
        let hotAllocations = allocations?.end()
        let edgesRead = service.hotLoopEdgesRead
        let clicksPlayed = service.hotLoopClicksPlayed
        let realtimeProblem = service.hotThreadRealtimeProblem
        do {
            try service.endSession(suggestions: nil)
        } catch {
            throw ClickBenchmarkError(description: "cannot end the session: \(error)")
        }
        service.shutdown()
        let stationPeak = peakResidentMegabytes()

        // What the feeder logged: the clicks in order of their edges, the warm-up's left out.
        var handed: [UInt64] = []
        var onset: [UInt64] = []
        let edgesLogged: Int
        var feederLogged: Int?
        do {
            let reader = try SessionLog.openReader(path: databasePath)
            var filter = LogFilter()
            filter.sessionId = sessionId
            filter.eventKind = .click
            let clicks = try reader.events(filter).sorted { ($0.kernelNs ?? 0) < ($1.kernelNs ?? 0) }
            for click in clicks.dropFirst(warmUpClicks) {
                let edge = click.kernelNs ?? click.monoNs
                handed.append(UInt64(clamping: click.monoNs - edge))
                onset.append(UInt64(clamping: click.clickOnsetLatencyNs ?? (click.monoNs - edge)))
            }
            // A button's raw edge is logged as a `button` event, a station's as an `edge`.
            var logged = 0
            for kind in [EventKind.edge, .button] {
                var edges = LogFilter()
                edges.eventKind = kind
                logged += try reader.eventCount(edges)
            }
            edgesLogged = logged
            if s.feeder != nil { feederLogged = try reader.eventCount(LogFilter(eventKind: .feeder)) }
        } catch {
            throw ClickBenchmarkError(description: "cannot read the benchmark's log back: \(error)")
        }
        var result = Result(
            handedLatencies: handed, onsetLatencies: onset, stormEdgesInjected: driven.stormEdges,
            edgesRead: edgesRead, edgesLogged: UInt64(edgesLogged), droppedAtSource: lineup.droppedEdges,
            ringOverflows: service.ringOverflows, failedClicks: player.failedClicks, negotiated: player.negotiated,
            realtimeProblem: realtimeProblem, hotThreadAllocations: hotAllocations, seconds: driven.seconds,
            clicksPlayed: clicksPlayed)
        result.stationPeakMegabytes = stationPeak
        result.feederPulses = outputMap.feederIndex.flatMap { lineup.output($0)?.pulses }
        result.feederLogged = feederLogged
        result.streamChecks = player.streamChecks
        result.soundFaults = player.soundFaults
        return result
    }
}
