import Foundation
import Glibc
import StationConfig
import StationIO
import Synchronization

/// A broken sensor put on the simulated lineup by `--fault KIND:STATION[@FIRST[-LAST]]`, or a
/// failing sound device by `--fault SOUND[@FIRST[-LAST]]`: the trials (1-based) it lasts, from
/// FIRST (default 1) to LAST (default: the end).
public struct InjectedFault: Sendable, Hashable {
    enum Kind: String, Sendable, CaseIterable {
        /// The line goes active just after the start cue of the first trial and stays active.
        case stuck
        /// A storm: the line toggles every millisecond through each trial's search.
        case chatter
        /// The line never goes active, whatever the dog does.
        case dead
        /// The sound device takes none of a click's frames (`FailingPCM.Mode.takesNothing`).
        case soundNotTaken = "sound-not-taken"
        /// The sound device takes the click but its stream never plays it (`.stalls`).
        case soundStalled = "sound-stalled"
        /// Every write to the sound device fails with EIO (`.fails`): the device is reopened.
        case soundError = "sound-error"

        /// The sound device's failure, for a sound fault; nil for a sensor's.
        var soundMode: FailingPCM.Mode? {
            switch self {
            case .stuck, .chatter, .dead: return nil
            case .soundNotTaken: return .takesNothing
            case .soundStalled: return .stalls
            case .soundError: return .fails
            }
        }
    }

    var kind: Kind
    /// 0-based; the sound's faults have none, and take `soundStation` (no board station).
    var station: Int
    static let soundStation = -1
    /// Whether it breaks the sound rather than a sensor.
    public var isSound: Bool { kind.soundMode != nil }
    var first: Int
    var last: Int?

    func covers(trial: Int) -> Bool { trial >= first && trial <= (last ?? .max) }

    static let syntax =
        "KIND:STATION[@FIRST[-LAST]] or SOUND[@FIRST[-LAST]], e.g. stuck:B@3, chatter:A@2-4, dead:3, sound-stalled@2-3"

    /// Parses one `--fault` value against the board's station names; the error is one line
    /// naming what is wrong.
    public static func parse(_ text: String, stations: [String], trials: Int?) -> Result<
        InjectedFault, FaultSyntaxError
    > {
        func refusal(_ why: String) -> FaultSyntaxError {
            FaultSyntaxError(message: "--fault \(text): \(why) (the form is \(syntax))")
        }
        /// The trials after `@` (FIRST[-LAST]), checked against the block's.
        func span(_ text: Substring?) -> Result<(first: Int, last: Int?), FaultSyntaxError> {
            var first = 1
            var last: Int? = nil
            if let text {
                let range = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
                guard let from = Int(range[0]), from >= 1 else {
                    return .failure(refusal("\"\(text)\" is not a trial: trials count from 1"))
                }
                first = from
                if range.count == 2 {
                    guard let to = Int(range[1]), to >= from else {
                        return .failure(
                            refusal("\"\(text)\" is not a range of trials (FIRST-LAST, LAST not before FIRST)"))
                    }
                    last = to
                }
            }
            if let trials, first > trials {
                return .failure(refusal("trial \(first) is after the block's last (\(trials))"))
            }
            return .success((first, last))
        }
        // A sound fault names no station: `sound-stalled@2-3`.
        let head = text.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        let named = head[0].split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        if let kind = Kind(rawValue: String(named[0]).lowercased()), kind.soundMode != nil {
            guard named.count == 1 else {
                return .failure(refusal("a sound fault names no station: give \(kind.rawValue)[@FIRST[-LAST]]"))
            }
            return span(head.count == 2 ? head[1] : nil).map {
                InjectedFault(kind: kind, station: soundStation, first: $0.first, last: $0.last)
            }
        }
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return .failure(refusal("no station: give KIND:STATION")) }
        guard let kind = Kind(rawValue: String(parts[0]).lowercased()) else {
            let kinds = Kind.allCases.map(\.rawValue).joined(separator: ", ")
            return .failure(refusal("\"\(parts[0])\" is not a fault (\(kinds))"))
        }
        let rest = parts[1].split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        let name = String(rest[0])
        let station: Int
        if let index = stations.firstIndex(of: name)
            ?? stations.firstIndex(where: { $0.lowercased() == name.lowercased() })
        {
            station = index
        } else if let number = Int(name), number >= 1, number <= stations.count {
            station = number - 1
        } else {
            return .failure(
                refusal(
                    "no station \"\(name)\" (the stations are \(stations.joined(separator: ", ")), or 1 to \(stations.count))"
                ))
        }
        return span(rest.count == 2 ? rest[1] : nil).map {
            InjectedFault(kind: kind, station: station, first: $0.first, last: $0.last)
        }
    }

    /// Refuses two faults on one station in the same trials: which would win is anyone's guess.
    public static func overlap(_ faults: [InjectedFault], stations: [String]) -> String? {
        for (i, a) in faults.enumerated() {
            for b in faults[(i + 1)...] where a.station == b.station {
                if a.first <= (b.last ?? .max) && b.first <= (a.last ?? .max) {
                    let place = a.isSound ? "the sound" : "station \(stations[a.station])"
                    return
                        "--fault: two faults on \(place) in the same trials (\(a.kind.rawValue), \(b.kind.rawValue))"
                }
            }
        }
        return nil
    }
}

