// Scores as the researcher reports them: hits, misses, false alerts and correct rejections,
// sensitivity and specificity with Wilson 95 % intervals, latency and search time.
//
// Station-level counting (Ehmann 2012 counts 71 of 100 targets found, 372 of 400 controls
// passed): each station of a finished trial is one presentation of its sample.
//   target station: indicated -> hit, not indicated -> miss;
//   other station the dog examined (visited): indicated -> false alert, not -> correct rejection.
// A non-target station the dog never visited (the trial ended first) was not passed by the dog
// and is counted apart as `notExamined`, so an early hit does not inflate specificity.

/// Counts for one group of presentations (a session, a dog, a sample, a station).
public struct Tally: Sendable, Hashable, Codable {
    public var hits = 0
    public var misses = 0
    public var falseAlerts = 0
    public var correctRejections = 0
    /// Non-target presentations the dog never visited.
    public var notExamined = 0
    /// Sum and count of latencies to the first indication, and of search times.
    public var latencySum: Nanoseconds = 0
    public var latencyCount = 0
    public var searchTimeSum: Nanoseconds = 0
    public var searchTimeCount = 0

    public init() {}

    /// Hits among target presentations.
    public var sensitivity: Proportion { Proportion(successes: hits, trials: hits + misses) }
    /// Correct rejections among examined non-target presentations.
    public var specificity: Proportion {
        Proportion(successes: correctRejections, trials: correctRejections + falseAlerts)
    }
    public var meanLatencySeconds: Double? {
        latencyCount > 0 ? Double(latencySum) / Double(latencyCount) / 1e9 : nil
    }
    public var meanSearchTimeSeconds: Double? {
        searchTimeCount > 0 ? Double(searchTimeSum) / Double(searchTimeCount) / 1e9 : nil
    }

    public static func + (a: Tally, b: Tally) -> Tally {
        var t = a
        t.hits += b.hits
        t.misses += b.misses
        t.falseAlerts += b.falseAlerts
        t.correctRejections += b.correctRejections
        t.notExamined += b.notExamined
        t.latencySum += b.latencySum
        t.latencyCount += b.latencyCount
        t.searchTimeSum += b.searchTimeSum
        t.searchTimeCount += b.searchTimeCount
        return t
    }
}

/// Scores for a session (or any run of trials): overall, per dog, per sample, per station,
/// and the trial-level outcomes.
public struct Scoreboard: Sendable, Hashable {
    /// Station-level counts over everything.
    public private(set) var overall = Tally()
    public private(set) var byDog: [String: Tally] = [:]
    public private(set) var bySample: [String: Tally] = [:]
    public private(set) var byStation: [Int: Tally] = [:]
    /// Trial-level outcomes.
    public private(set) var outcomes: [TrialOutcome: Int] = [:]
    public private(set) var trials = 0

    public init() {}

    /// Adds a finished trial. Aborted trials count in `outcomes` only.
    public mutating func add(_ trial: TrialSummary, layout: TrialLayout, dog: String = "") {
        trials += 1
        outcomes[trial.outcome, default: 0] += 1
        guard trial.outcome != .aborted else { return }
        var dogTally = Tally()
        for (station, content) in layout.stations.enumerated() {
            var t = Tally()
            let indicated = trial.indicated(station)
            if content.kind == .target {
                if indicated { t.hits = 1 } else { t.misses = 1 }
            } else if indicated {
                t.falseAlerts = 1
            } else if trial.visited(station) {
                t.correctRejections = 1
            } else {
                t.notExamined = 1
            }
            byStation[station, default: Tally()] = byStation[station, default: Tally()] + t
            if let id = content.sampleID { bySample[id, default: Tally()] = bySample[id, default: Tally()] + t }
            dogTally = dogTally + t
        }
        // Latency and search time belong to the trial, not to a station.
        if let latency = trial.latency {
            dogTally.latencySum += latency
            dogTally.latencyCount += 1
        }
        dogTally.searchTimeSum += trial.searchTime
        dogTally.searchTimeCount += 1
        overall = overall + dogTally
        byDog[dog, default: Tally()] = byDog[dog, default: Tally()] + dogTally
    }

    /// Share of scored trials (not aborted) that were correct (hit or correct rejection).
    public var trialAccuracy: Proportion {
        let correct = (outcomes[.hit] ?? 0) + (outcomes[.correctRejection] ?? 0)
        let scored = trials - (outcomes[.aborted] ?? 0)
        return Proportion(successes: correct, trials: scored)
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
