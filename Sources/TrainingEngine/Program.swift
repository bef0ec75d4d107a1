// A training program as the study describes it: learning objectives (phases) made of steps
// made of exercises. Programs are data: a TOML file, read and checked by the ProgramFiles
// module's loader; `validate(stationCount:)` here checks one against a board.

/// A whole training program: the phases a dog goes through, in order.
public struct Program: Sendable, Hashable {
    /// A short name used on the command line (`study`, `research-5-station`).
    public var name: String
    public var title: String
    public var description: String
    public var phases: [Phase]
    /// Where it was read from (a path, or `built-in:study.toml`), for messages.
    public var source: String
    /// The program file's text as it was read: what the session log keeps, so a session can
    /// always be traced to the exact program it ran (and its criteria read back).
    public var text: String = ""

    public init(
        name: String, title: String, description: String = "", phases: [Phase], source: String
    ) {
        self.name = name
        self.title = title
        self.description = description
        self.phases = phases
        self.source = source
    }

    /// The largest lineup any step needs.
    public var stationsNeeded: Int {
        phases.flatMap(\.steps).map(\.lineup.stations).max() ?? 0
    }

    /// Checks that every step's lineup fits a board with `stationCount` stations.
    public func validate(stationCount: Int) throws(ProgramError) {
        for (p, phase) in phases.enumerated() {
            for (s, step) in phase.steps.enumerated() where step.lineup.stations > stationCount {
                throw ProgramError(
                    file: source, keyPath: "phases[\(p)].steps[\(s)].lineup.stations",
                    problem:
                        "step \"\(step.title)\" needs \(step.lineup.stations) stations but the board has \(stationCount)"
                )
            }
        }
    }

    /// Looks a step up by its phase and step ids.
    public func step(phase phaseID: String, step stepID: String) -> Step? {
        phases.first { $0.id == phaseID }?.steps.first { $0.id == stepID }
    }
}

/// A learning objective: "learning to indicate", "learning the target scent", "discrimination".
public struct Phase: Sendable, Hashable, Identifiable {
    public var id: String
    public var title: String
    /// The purpose and goal, shown to the trainer when the phase is chosen.
    public var description: String
    public var steps: [Step]

    public init(id: String, title: String, description: String = "", steps: [Step]) {
        self.id = id
        self.title = title
        self.description = description
        self.steps = steps
    }
}

/// A step within a phase: one lineup set-up, some exercises, and when the dog may move on.
public struct Step: Sendable, Hashable, Identifiable {
    public var id: String
    public var title: String
    public var description: String
    /// How the session is run: the trainer clicks, or the station clicks by itself.
    public var mode: TrainingMode
    public var lineup: LineupSetup
    /// How long the nose must stay at one station to count as an indication (nil: the board's).
    public var holdSeconds: Double?
    /// The pause between automated trials.
    public var interTrialSeconds: Double
    /// When the dog has learnt the step; nil means the step is done once each exercise was done.
    public var criterion: GraduationCriterion?
    public var exercises: [Exercise]
    /// How an automated trial starts: the assistant's ready press, or by itself after the
    /// inter-trial interval (rigs whose containers need no reloading).
    public var ready: ReadyMode = .press
    /// What the stations' output lines (an LED or a valve per station, where the board has
    /// them) do on this step.
    public var stationOutputs: StationOutputs = .none
    /// Automated steps: whether a false alert ends the trial or the dog may search on and be
    /// clicked at the target (the trial is still scored a false alert).
    public var afterFalseAlert: AfterFalseAlert = .end
    /// A threshold step's procedure (issue 38): each trial's target dilution is its answer to
    /// the dog's trials so far; nil: every trial's target is chosen as on any step.
    public var procedure: ThresholdProcedure? = nil

    public init(
        id: String, title: String, description: String = "", mode: TrainingMode, lineup: LineupSetup,
        holdSeconds: Double? = nil, interTrialSeconds: Double = 10,
        criterion: GraduationCriterion? = nil,
        exercises: [Exercise]
    ) {
        self.id = id
        self.title = title
        self.description = description
        self.mode = mode
        self.lineup = lineup
        self.holdSeconds = holdSeconds
        self.interTrialSeconds = interTrialSeconds
        self.criterion = criterion
        self.exercises = exercises
    }
}

/// How an automated step's trials start.
public enum ReadyMode: String, Sendable, Hashable, Codable {
    /// The loading assistant presses ready once the containers hold the layout.
    case press
    /// The next trial starts by itself once the inter-trial interval is over and no station
    /// is active (an olfactometer, or containers that stay put). The project's option.
    case auto
}

/// What an automated trial does after a false alert. The study gives no rule (its sessions are
/// trainer-led); the project's default is `end`: the first indication is the dog's answer,
/// as in the double-blind tests this station runs (McCulloch 2006 and Walczak 2012 score the
/// first indication), and a click at the target after a wrong indication would reward
/// indicating everywhere. A training step may say `continue` to let the dog self-correct.
public enum AfterFalseAlert: String, Sendable, Hashable, Codable {
    /// The trial ends at the false alert, scored false alert, with no click.
    case end
    /// The dog may search on; a hold at the target is clicked, and the trial is still scored
    /// a false alert.
    case `continue`
}

