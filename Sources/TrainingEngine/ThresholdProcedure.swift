import Thresholds

// A step's threshold procedure (issue 38): the next trial's dilution is the procedure's answer
// to the dog's trials so far. The procedures themselves are Thresholds' (one staircase, one
// method of constant stimuli); this file only runs them over a session's trials: which trials
// are catch trials (decided ahead, so the layouts' positions can be committed ahead), which
// rung each target trial gets, and the state each trial leaves, for the log.

/// How a step chooses each trial's dilution, as the program file declares it.
public struct ThresholdProcedure: Sendable, Hashable {
    public enum Method: Sendable, Hashable {
        /// n-down-1-up (Thresholds.Staircase); its `stopAfterTrials`, if any, caps the block too.
        case staircase(StaircaseRules)
        /// Each of `rungs` once per block, shuffled, `catchTrialsPerBlock` catch trials in each.
        case constantStimuli(rungs: [Int], blocks: Int, catchTrialsPerBlock: Int)
    }

    public var method: Method
    /// How many target dilutions a session of the step is given, weakest first: the ladder.
    public var ladderRungs: Int

    public init(method: Method, ladderRungs: Int) {
        self.method = method
        self.ladderRungs = ladderRungs
    }

    /// The name the log and the listings use: `staircase` or `constant-stimuli`.
    public var name: String {
        switch method {
        case .staircase: "staircase"
        case .constantStimuli: "constant-stimuli"
        }
    }

    /// In words: `3-down-1-up staircase, step 1 rung, from rung 5 of 8, …`.
    public var words: String {
        switch method {
        case .staircase(let r):
            var stops: [String] = []
            if let n = r.stopAfterReversals { stops.append("\(n) reversals") }
            if let n = r.stopAfterTrials { stops.append("\(n) trials") }
            return
                "\(r.down)-down-1-up staircase, step \(r.step) rung\(r.step == 1 ? "" : "s"), from rung \(r.startRung) "
                + "of \(ladderRungs), stop after \(stops.joined(separator: " or "))"
                + (r.catchTrialRate > 0 ? ", catch-trial rate \(r.catchTrialRate)" : "")
        case .constantStimuli(let rungs, let blocks, let c):
            return
                "constant stimuli, rungs \(rungs.map(String.init).joined(separator: ",")) of \(ladderRungs), "
                + "\(blocks) block\(blocks == 1 ? "" : "s")" + (c > 0 ? ", \(c) catch trial(s) a block" : "")
        }
    }

    /// A ladder of `ladderRungs` stand-in concentrations: the rules' checks need only its length.
    func standInLadder() throws(ThresholdError) -> DilutionLadder {
        try DilutionLadder(concentrations: (0..<ladderRungs).map { Double($0 + 1) })
    }

    /// The rules checked against the ladder's length (Thresholds' checks, one message each).
    public func validate() throws(ThresholdError) {
        let ladder = try standInLadder()
        switch method {
        case .staircase(let rules): try rules.validate(for: ladder)
        case .constantStimuli(let rungs, let blocks, let c):
            _ = try ConstantStimuli(ladder: ladder, rungs: rungs, blocks: blocks, catchTrialsPerBlock: c)
        }
    }

    /// The block's length: constant stimuli fix it; a staircase runs at most the exercise's
    /// trials, and fewer if its own `stop_after_trials` says so (or once its reversals are in).
    public func trials(exerciseTrials: Int) -> Int {
        switch method {
        case .staircase(let r): min(exerciseTrials, r.stopAfterTrials ?? exerciseTrials)
        case .constantStimuli(let rungs, let blocks, let c): blocks * (rungs.count + c)
        }
    }
}

/// What a threshold trial presented and what the procedure made of its answer: one row of the
/// log's `trial_procedure` table (docs/session-log.md).
public struct ProcedureTrialState: Sendable, Hashable, Codable {
    /// `staircase` or `constant-stimuli`.
    public var procedure: String
    /// The rung presented (0: the weakest); nil on a catch trial.
    public var rung: Int?
    public var catchTrial: Bool
    /// The staircase's step after this answer: -1 down (weaker), +1 up (stronger), 0 none.
    /// Always 0 for constant stimuli.
    public var direction: Int
    /// This answer turned the staircase.
    public var reversal: Bool
    /// Reversals so far, this one counted.
    public var reversals: Int
    /// The rung the next target trial will get (nil once stopped, and for constant stimuli).
    public var nextRung: Int?
    /// The procedure has stopped after this trial (no further trial runs).
    public var stopped: Bool

