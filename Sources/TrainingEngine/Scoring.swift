// A dog's progress on a program: each step's criterion or exercise rule, judged trial by trial.

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

    /// Correct results so far, and the run of correct ones at the end: kept as results come,
    /// so that judging after every trial costs no recount of the whole history.
    private var correctCount = 0
    private var run = 0

    @discardableResult
    public mutating func record(correct: Bool) -> Bool {
        results.append(correct)
        if correct {
            correctCount += 1
            run += 1
        } else {
            run = 0
        }
        guard graduatedAfter == nil, let criterion, criterion.isMet(results, correct: correctCount, run: run)
        else { return false }
        graduatedAfter = results.count
        return true
    }

    public var graduated: Bool { graduatedAfter != nil }

    /// The criterion's verdict on the results so far; once met it stays met (as the milestone
    /// does), saying after how many scored trials. Nil without a criterion.
    public var verdict: CriterionVerdict? {
        guard let criterion else { return nil }
        var v = criterion.verdict(results, correct: correctCount, run: run)
        if let after = graduatedAfter {
            v.met = true
            if v.metBy == nil { v.metBy = criterion.description }
            v.evidence = "met after \(after) scored trials; now \(v.evidence)"
        }
        return v
    }

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
///   will proceed to the next step", with no measure of success for its early steps): each
///   exercise done correctly as often as `Step.rounds(for:)` says, in a row (the project's
///   reading: `Step.exerciseCriterion`).
/// - A phase: the mean of its steps; 1 once every step is passed.
public struct ProgramProgress: Sendable, Hashable {
    public struct StepRecord: Sendable, Hashable {
        public var tracker: GraduationTracker
        /// Each exercise's rounds (or trials) in order, against the step's exercise rule, by
        /// exercise id (steps without a criterion).
        public var exerciseTrackers: [String: GraduationTracker] = [:]
        /// Passed by a milestone in the log (which may predate this program's criterion).
        public var passedByMilestone = false

        /// Finished (not aborted) rounds or trials per exercise id.
        public var exerciseRounds: [String: Int] { exerciseTrackers.mapValues(\.results.count) }
    }

    public let program: Program
    /// Keyed by "phase-id/step-id".
    public private(set) var steps: [String: StepRecord] = [:]

    public init(program: Program) {
        self.program = program
        for phase in program.phases {
            for step in phase.steps {
                var record = StepRecord(tracker: GraduationTracker(criterion: step.criterion))
                for exercise in step.exercises {
                    record.exerciseTrackers[exercise.id] = GraduationTracker(
                        criterion: step.exerciseCriterion(exercise))
                }
                steps[Self.key(phase.id, step.id)] = record
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
        if outcome != .aborted, let exercise {
            if steps[key]?.exerciseTrackers[exercise] == nil {
                // An exercise the program no longer has: counted, never enough on its own.
                steps[key]?.exerciseTrackers[exercise] = GraduationTracker(criterion: nil)
            }
            steps[key]?.exerciseTrackers[exercise]?.record(outcome)
        }
        return steps[key]?.tracker.record(outcome) ?? false
    }

    /// Marks a step passed because the log holds its milestone.
    public mutating func milestone(phase: String, step: String) {
        steps[Self.key(phase, step)]?.passedByMilestone = true
    }

    /// Whether the step is passed: its milestone, or its criterion's verdict (without a
    /// criterion, the exercise rule's) met.
    public func passed(phase: Phase, step: Step) -> Bool {
        stepProgress(phase: phase, step: step) >= 1
    }

    /// The step's verdict on the dog's trials (rounds) on it: its criterion, or without one
    /// each exercise's rule, met (once met it stays met, as the milestone does) or not, in words.
    public func verdict(phase: Phase, step: Step) -> StepVerdict {
        let record = steps[Self.key(phase.id, step.id)]
        if let criterion = step.criterion {
            let tracker = record?.tracker ?? GraduationTracker(criterion: criterion)
            let v = tracker.verdict ?? criterion.verdict(tracker.results)
            return StepVerdict(
                rule: step.completionRule, verdict: v, progress: tracker.progress, metAfter: tracker.graduatedAfter,
                inARow: [:])
        }
        var have = 0
        var required = 0
        var evidence: [String] = []
        var inARow: [String: Int] = [:]
        for exercise in step.exercises {
            let n = step.rounds(for: exercise)
            let tracker = record?.exerciseTrackers[exercise.id] ?? GraduationTracker(criterion: nil)
            let run = tracker.graduated ? n : tracker.results.reversed().prefix { $0 }.count
            inARow[exercise.id] = min(run, n)
            have += min(run, n)
            required += n
            let rounds = tracker.results.count
            let unit = step.mode == .trainerLed ? "round" : "trial"
            evidence.append(
                "exercise \(exercise.id): "
                    + (tracker.graduated
                        ? "\(n) correct in a row reached"
                        : "\(run) of \(n) correct in a row")
                    + " (\(rounds) \(unit)\(rounds == 1 ? "" : "s") done, \(tracker.results.filter { $0 }.count) correct)"
            )
        }
        let met = required == 0 || have >= required
        let v = CriterionVerdict(
            criterion: step.completionRule, met: met, metBy: met ? step.completionRule : nil,
            evidence: evidence.joined(separator: "; "))
        return StepVerdict(
            rule: step.completionRule, verdict: v, progress: required == 0 ? 1 : Double(have) / Double(required),
            metAfter: nil, inARow: inARow)
    }

    /// A step's progress, 0...1.
    public func stepProgress(phase: Phase, step: Step) -> Double {
        guard let record = steps[Self.key(phase.id, step.id)] else { return 0 }
        if record.passedByMilestone { return 1 }
        let v = verdict(phase: phase, step: step)
        return v.verdict.met ? 1 : min(v.progress, 0.99)
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

/// A step's verdict (`ProgramProgress.verdict`): its rule in words, the verdict on the dog's
/// trials with the counts behind it, and how far along, 0...1.
public struct StepVerdict: Sendable, Hashable, Codable {
    /// The step's criterion, or its exercise rule, in words (`Step.completionRule`).
    public var rule: String
    public var verdict: CriterionVerdict
    public var progress: Double
    /// The scored trials after which a criterion was first met.
    public var metAfter: Int?
    /// A step without criterion: each exercise's correct rounds in a row (at most its
    /// required, once reached), by exercise id.
    public var inARow: [String: Int]
}

extension Step {
    /// How many rounds (trainer-led) or scored trials (automated) of an exercise, correct in a
    /// row, make it done on a step without a criterion: every repetition the program allows
    /// (the study lets an exercise be performed up to four times), or one block of its trials.
    public func rounds(for exercise: Exercise) -> Int {
        max(1, mode == .trainerLed ? exercise.repeats : exercise.trials)
    }

    /// The rule of one exercise of a step without a criterion (the project's reading of the
    /// study's "once the exercises have been completed"): its last `rounds(for:)` rounds all
    /// correct. A round the trainer judged wrong, or a miss, is not an exercise completed.
    public func exerciseCriterion(_ exercise: Exercise) -> GraduationCriterion {
        .consecutiveCorrect(n: rounds(for: exercise))
    }

    /// Words for what completes the step: its criterion, or its exercises' rule.
    public var completionRule: String {
        if let criterion { return criterion.description }
        let unit = mode == .trainerLed ? "rounds" : "trials"
        let each = exercises.map { "exercise \($0.id): \(rounds(for: $0)) correct \(unit) in a row" }
        return "each exercise done correctly (\(each.joined(separator: ", ")))"
    }
}