public struct FaultSyntaxError: Error {
    public var message: String
}

/// The simulated station's sound device behind `FailingPCM`, for the sound's `--fault`s: the
/// player opens each stream through `opener`, and the injector switches the failure of the one
/// open now. A stream the player reopens (it does after two failing clicks) fails as the one it
/// replaced did, as a Pi 5's DAC whose DMA stopped does.
public final class SoundFaultSwitch: @unchecked Sendable {
    private let state = Mutex<(mode: FailingPCM.Mode, open: Weak)>((.works, Weak()))
    struct Weak { weak var pcm: FailingPCM? }

    public init() {}

    /// Switches the sound device open now, and those opened after, to fail as `mode` says.
    public func set(_ mode: FailingPCM.Mode) {
        state.withLock {
            $0.mode = mode
            $0.open.pcm?.mode = mode
        }
    }

    /// An opener for the player: ALSA's device as `spec` names it, behind a `FailingPCM`.
    public func opener(_ spec: AudioSpec) -> ClickPlayer.Opener {
        { [self] () throws(StationIOError) -> any PCMDevice in
            let pcm = FailingPCM(
                wrapping: try ALSAPlayback(
                    device: spec.device, rate: spec.rate, channels: spec.channels, periodFrames: spec.periodFrames,
                    periods: spec.periods))
            state.withLock {
                pcm.mode = $0.mode
                $0.open = Weak(pcm: pcm)
            }
            return pcm
        }
    }
}

extension ClickPlayer {
    /// The click on `spec.device`; through `faults` when the simulated station's sound is to fail.
    public static func make(audio spec: AudioSpec, keepTrying: Bool, faults: SoundFaultSwitch?) throws(StationIOError)
        -> ClickPlayer
    {
        guard let faults else { return try ClickPlayer(audio: spec, keepTrying: keepTrying) }
        return try ClickPlayer(sound: spec.click, opener: faults.opener(spec), keepTrying: keepTrying)
    }
}

/// Plays the faults on the simulated lineup as the virtual dog's trials go by. Called from the
/// dog's thread; the storm has a thread of its own, putting its lines' toggles on the lineup
/// every millisecond (the lineup stamps each at its own millisecond: see `startStorm`).
final class FaultInjector: @unchecked Sendable {
    let faults: [InjectedFault]
    private let lineup: SimulatedLineup
    private let sound: SoundFaultSwitch?
    private let stopped = Atomic<Bool>(false)
    private var storm: Thread?

    init(faults: [InjectedFault], lineup: SimulatedLineup, sound: SoundFaultSwitch?) {
        self.faults = faults
        self.lineup = lineup
        self.sound = sound
        guard faults.contains(where: { $0.kind == .chatter }) else { return }
        let thread = Thread { [self] in
            while !stopped.load(ordering: .acquiring) {
                if let next = lineup.runStorm() { MonotonicClock.sleep(until: next) } else { usleep(2000) }
            }
        }
        thread.name = "lineup-storm"
        storm = thread
        thread.start()
    }

    /// The search of `trial` (1-based) has begun: the faults covering it take hold.
    func searchStarted(trial: Int) {
        // The sound switches only here, never as a trial ends: a click's stream is checked a
        // few milliseconds after it, when the trial it ended may already be over.
        if let sound, faults.contains(where: \.isSound) {
            sound.set(faults.first { $0.isSound && $0.covers(trial: trial) }?.kind.soundMode ?? .works)
        }
        for fault in faults where fault.covers(trial: trial) && !fault.isSound {
            let line = UInt32(fault.station)
            switch fault.kind {
            case .stuck: if lineup.fault(of: line) != .stuck { lineup.setFault(.stuck, line: line) }
            case .dead: lineup.setFault(.dead, line: line)
            case .chatter:
                lineup.setFault(.chatter, line: line)
                lineup.startStorm(line: line)
            case .soundNotTaken, .soundStalled, .soundError: break
            }
        }
    }

    /// The dog has finished searching `trial`: storms end, the line back at the dog's level.
    func searchOver(trial: Int) {
        for fault in faults where fault.kind == .chatter && fault.covers(trial: trial) {
            // The storm's last toggles, then the line handed back: one after the other in the pipe.
            lineup.stopStorm(line: UInt32(fault.station))
            lineup.setFault(nil, line: UInt32(fault.station))
        }
    }

    /// `trial` is over: faults whose last trial it was are lifted.
    func trialOver(trial: Int) {
        for fault in faults where fault.kind != .chatter && !fault.isSound && fault.last == trial {
            lineup.setFault(nil, line: UInt32(fault.station))
        }
    }

    func stop() {
        for fault in faults where fault.kind == .chatter { lineup.stopStorm(line: UInt32(fault.station)) }
        stopped.store(true, ordering: .releasing)
        while let storm, !storm.isFinished { usleep(1000) }
    }
}
