import Foundation
import SessionLog
import StationConfig
import StationControl
import Thresholds
import TrainingEngine
import VirtualDog

/// The block to run: the lineup, the protocol's times (divided by `speed` for the real-time
/// simulation, so a 20-trial block takes seconds, not minutes), the dog.
public struct BlockPlan {
    public var board: StationConfiguration
    public var trials: Int
    public var seed: UInt64
    public var sensitivity: Double
    public var falseAlertRate: Double
    public var speed: Double
    /// Broken sensors on the simulated lineup (`--fault`).
    public var faults: [InjectedFault] = []
    /// The virtual dog memorises samples (`--memorise-after`); nil: it does not.
    public var memorising: Memorising? = nil
    /// The virtual dog has a detection threshold (`--dog-threshold`); nil: it has none.
    public var threshold: PsychometricCurve? = nil

    public init(
        board: StationConfiguration, trials: Int, seed: UInt64, sensitivity: Double, falseAlertRate: Double,
        speed: Double, faults: [InjectedFault] = []
    ) {
        self.board = board
        self.trials = trials
        self.seed = seed
        self.sensitivity = sensitivity
        self.falseAlertRate = falseAlertRate
        self.speed = speed
        self.faults = faults
    }

    public var stationCount: Int { board.stations.count }
    public var stationNames: [String] { board.stations.map(\.name) }

    /// One target, the rest controls and a blank; a fifth of the trials have no target, so
    /// the block measures specificity as well.
    public var setup: LineupSetup {
        let n = stationCount
        return LineupSetup(
            stations: n, targets: 1, controls: max(0, n - 2), blanks: n >= 2 ? 1 : 0, noTargetShare: 0.2,
            maxSameStationInARow: 2)
    }

    private func scaled(_ seconds: Double) -> Nanoseconds { nanoseconds(seconds: seconds / speed) }

    /// The fastest honest simulation for a board. `--speed` divides the hold and its tolerance
    /// but not the debounce window (the sensors' chatter does not speed up). The scaled hold
    /// must be at least 6 windows: measured in virtual time (2,000 trials, seed 3), every
    /// outcome matches 20× real time down to 6.06 windows of hold, and false alerts rise from
    /// 5.7 (sniffs stretched by the debouncer become holds). The scaled tolerance must be at
    /// least 1 window, or a break in the beam cannot be seen at all (the virtual dog makes no
    /// such breaks, so this one is argued, not measured). These factors are the project's rule.
    public static func fastestSpeed(timing: TimingSpec) -> Double {
        let window = max(timing.debounceMilliseconds, 0.001)
        return min(timing.holdMilliseconds / (6 * window), timing.holdToleranceMilliseconds / window)
    }

    /// One line saying why `speed` is refused for this board, or nil.
    public static func speedRefusal(_ speed: Double, timing: TimingSpec) -> String? {
        let limit = fastestSpeed(timing: timing)
        guard speed > limit else { return nil }
        return String(
            format:
                "--speed %g is too fast for honest figures: the hold (%g ms) and its tolerance (%g ms) would become %.1f ms and %.1f ms, "
                + "against the %g ms debounce window (needed: 6 windows and 1); the fastest allowed here is %g",
            speed, timing.holdMilliseconds, timing.holdToleranceMilliseconds, timing.holdMilliseconds / speed,
            timing.holdToleranceMilliseconds / speed, timing.debounceMilliseconds, (limit * 10).rounded(.down) / 10)
    }

    public var machine: LineupMachine.Configuration {
        var configuration = LineupMachine.Configuration(
            mode: .doubleBlind, stationCount: stationCount,
            hold: scaled(board.timing.holdMilliseconds / 1000),
            holdTolerance: scaled(board.timing.holdToleranceMilliseconds / 1000),
            searchTimeout: scaled(30), interTrialInterval: scaled(10),
            // The dog may search on after a false alert (`after_false_alert = "continue"`),
            // so one block shows both: a stuck or wrong station, then the target found.
            endOnFalseAlert: false)
        // The storm and the debouncer are physical: not scaled (see `Configuration.chatterGap`).
        configuration.chatterGap = nanoseconds(milliseconds: 2 * board.timing.debounceMilliseconds)
        return configuration
    }

