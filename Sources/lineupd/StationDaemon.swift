import Dispatch
import Foundation
import Glibc
import SessionLog
import StationConfig
import StationControl
import StationIO
import StationRuntime
import Synchronization
import VirtualDog

/// `lineupd --config FILE` (the board) and `lineupd --simulate --serve` (no hardware): the
/// station serving its control socket until SIGTERM.
///
/// Start-up order: lines, audio, log, hot loop, socket, then READY=1. Shut-down runs in
/// reverse: socket, the session's running trial aborted and marked, log flushed. SIGHUP reloads
/// the configuration file between sessions and refuses, with a message, during one.
struct StationDaemon {
    var configPath: String?
    var board: StationConfiguration
    var databasePath: String
    var socketPath: String
    var group: String?
    var realtime: Bool
    var dog: DogParameters?
    var speed: Double
    var simulated: Bool
    var programsDirectory: String?
    /// Broken sensors on the simulated lineup (`--fault`).
    var faults: [InjectedFault] = []
    /// The sound device those faults switch, when one breaks the sound.
    var soundFaults: SoundFaultSwitch? = nil

    enum Ending {
        case stop(Int32)
        case reload(StationConfiguration)
    }

    /// The signals and the watchdog's pinger live as long as the daemon, across reloads:
    /// sources made again for each configuration left SIGTERM ignored after a reload, and a
    /// pinger holding the old station kept its GPIO lines requested (the next request: EBUSY).
    final class Lifetime: @unchecked Sendable {
        let received = Atomic<Int32>(0)
        let wake = DispatchSemaphore(value: 0)
        private let current = Mutex<StationService?>(nil)
        var service: StationService? {
            get { current.withLock { $0 } }
            set { current.withLock { $0 = newValue } }
        }
    }

    func run() -> Int32 {
        // One lineupd per log, before anything else is touched (lines, sound card, the log):
        // held until run returns, across reloads, so the unfinished-session check at each
        // (re)start can never take another daemon's live session for a dead one.
        let lock: LogLock
        do {
            lock = try LogLock(logPath: databasePath, socket: socketPath)
        } catch {
            Log.station.error("\(error)")
            return 1
        }
        defer { withExtendedLifetime(lock) {} }
        let lifetime = Lifetime()
        // Signals only wake the main thread; everything is done there, in order. Handled before
        // the socket is served, so a signal sent as soon as the station answers is not lost.
        var sources: [any DispatchSourceSignal] = []
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                lifetime.received.store(sig, ordering: .releasing)
                lifetime.wake.signal()
            }
            source.resume()
            sources.append(source)
        }
        defer { for source in sources { source.cancel() } }
        // Pings while the station of the moment runs its hot loop; none during a reload.
        let watchdog = SystemdNotify.startWatchdog { lifetime.service?.isHotLoopRunning ?? false }
        defer { watchdog?.cancel() }

        var board = self.board
        while true {
            switch serve(board, lifetime, lock) {
            case .stop(let status): return status
            case .reload(let next): board = next
            }
        }
    }

    private func serve(_ board: StationConfiguration, _ lifetime: Lifetime, _ lock: LogLock) -> Ending {
        let inputs = InputMap(configuration: board)
        let outputLines = StationOutputMap(board: board)
        let source: any EdgeSource
        let outputs: any OutputDriver
        var simulatedLineup: SimulatedLineup?
        do {
            if simulated {
                let lineup = try SimulatedLineup(lineCount: inputs.count, outputCount: outputLines.lines.count)
                simulatedLineup = lineup
                source = lineup
                outputs = lineup
            } else {
                let lineup = try GPIOLineup(inputs: inputs.lines, outputs: outputLines.lines, consumer: "lineupd")
                source = lineup
                outputs = lineup
            }
        } catch {
            Log.station.error("\(configPath ?? board.source): \(error.message)")
            return .stop(1)
        }

        let player: ClickPlayer
        do {
            // On a board a missing device (a USB DAC not yet up) is retried in the background.
            player = try ClickPlayer.make(audio: board.audio, keepTrying: !simulated, faults: soundFaults)
        } catch {
            var fallback = board.audio
            fallback.device = "null"
            Log.audio.warning(
                "no sound on ALSA device \(board.audio.device) (\(error.message)): clicking into ALSA's null device")
            guard let p = try? ClickPlayer.make(audio: fallback, keepTrying: false, faults: soundFaults) else {
                Log.audio.error("cannot open ALSA's null device either")
                return .stop(1)
            }
            player = p
        }
        if let problem = player.problem { Log.audio.warning("audio: \(problem); retrying in the background") }

        let service: StationService
        do {
            var options = StationService.Options(
                board: board, databasePath: databasePath, realtime: realtime, printTrials: true, dog: dog,
                speed: speed, programsDirectory: programsDirectory, faults: faults)
            options.logLock = lock
            options.soundFaults = soundFaults
            service = try StationService(
                options: options, source: source, simulated: simulatedLineup, player: player,
                outputs: outputLines.lines.isEmpty ? nil : (outputs, outputLines))
            try service.start()
        } catch {
            Log.station.error("\(error)")
            return .stop(1)
        }
        if let problem = service.hotThreadRealtimeProblem {
            Log.station.warning("the hot thread runs without real-time priority (\(problem))")
        }

        let server = ControlServer(controller: service, options: ControlServer.Options(path: socketPath, group: group))
        do {
            for warning in try server.start() { Log.control.warning("\(warning)") }
        } catch {
            Log.station.error("\(error)")
            service.shutdown()
            return .stop(1)
        }

        let what = simulated ? "simulated station" : "station"
        print(
            "lineupd: \(what) ready: \(inputs.stationCount) stations, audio \(player.negotiated?.description ?? "unavailable"), "
                + "log \(databasePath), control socket \(socketPath)")
        fflush(nil)
        lifetime.service = service
        // Whatever the ending, the station of this configuration is let go before the next
        // one requests the same lines and sound card.
        defer { lifetime.service = nil }
        _ = SystemdNotify.send("READY=1\nSTATUS=ready: \(inputs.stationCount) stations, waiting for a session")

        while true {
            lifetime.wake.wait()
            let sig = lifetime.received.exchange(0, ordering: .acquiring)
            if sig == SIGHUP {
                guard let configPath else {
                    Log.station.warning("SIGHUP: no configuration file to reload (the simulated board is built in)")
                    continue
                }
                if service.hasSession {
                    Log.station.warning(
                        "SIGHUP: configuration not reloaded: a session is running; end it, then send SIGHUP again")
                    continue
                }
                let next: StationConfiguration
                do {
                    next = try StationConfigLoader.load(path: configPath)
                } catch {
                    Log.station.warning("SIGHUP: \(error.description); keeping the configuration in use")
                    continue
                }
                _ = SystemdNotify.send("RELOADING=1\nSTATUS=reloading \(configPath)")
                server.stop()
                service.shutdown()
                print("lineupd: reloaded \(configPath)")
                return .reload(next)
            }
            if sig == SIGINT || sig == SIGTERM {
                _ = SystemdNotify.send("STOPPING=1\nSTATUS=stopping")
                server.stop()
                service.shutdown()
                print("lineupd: stopped by \(sig == SIGINT ? "SIGINT" : "SIGTERM"); the log is flushed")
                fflush(nil)
                return .stop(0)
            }
        }
    }
}
