// Groups of figures for a block or a session: overall, per dog, per sample, per station.
// Counting is `Tally`'s (Figures.swift); this only files trials into groups.

/// Scores for a run of trials: overall, per dog, per sample, per station.
public struct Scoreboard: Sendable, Hashable {
    public private(set) var overall = Tally()
    public private(set) var byDog: [String: Tally] = [:]
    /// Keyed by sample id.
    public private(set) var bySample: [String: Tally] = [:]
    /// Keyed by 1-based station number.
    public private(set) var byStation: [Int: Tally] = [:]

    public init() {}

    /// Adds a finished (or aborted) trial.
    public mutating func add(_ trial: ScoredTrial, dog: String = "") {
        overall.add(trial)
        byDog[dog, default: Tally()].add(trial)
        for station in trial.stations {
            byStation[station.station, default: Tally()].add(trial, station: station)
            if let sample = station.sample { bySample[sample, default: Tally()].add(trial, station: station) }
        }
    }
}

/// Follows one dog on one step: the trial results in order, and whether the step's criterion is met.
public struct GraduationTracker: Sendable, Hashable {
    public let criterion: GraduationCriterion?
    /// Correct (true) or not, oldest first; aborted trials are left out.
    public private(set) var results: [Bool] = []
    /// The number of trials after which the criterion was first met.
    public private(set) var graduatedAfter: Int? = nil

    public init(criterion: GraduationCriterion?, results: [Bool] = []) {
        self.criterion = criterion
        for r in results { _ = record(correct: r) }
    }

    /// Records a trial; returns true if this trial met the criterion for the first time.
    @discardableResult
    public mutating func record(_ outcome: TrialOutcome) -> Bool {
        guard outcome != .aborted else { return false }
        return record(correct: outcome.isCorrect)
    }

    @discardableResult
    public mutating func record(correct: Bool) -> Bool {
        results.append(correct)
        guard graduatedAfter == nil, let criterion, criterion.isMet(by: results) else { return false }
        graduatedAfter = results.count
        return true
    }

    public var graduated: Bool { graduatedAfter != nil }

    /// How far along, 0...1; a step without criterion is judged by exercises (see `PhaseProgress`).
    public var progress: Double {
        if graduated { return 1 }
        return criterion?.progress(results) ?? 0
    }
}

/// A dog's progress through a program: each step's and each phase's share done, 0...1. The
/// one definition every screen and export uses (README, "Progress").
///
/// - A step with a criterion: the criterion's progress over the step's scored trials, 1 once met.
/// - A step without one (the study: "once the exercises have been completed, the training
///   will proceed to the next step"): the share of its exercises' required rounds done, where
///   each exercise must be done as often as `Step.rounds(for:)` says (the project's reading).
/// - A phase: the mean of its steps; 1 once every step is passed.
public struct ProgramProgress: Sendable, Hashable {
    public struct StepRecord: Sendable, Hashable {
        public var tracker: GraduationTracker
        /// Finished (not aborted) rounds or trials per exercise id.
        public var exerciseRounds: [String: Int] = [:]
        /// Passed by a milestone in the log (which may predate this program's criterion).
        public var passedByMilestone = false
    }

    public let program: Program
    /// Keyed by "phase-id/step-id".
    public private(set) var steps: [String: StepRecord] = [:]

    public init(program: Program) {
        self.program = program
        for phase in program.phases {
            for step in phase.steps {
                steps[Self.key(phase.id, step.id)] = StepRecord(tracker: GraduationTracker(criterion: step.criterion))
            }
        }
    }

    static func key(_ phase: String, _ step: String) -> String { "\(phase)/\(step)" }

    /// Records a trial (or trainer-led round) of an exercise on a step; returns true if the
    /// step's criterion was met with it.
    @discardableResult
    public mutating func record(_ outcome: TrialOutcome, phase: String, step: String, exercise: String? = nil)
        -> Bool
    {
        let key = Self.key(phase, step)
        guard steps[key] != nil else { return false }
        if outcome != .aborted, let exercise { steps[key]?.exerciseRounds[exercise, default: 0] += 1 }
        return steps[key]?.tracker.record(outcome) ?? false
    }

    /// Marks a step passed because the log holds its milestone.
    public mutating func milestone(phase: String, step: String) {
        steps[Self.key(phase, step)]?.passedByMilestone = true
    }

    /// Whether the step is passed: its milestone, its criterion met, or (without a
    /// criterion) every exercise done as often as required.
    public func passed(phase: Phase, step: Step) -> Bool {
        stepProgress(phase: phase, step: step) >= 1
    }

    /// A step's progress, 0...1.
    public func stepProgress(phase: Phase, step: Step) -> Double {
        guard let record = steps[Self.key(phase.id, step.id)] else { return 0 }
        if record.passedByMilestone { return 1 }
        if step.criterion != nil { return record.tracker.progress }
        return step.exerciseProgress(rounds: record.exerciseRounds)
    }

    /// A phase's progress, 0...1: the mean of its steps' progress.
    public func phaseProgress(_ phase: Phase) -> Double {
        guard !phase.steps.isEmpty else { return 0 }
        return phase.steps.reduce(0.0) { $0 + stepProgress(phase: phase, step: $1) } / Double(phase.steps.count)
    }

    /// Each phase's progress as a whole percentage (rounded down: 100 only when complete).
    public var phasePercentages: [(phase: String, percent: Int)] {
        program.phases.map { ($0.id, Int((phaseProgress($0) * 100).rounded(.down))) }
    }
}

extension Step {
    /// How many finished rounds (trainer-led) or scored trials (automated) of an exercise make
    /// it done, for a step without a criterion: every repetition the program allows (the study
    /// lets an exercise be performed up to four times), or one block of its trials. The
    /// project's reading of the study's "once the exercises have been completed".
    public func rounds(for exercise: Exercise) -> Int {
        max(1, mode == .trainerLed ? exercise.repeats : exercise.trials)
    }

    /// The share of the step's exercises done, 0...1, from finished rounds per exercise id.
    public func exerciseProgress(rounds done: [String: Int]) -> Double {
        guard !exercises.isEmpty else { return 1 }
        let required = exercises.reduce(0) { $0 + rounds(for: $1) }
        let have = exercises.reduce(0) { $0 + min(done[$1.id] ?? 0, rounds(for: $1)) }
        return Double(have) / Double(required)
    }

    /// Words for what completes the step: its criterion, or its exercises' rounds.
    public var completionRule: String {
        if let criterion { return criterion.description }
        let each = exercises.map { "exercise \($0.id) \(rounds(for: $0)) \(mode == .trainerLed ? "rounds" : "trials")" }
        return "each exercise done (\(each.joined(separator: ", ")))"
    }
}
