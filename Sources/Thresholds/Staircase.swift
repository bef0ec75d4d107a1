// The n-down-1-up staircase (Levitt 1971; DeChant & Hall 2021 ran 2-down-1-up, Kane et al.
// 2024 3-down-1-up): after n finds in a row the next target is weaker by the step, after a
// miss it is stronger by the step. A value: the answers so far decide the next rung, the
// reversals and whether it has stopped; catch trials (no target) are drawn at a chosen rate
// from the caller's seeded generator and do not move the staircase.

/// A staircase's settings.
public struct StaircaseRules: Sendable, Hashable {
    /// Finds in a row before stepping down (weaker): 2 for 2-down-1-up, 3 for 3-down-1-up.
    public var down: Int
    /// Rungs per step, down and up alike.
    public var step: Int
    /// The first target's rung.
    public var startRung: Int
    /// Stop once this many reversals have happened (nil: no such rule).
    public var stopAfterReversals: Int?
    /// Stop once this many trials, catch trials included, have run (nil: no such rule).
    public var stopAfterTrials: Int?
    /// The chance that a trial is a catch trial, with no target (0 for none).
    public var catchTrialRate: Double

    public init(
        down: Int, step: Int = 1, startRung: Int, stopAfterReversals: Int? = nil, stopAfterTrials: Int? = nil,
        catchTrialRate: Double = 0
    ) {
        self.down = down
        self.step = step
        self.startRung = startRung
        self.stopAfterReversals = stopAfterReversals
        self.stopAfterTrials = stopAfterTrials
        self.catchTrialRate = catchTrialRate
    }

    /// The settings checked against a ladder: one message naming what is wrong.
    public func validate(for ladder: DilutionLadder) throws(ThresholdError) {
        guard down >= 1 else {
            throw .rules("down must be at least 1 (finds in a row before a weaker step), not \(down)")
        }
        guard step >= 1 else { throw .rules("the step must be at least 1 rung, not \(step)") }
        guard (0..<ladder.count).contains(startRung) else {
            throw .rules("the start rung \(startRung) is not on the ladder (rungs 0 to \(ladder.count - 1))")
        }
        guard stopAfterReversals != nil || stopAfterTrials != nil else {
            throw .rules("a staircase needs a stop rule: after so many reversals, or so many trials, or both")
        }
        if let r = stopAfterReversals, r < 1 { throw .rules("stop after reversals must be at least 1, not \(r)") }
        if let t = stopAfterTrials, t < 1 { throw .rules("stop after trials must be at least 1, not \(t)") }
        guard catchTrialRate >= 0, catchTrialRate < 1 else {
            throw .rules("the catch-trial rate must be at least 0 and below 1, not \(catchTrialRate)")
        }
    }
}

/// One answered trial of a threshold procedure.
public enum ThresholdTrial: Sendable, Hashable {
    /// A target at this rung; `found`: the dog indicated it (a hit), else anything else (a miss,
    /// an indication elsewhere, no indication).
    case target(rung: Int, found: Bool)
    /// No target; `indicated`: the dog indicated a station anyway (a false alert).
    case catchTrial(indicated: Bool)
}

/// What a procedure asks for next.
public enum NextTrial: Sendable, Hashable {
    case target(rung: Int)
    case catchTrial
    case stopped
}

/// A change of direction: the rung of the trial where the staircase turned.
public struct Reversal: Sendable, Hashable {
    /// The trial's index among all trials (0-based, catch trials counted).
    public var trial: Int
    public var rung: Int
    /// True where the staircase turned from going down to going up (a trough).
    public var wasGoingDown: Bool
}

public struct Staircase: Sendable, Hashable {
    public let rules: StaircaseRules
    public let ladder: DilutionLadder
    /// The next target's rung.
    public private(set) var rung: Int
    public private(set) var trials: [ThresholdTrial] = []
    public private(set) var reversals: [Reversal] = []
    /// Finds in a row at the present run (reset by a step or a miss).
    private var run = 0
    /// The last step's direction: -1 down, +1 up, 0 none yet. A step the ladder's end blocks
    /// still counts as its direction, so a miss after finds at the weakest rung is a reversal.
    /// Read by the station's log of each trial's state.
    public private(set) var direction = 0
    /// The last answer's step: -1 down, +1 up (taken even where the ladder's end held the
    /// rung), 0 when it made none (a catch trial, or a find short of `down` in a row).
    public private(set) var lastMove = 0