    public init(
        procedure: String, rung: Int?, catchTrial: Bool, direction: Int = 0, reversal: Bool = false,
        reversals: Int = 0, nextRung: Int? = nil, stopped: Bool = false
    ) {
        self.procedure = procedure
        self.rung = rung
        self.catchTrial = catchTrial
        self.direction = direction
        self.reversal = reversal
        self.reversals = reversals
        self.nextRung = nextRung
        self.stopped = stopped
    }

    /// `down`, `up` or `none`: the direction in the log's words.
    public var directionWord: String { direction < 0 ? "down" : direction > 0 ? "up" : "none" }
}

/// A procedure running over one session: its plan (catch trials and, for constant stimuli, the
/// rungs, decided ahead from the session's seed) and the answers so far. Pure and a value;
/// recording an answer allocates nothing (the staircase reserves its room), so the station
/// runs it on its hot thread.
public struct ThresholdRun: Sendable {
    public let procedure: ThresholdProcedure
    /// Trial by trial, what is known before any answer: a catch trial, or a target (its rung
    /// for constant stimuli; the staircase's rung is decided as the answers come in).
    public let plan: [NextTrial]
    private var staircase: Staircase?

    /// `trials`: the block's length (`ThresholdProcedure.trials`). The seed draws the catch
    /// trials (a staircase: one draw per trial at the rules' rate, Thresholds' `next`), or
    /// shuffles the constant stimuli's blocks.
    public init(procedure: ThresholdProcedure, trials: Int, seed: UInt64) throws(ThresholdError) {
        self.procedure = procedure
        let ladder = try procedure.standInLadder()
        var random = SeededGenerator(seed: seed ^ 0x7468_7265_7368_6F6C)  // "threshol": apart from the layouts' draws
        switch procedure.method {
        case .staircase(let rules):
            let fresh = try Staircase(rules: rules, ladder: ladder)
            // A staircase with no answers never stops: each `next` is one draw, catch or not.
            plan = (0..<trials).map { _ in
                fresh.next(using: &random) == .catchTrial ? .catchTrial : .target(rung: rules.startRung)
            }
            staircase = fresh
        case .constantStimuli(let rungs, let blocks, let c):
            let method = try ConstantStimuli(ladder: ladder, rungs: rungs, blocks: blocks, catchTrialsPerBlock: c)
            plan = Array(method.order(using: &random).prefix(trials))
            staircase = nil
        }
    }

    /// Whether trial `index` (0-based) has no target: decided ahead.
    public func isCatchTrial(_ index: Int) -> Bool { index < plan.count && plan[index] == .catchTrial }

    /// Whether the procedure has stopped: no further trial runs.
    public var hasStopped: Bool { staircase?.hasStopped ?? false }

    /// What trial `index` presents now: stopped, a catch trial, or a target at a rung.
    public func next(trial index: Int) -> NextTrial {
        guard index < plan.count, !hasStopped else { return .stopped }
        switch plan[index] {
        case .catchTrial: return .catchTrial
        case .stopped: return .stopped
        case .target(let rung): return staircase.map { .target(rung: $0.rung) } ?? .target(rung: rung)
        }
    }

    /// Records trial `index`'s outcome and answers the state it leaves. An aborted trial is no
    /// answer: the staircase stays where it was (the next target trial gets the same rung).
    /// Nil for an index past the plan, or after the procedure stopped.
    public mutating func record(trial index: Int, outcome: TrialOutcome) -> ProcedureTrialState? {
        let asked = next(trial: index)
        let rung: Int?
        switch asked {
        case .stopped: return nil
        case .catchTrial: rung = nil
        case .target(let r): rung = r
        }
        var state = ProcedureTrialState(procedure: procedure.name, rung: rung, catchTrial: rung == nil)
        guard var s = staircase else {
            state.stopped = index + 1 >= plan.count
            return state
        }
        // Taken out while it changes, so its arrays are not shared (no copy, no allocation).
        staircase = nil
        let before = s.reversals.count
        if outcome != .aborted {
            let answer: ThresholdTrial =
                rung.map { .target(rung: $0, found: outcome == .hit) } ?? .catchTrial(indicated: outcome == .falseAlert)
            // The rung is the staircase's own and it has not stopped: the answer is taken.
            try? s.record(answer)
            state.direction = s.lastMove
        }
        state.reversal = s.reversals.count > before
        state.reversals = s.reversals.count
        state.stopped = s.hasStopped || index + 1 >= plan.count
        state.nextRung = state.stopped ? nil : s.rung
        staircase = s
        return state
    }
}
