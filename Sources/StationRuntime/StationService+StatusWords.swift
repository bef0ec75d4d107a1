import Foundation
import Glibc
import Logging
import SessionLog
import StationConfig
import StationControl
import StationIO
import Synchronization
import TrainingEngine
import VirtualDog

// status's words: the engine's snapshot described in the trainer's words.
extension StationService {
    /// The session's state as the engine last published it (never the log feeder's view),
    /// in the trainer's words: what is happening, which trial, what to do next, time left.
    func describe(_ current: Current, _ segment: Segment, into status: inout StationStatus) {
        // A resumed session's segment runs the block from trial firstTrial + 1: count from there.
        var engine = segment.handler.snapshot.read()
        engine.begun += current.firstTrial
        Self.describe(
            StatusInputs(
                engine: engine, total: current.firstTrial + segment.layouts.count,
                done: current.firstTrial + segment.feeder.committed.load(ordering: .acquiring),
                trainerLed: current.mode == .trainerLed,
                aborted: current.aborted, autoStart: current.autoStart, usedStations: segment.usedStations,
                stationNames: stationNames, speed: options.speed, now: MonotonicClock.now(),
                blind: !Visibility.shows(.layout, to: .handler, runningIn: current.mode), logPaused: status.logPaused),
            into: &status)
    }

    /// What the status words are made of: the engine's snapshot, the feeder's count and the
    /// session's settings, with the time they are read at (so tests can give any).
    struct StatusInputs {
        var engine: EngineSnapshot.Values
        /// Trials (or repetitions) of the session, and those committed to the log.
        var total: Int
        var done: Int
        var trainerLed: Bool
        var aborted: Bool
        var autoStart: Bool
        var usedStations: [Int]
        var stationNames: [String]
        /// Divides the protocol's times: seconds left are said in the protocol's seconds.
        var speed: Double
        /// Monotonic ns.
        var now: UInt64
        /// A double-blind session: status is read by the handler too (the page sends it to every
        /// role), so it says what the station waits for, never what to load (the loading
        /// assistant's instructions are the layout, theirs alone).
        var blind = false
        /// Why no trial starts (the log cannot be written), or nil (`logPausedWords`).
        var logPaused: String? = nil
    }

    static func describe(_ inputs: StatusInputs, into status: inout StationStatus) {
        let engine = inputs.engine
        let total = inputs.total
        let done = inputs.done
        let trainerLed = inputs.trainerLed
        let now = inputs.now
        let left = engine.endsAt > now ? Double(engine.endsAt - now) / 1e9 * inputs.speed : nil
        status.trials = total
        status.trialsDone = done
        var state: StationState
        var activity: String
        var trial = min(engine.begun + 1, total)
        switch engine.activity {
        case .searching:
            trial = engine.begun
            state = engine.noseAtStation ? .holding : .searching
            activity =
                "trial \(trial) of \(total): the dog is searching"
                + (engine.noseAtStation ? ", its nose at a station now" : "")
        case .interTrial:
            trial = engine.begun
            state = .interval
            activity =
                engine.readyPending
                ? "interval after trial \(trial); trial \(trial + 1) is loaded and starts when it is over"
                : engine.begun >= total
                    ? "interval after the last trial (\(trial))"
                    : inputs.autoStart
                        ? "interval after trial \(trial); trial \(trial + 1) starts by itself once it is over and no "
                            + "station is active"
                        : inputs.blind
                            ? "interval after trial \(trial); then trial \(trial + 1) waits for ready"
                            : "interval after trial \(trial); load trial \(trial + 1), then press ready"
        case .loading:
            trial = engine.begun
            state = .blocked
            let station = engine.blockedStation
            let name =
                station >= 0 && station < inputs.usedStations.count
                    && inputs.usedStations[station] < inputs.stationNames.count
                ? inputs.stationNames[inputs.usedStations[station]] : "a station"
            activity =
                "trial \(trial) of \(total) cannot start: station \(name) is active; "
                + (inputs.autoStart ? "it starts by itself once the station is clear" : "clear it, then press ready")
        case .exercise:
            trial = engine.begun
            state = .roundRunning
            activity = "repetition \(trial) of \(total) is running"
        case .ended:
            trial = engine.begun
            state = inputs.aborted || engine.begun < total ? .aborted : .repetitionsDone
            activity =
                state == .aborted
                ? "the session was aborted: end it (lineupctl session end)"
                : "every repetition (\(total)) is done: end the session (lineupctl session end)"
        case .idle, .exerciseOver:
            if engine.begun >= total {
                trial = total
                state = trainerLed ? .repetitionsDone : .blockComplete
                activity =
                    trainerLed
                    ? "every repetition (\(total)) is done: end the session (lineupctl session end)"
                    : "the block is complete (\(total) trials): end the session (lineupctl session end)"
            } else if inputs.aborted {
                state = .aborted
                activity = "the session was aborted: end it (lineupctl session end)"
            } else {
                state = .waitingForReady
                activity =
                    trainerLed
                    ? "press ready to start repetition \(trial) of \(total)"
                    : inputs.autoStart
                        ? "trial \(trial) of \(total) starts by itself once no station is active"
                        : inputs.blind
                            ? "trial \(trial) of \(total) waits for ready"
                            : "load trial \(trial) of \(total), then press ready"
            }
        }
        if let paused = inputs.logPaused {
            let what = trainerLed ? "repetition" : "trial"
            switch state {
            case .waitingForReady, .interval, .blocked:
                // Not a trial until the log takes writes: the next one would go unrecorded.
                trial = min(engine.begun + (engine.activity == .loading ? 0 : 1), total)
                state = .paused
                activity =
                    "paused before \(what) \(trial) of \(total): \(paused); "
                    + (inputs.autoStart
                        ? "the block goes on by itself once the log takes writes"
                        : "then press ready")
            case .searching, .holding, .roundRunning:
                activity += "; the block pauses after it: \(paused)"
            default:
                break
            }
        }
        status.state = state
        status.activity = activity
        status.trial = trial
        status.secondsLeft = left
        if trainerLed {
            status.exercise = engine.activity == .exercise ? engine.begun : nil
            status.exercisesDone = done
            status.exerciseRepeats = total
        }
    }
}