    public init(rules: StaircaseRules, ladder: DilutionLadder) throws(ThresholdError) {
        try rules.validate(for: ladder)
        self.rules = rules
        self.ladder = ladder
        rung = rules.startRung
        // Room for every answer up front: a station records answers on its hot thread, where
        // nothing may allocate (at most `stopAfterTrials`; a cap the caller does not give
        // costs a reallocation past 256).
        trials.reserveCapacity(rules.stopAfterTrials ?? 256)
        reversals.reserveCapacity(rules.stopAfterReversals ?? rules.stopAfterTrials ?? 256)
    }

    /// A staircase replayed from its answers (the log's trials, in order).
    public init(rules: StaircaseRules, ladder: DilutionLadder, answers: [ThresholdTrial]) throws(ThresholdError) {
        try self.init(rules: rules, ladder: ladder)
        for answer in answers { try record(answer) }
    }

    public var targetTrials: Int { trials.count { if case .target = $0 { true } else { false } } }

    public var hasStopped: Bool {
        if let r = rules.stopAfterReversals, reversals.count >= r { return true }
        if let t = rules.stopAfterTrials, trials.count >= t { return true }
        return false
    }

    /// The next trial: stopped, or a catch trial with the rules' chance (one draw from
    /// `random` when the rate is above 0), or a target at `rung`.
    public func next(using random: inout some RandomNumberGenerator) -> NextTrial {
        if hasStopped { return .stopped }
        if rules.catchTrialRate > 0, random.unitInterval() < rules.catchTrialRate { return .catchTrial }
        return .target(rung: rung)
    }

    /// Records the answer to the trial `next` asked for.
    public mutating func record(_ answer: ThresholdTrial) throws(ThresholdError) {
        guard !hasStopped else {
            throw .answer("the staircase has stopped after \(trials.count) trials; no further answer is taken")
        }
        lastMove = 0
        guard case .target(let at, let found) = answer else {
            trials.append(answer)  // a catch trial leaves the staircase where it was
            return
        }
        guard at == rung else {
            throw .answer("trial \(trials.count + 1) was at rung \(at), but the staircase asked for rung \(rung)")
        }
        let index = trials.count
        trials.append(answer)
        let move: Int
        if found {
            run += 1
            guard run >= rules.down else { return }
            move = -1
        } else {
            move = 1
        }
        run = 0
        if direction != 0 && move != direction {
            reversals.append(Reversal(trial: index, rung: rung, wasGoingDown: direction < 0))
        }
        direction = move
        lastMove = move
        rung = min(ladder.count - 1, max(0, rung + move * rules.step))
    }

    /// Each rung's trials and finds, catch trials left out: the psychometric fit's data.
    public var tallies: [ConcentrationTally] { Thresholds.tallies(of: trials, on: ladder) }

    /// The reversal estimate over the last `k` reversals (docs/figures.md, "A threshold").
    public func reversalEstimate(last k: Int) throws(ThresholdError) -> Double {
        try Thresholds.reversalEstimate(reversals.map { ladder.concentrations[$0.rung] }, last: k)
    }
}

/// Each rung's trials and finds from answered trials, weakest first, rungs never presented
/// left out; catch trials are not on the curve.
public func tallies(of trials: [ThresholdTrial], on ladder: DilutionLadder) -> [ConcentrationTally] {
    var n = [Int](repeating: 0, count: ladder.count)
    var found = [Int](repeating: 0, count: ladder.count)
    for case .target(let rung, let f) in trials where ladder.concentrations.indices.contains(rung) {
        n[rung] += 1
        if f { found[rung] += 1 }
    }
    return ladder.concentrations.indices.filter { n[$0] > 0 }.map {
        ConcentrationTally(concentration: ladder.concentrations[$0], trials: n[$0], found: found[$0])
    }
}