    public var dog: DogParameters {
        let s = speed
        let hold = board.timing.holdMilliseconds / 1000
        var parameters = DogParameters(
            sensitivity: sensitivity, falseAlertRate: falseAlertRate,
            startLatencySeconds: (0.5 / s)...(2 / s), travelSeconds: (0.4 / s)...(1.5 / s),
            sniffSeconds: (min(0.2, hold / 4) / s)...(min(1.2, hold / 2) / s), indicationHoldSeconds: hold * 1.5 / s,
            // Real beams chatter at the nose's arrival and departure: the debouncer's work.
            chatterToggles: 2, chatterSpanMilliseconds: 2)
        parameters.memorising = memorising
        parameters.threshold = threshold
        return parameters
    }

    public var debounce: Nanoseconds { nanoseconds(milliseconds: board.timing.debounceMilliseconds) }

    /// The assistant's time to load the containers between trials.
    public var loadingTime: Nanoseconds { scaled(1) }
}

/// The dog every simulated block is logged for: "virtual dog", added by the first block on a
/// log (returned to be appended with its session) and found by name by every later one, so a
/// log's simulated blocks are one dog's sessions.
public func virtualDog(in log: SessionLog, notes: String) throws -> (id: UUID, new: DogRecord?) {
    if let known = try log.reader.dogs().first(where: { $0.name == "virtual dog" }), let id = UUID(uuidString: known.id)
    {
        return (id, nil)
    }
    let dog = DogRecord(name: "virtual dog", notes: notes)
    return (dog.id, dog)
}

extension BlockPlan {
    /// The simulated samples: `SIM-T1`, `SIM-T2` (targets) and `SIM-C1`... (two controls per
    /// control station, so they rotate); blanks are clean containers without a sample, as on
    /// a board. Found by label when an earlier run registered them, never added twice.
    public func registerSamples(in log: SessionLog) throws -> [Sample] {
        let wanted: [(String, SampleKind)] =
            (1...max(1, setup.targets * 2)).map { ("SIM-T\($0)", SampleKind.target) }
            + (0..<(setup.controls * 2)).map { ("SIM-C\($0 + 1)", SampleKind.control) }
        var known = Dictionary(
            (try log.reader.samples()).map { ($0.label, $0) }, uniquingKeysWith: { first, _ in first })
        var samples: [Sample] = []
        for (label, kind) in wanted {
            if known[label] == nil {
                _ = try log.addSample(
                    SampleRecord(
                        label: label, kind: kind, facts: SampleFacts(source: "lineupd --simulate (virtual)")))
                known = Dictionary(
                    (try log.reader.samples()).map { ($0.label, $0) }, uniquingKeysWith: { first, _ in first })
            }
            guard let entry = known[label], entry.kind == kind else {
                throw SessionLogError.invalidInput(
                    "the log already has a sample \(label) that is not a \(kind.rawValue): use another --db")
            }
            samples.append(Sample(id: entry.id, kind: kind, usageCount: entry.uses))
        }
        return samples
    }

    /// The session's settings as the log keeps them, with the rules of `running`, the engine's
    /// configuration as the station runs it.
    public func settingsJSON(_ running: LineupMachine.Configuration) -> String {
        let m = machine
        return jsonObject(
            running.loggedRules.merging([
                "simulated": "true", "trials": "\(trials)", "seed": "\(seed)",
                "speed": "\(speed)", "hold_ns": "\(m.hold)", "search_timeout_ns": "\(m.searchTimeout)",
                "debounce_ns": "\(debounce)",
                "stations": stationNames.joined(separator: ","),
                "inter_trial_ns": "\(m.interTrialInterval)", "dog_sensitivity": "\(sensitivity)",
                "dog_false_alert_rate": "\(falseAlertRate)",
                "dog_memorise_after": memorising.map { "\($0.after)" } ?? "",
                "dog_familiar_sensitivity": memorising.map { "\($0.familiarSensitivity)" } ?? "",
            ]) { _, ours in ours })
    }
}