/// What a step does with the stations' output lines (the project's option).
public enum StationOutputs: String, Sendable, Hashable, Codable {
    /// Left off.
    case none
    /// The step's stations lit while the containers are to be loaded (before each trial, or
    /// before each trainer-led round): the assistant sees which stations this step uses.
    case load
    /// The step's stations' outputs on while the dog searches (each trial, or each round):
    /// an olfactometer's valves open only while the dog is at work.
    case search
}

/// What the lineup holds for a step, and the rules for automated layouts.
public struct LineupSetup: Sendable, Hashable {
    /// Number of stations (scent containers) in the lineup.
    public var stations: Int
    /// How many stations hold the target (0 or 1) on a trial that has one.
    public var targets: Int
    public var controls: Int
    public var blanks: Int
    public var distractors: Int
    /// Share of trials with no target at all (0...1); the target's station then holds a control,
    /// or a blank if the step has no controls.
    public var noTargetShare: Double
    /// At most this many trials in a row with the target in the same station.
    public var maxSameStationInARow: Int
    /// A sample's maximum presentations in all, for samples registered without their own
    /// limit (`max_uses`); nil: no limit.
    public var maxUses: Int? = nil
    /// A sample's maximum presentations to one dog, for samples without their own limit
    /// (`max_uses_per_dog`); nil: no limit.
    public var maxUsesPerDog: Int? = nil
    /// Share of the trials with a target whose target the dog has never met
    /// (`novel_target_share`, rounded half away from zero to whole trials; targets only).
    public var novelTargetShare: Double = 0
    /// Every sample of every trial is one the dog has never met (`novel_only`): a test session.
    public var novelOnly: Bool = false

    public init(
        stations: Int, targets: Int = 1, controls: Int = 0, blanks: Int = 0, distractors: Int = 0,
        noTargetShare: Double = 0, maxSameStationInARow: Int = 2
    ) {
        self.stations = stations
        self.targets = targets
        self.controls = controls
        self.blanks = blanks
        self.distractors = distractors
        self.noTargetShare = noTargetShare
        self.maxSameStationInARow = maxSameStationInARow
    }

    /// The kind that replaces the target on a trial without one.
    public var fillerKind: SampleKind { controls > 0 ? .control : .blank }
}

/// One exercise: what the trainer does, for how long, how often it may be repeated.
public struct Exercise: Sendable, Hashable, Identifiable {
    public var id: String
    public var title: String
    /// What to do, shown to the trainer ("Set can on setting and reward when sniffed").
    public var instruction: String
    /// Trainer-led: the exercise's length. Automated: each trial's search time-out.
    public var durationSeconds: Double
    /// How many times in a session the exercise may be performed (the study: up to four).
    public var repeats: Int
    /// Automated steps: how many trials make a block.
    public var trials: Int

    public init(
        id: String, title: String, instruction: String, durationSeconds: Double = 10, repeats: Int = 4,
        trials: Int = 20
    ) {
        self.id = id
        self.title = title
        self.instruction = instruction
        self.durationSeconds = durationSeconds
        self.repeats = repeats
        self.trials = trials
    }
}

/// A criterion's verdict on a run of trials (`GraduationCriterion.verdict`): what every surface
/// that says "met", "passed" or "not yet" says, with the criterion named and the counts behind it.
public struct CriterionVerdict: Sendable, Hashable, Codable {
    /// The criterion in words (`90 % of the last 20 trials correct`).
    public var criterion: String
    public var met: Bool
    /// The criterion (of a list, the first) that is met; nil when none is.
    public var metBy: String?
    /// The counts it was judged on, in words (`14 of the last 20 correct`).
    public var evidence: String

    public init(criterion: String, met: Bool, metBy: String?, evidence: String) {
        self.criterion = criterion
        self.met = met
        self.metBy = metBy
        self.evidence = evidence
    }

    /// `met (…)` or `not met (…)`: the verdict with its counts.
    public var words: String { "\(met ? "met" : "not met") (\(evidence))" }
}

