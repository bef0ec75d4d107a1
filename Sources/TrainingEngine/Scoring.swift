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

/// A dog's progress through a program, as percentages per phase (the study's phase view).
public struct ProgramProgress: Sendable, Hashable {
    public struct StepRecord: Sendable, Hashable {
        public var tracker: GraduationTracker
        /// Exercise ids performed at least once.
        public var exercisesDone: Set<String> = []
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

    /// Records a trial on a step; returns true if the step graduated with it.
    @discardableResult
    public mutating func record(_ outcome: TrialOutcome, phase: String, step: String) -> Bool {
        steps[Self.key(phase, step)]?.tracker.record(outcome) ?? false
    }

    /// Records that an exercise was performed (a trainer-led repetition, or a finished block).
    public mutating func exerciseDone(_ exercise: String, phase: String, step: String) {
        steps[Self.key(phase, step)]?.exercisesDone.insert(exercise)
    }

    /// A step's progress, 0...1: its criterion's progress, or without one the share of its
    /// exercises performed.
    public func stepProgress(phase: Phase, step: Step) -> Double {
        guard let record = steps[Self.key(phase.id, step.id)] else { return 0 }
        if step.criterion != nil { return record.tracker.progress }
        let done = step.exercises.filter { record.exercisesDone.contains($0.id) }.count
        return step.exercises.isEmpty ? 1 : Double(done) / Double(step.exercises.count)
    }

    /// Each phase's progress as a whole percentage: the mean of its steps' progress.
    public var phasePercentages: [(phase: String, percent: Int)] {
        program.phases.map { phase in
            let sum = phase.steps.reduce(0.0) { $0 + stepProgress(phase: phase, step: $1) }
            let mean = phase.steps.isEmpty ? 0 : sum / Double(phase.steps.count)
            return (phase.id, Int((mean * 100).rounded(.down)))
        }
    }
}