/// When a step is learnt. Evaluated after each trial on the step's trials in order.
public indirect enum GraduationCriterion: Sendable, Hashable, CustomStringConvertible {
    /// The last `n` trials all correct (McCulloch 2006: 30).
    case consecutiveCorrect(n: Int)
    /// At least `correct` correct trials, after at least `minTrials` trials (Walczak 2012: 40 in 100).
    case correctWithin(correct: Int, minTrials: Int)
    /// At least `accuracy` of the last `window` trials correct (Ratrix: 95 % of 20, 85 % of 200).
    case accuracyWindow(accuracy: Double, window: Int)
    /// Any one of these is enough.
    case anyOf([GraduationCriterion])

    /// Whether the criterion is met by these results (true = correct), oldest first.
    public func isMet<C: BidirectionalCollection<Bool>>(by results: C) -> Bool {
        progress(results) >= 1
    }

    /// The criterion's verdict on these results (true = correct), oldest first: met or not,
    /// which one of a list is met, and the counts it was judged on, in words. The one place a
    /// claim of "met" is decided: progress, milestones, the report and the page say what this says.
    public func verdict<C: BidirectionalCollection<Bool>>(_ results: C) -> CriterionVerdict {
        verdict(results, correct: results.lazy.filter { $0 }.count, run: results.reversed().prefix { $0 }.count)
    }

    /// `verdict(_:)` given the results' correct count and their last run of correct ones, which a
    /// tracker keeps as it goes (so a long history is not counted again after every trial).
    func verdict<C: BidirectionalCollection<Bool>>(_ results: C, correct: Int, run: Int) -> CriterionVerdict {
        let met = isMet(results, correct: correct, run: run)
        if case .anyOf(let list) = self {
            let each = list.map { $0.verdict(results, correct: correct, run: run) }
            return CriterionVerdict(
                criterion: description, met: met, metBy: each.first(where: \.met)?.criterion,
                evidence: each.map { "\($0.criterion): \($0.evidence)" }.joined(separator: "; "))
        }
        let evidence: String
        switch self {
        case .consecutiveCorrect:
            evidence = "the last \(run) correct in a row, of \(results.count) scored"
        case .correctWithin:
            evidence = "\(correct) correct of \(results.count) scored"
        case .accuracyWindow(_, let window):
            let last = results.suffix(window)
            let right = last.lazy.filter { $0 }.count
            evidence =
                last.count < window
                ? "\(right) correct of \(last.count) scored (the window of \(window) not yet full)"
                : "\(right) of the last \(window) correct"
        case .anyOf: evidence = ""
        }
        return CriterionVerdict(criterion: description, met: met, metBy: met ? description : nil, evidence: evidence)
    }

    /// `isMet(by:)`, from the counts a tracker keeps: the same answer (`GraduationTests` in
    /// TrainingEngineTests checks it on every prefix of random runs).
    func isMet<C: BidirectionalCollection<Bool>>(_ results: C, correct: Int, run: Int) -> Bool {
        switch self {
        case .consecutiveCorrect(let n): return run >= n
        case .correctWithin(let c, let m): return correct >= c && results.count >= m
        case .accuracyWindow: return isMet(by: results)
        case .anyOf(let list): return list.contains { $0.isMet(results, correct: correct, run: run) }
        }
    }

    /// How far along the criterion the dog is, 0...1 (1 = met).
    public func progress<C: BidirectionalCollection<Bool>>(_ results: C) -> Double {
        switch self {
        case .consecutiveCorrect(let n):
            guard n > 0 else { return 1 }
            var run = 0
            for r in results.reversed() {
                guard r else { break }
                run += 1
                if run >= n { break }
            }
            return min(1, Double(run) / Double(n))
        case .correctWithin(let correct, let minTrials):
            let done = results.count
            let right = results.lazy.filter { $0 }.count
            let a = correct > 0 ? Double(right) / Double(correct) : 1
            let b = minTrials > 0 ? Double(done) / Double(minTrials) : 1
            return min(1, a, b)
        case .accuracyWindow(let accuracy, let window):
            guard window > 0 else { return 1 }
            let last = results.suffix(window)
            let right = last.lazy.filter { $0 }.count
            // Until the window is full the dog cannot have met it; show how far it has filled.
            let needed = (accuracy * Double(window)).rounded(.up)
            guard needed > 0 else { return 1 }
            if last.count < window {
                return min(0.99, Double(right) / needed * Double(last.count) / Double(window))
            }
            return min(1, Double(right) / needed)
        case .anyOf(let list):
            return list.map { $0.progress(results) }.max() ?? 0
        }
    }

    /// The run of trials the criterion looks at: the window of an accuracy criterion, the `n`
    /// of n in a row, the minimum trials of c within m; for several, the first one's. The
    /// report's rolling accuracy uses it.
    public var window: Int {
        switch self {
        case .consecutiveCorrect(let n): return max(1, n)
        case .correctWithin(_, let minTrials): return max(1, minTrials)
        case .accuracyWindow(_, let window): return max(1, window)
        case .anyOf(let list): return list.first?.window ?? 20
        }
    }

    public var description: String {
        switch self {
        case .consecutiveCorrect(let n): return "\(n) consecutive correct trials"
        case .correctWithin(let c, let m): return "\(c) correct within at least \(m) trials"
        case .accuracyWindow(let a, let w):
            return "\(Int((a * 100).rounded())) % of the last \(w) trials correct"
        case .anyOf(let list): return list.map(\.description).joined(separator: ", or ")
        }
    }
}
