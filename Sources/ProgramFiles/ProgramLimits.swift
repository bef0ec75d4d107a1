import TrainingEngine

// The range of every number a program file may hold: the project's rules, not the study's.
// Each is wide enough for any real lineup and narrow enough that nothing downstream (a block's
// layouts, a deadline in nanoseconds, a sum of counts) can overflow or exhaust memory. The
// reasons are in docs/programs.md, "Ranges"; the loader names the range when it refuses.

/// The project's ranges for the numbers of a program file.
public enum ProgramLimits {
    /// A lineup's stations: the most a board may have (StationConfig's `maximumStations`).
    public static let stations = 1...16
    /// Seconds a nose must stay for an indication: well beyond any dog's hold.
    public static let holdSeconds = 0.0...60
    /// Seconds between automated trials: up to an hour's break.
    public static let interTrialSeconds = 0.0...3600
    /// An exercise's length or a trial's search time: up to an hour, as `session start --duration`.
    public static let durationSeconds = 0.0...3600
    /// Rounds of one exercise in a session (the study: up to four).
    public static let repeats = 1...100
    /// Trials in a block: the most `session start --trials` accepts.
    public static let trials = 1...10_000
    /// Trials in a row with the target in the same station (a longer run than a block is no limit).
    public static let maxSameStationInARow = 1...10_000
    /// A sample's presentations, in all or to one dog.
    public static let maxUses = 1...1_000_000
    /// The trials a criterion looks at (`n`, `correct`, `min_trials`, `window`): a criterion
    /// needing more could never be met in a dog's training on one step.
    public static let criterionTrials = 1...1_000
    /// A threshold step's ladder: 2 dilutions up to a ladder of `samples add-ladder`'s most
    /// steps (30) and its stock.
    public static let ladderRungs = 2...31
    /// Finds in a row before a staircase steps down: 1-down-1-up to 10-down-1-up.
    public static let staircaseDown = 1...10
    /// A staircase's reversals before it stops (the 2024 PLoS One study: 8).
    public static let reversals = 1...1_000
    /// The method of constant stimuli's blocks (each rung once a block) and catch trials a block.
    public static let blocks = 1...1_000
    public static let catchTrialsPerBlock = 0...100

    /// Whether the step's and exercise's times and counts are within the ranges, so a deadline
    /// or a block built from them cannot overflow; nil if so, else the key and its range. For a
    /// `Program` built in code rather than read (the loader already refuses these).
    public static func outOfRange(step: Step, exercise: Exercise) -> String? {
        if let hold = step.holdSeconds, !(hold > 0 && holdSeconds.contains(hold)) {
            return "hold_s is \(hold), outside above 0 to \(holdSeconds.upperBound)"
        }
        if !(step.interTrialSeconds > 0 && interTrialSeconds.contains(step.interTrialSeconds)) {
            return "inter_trial_s is \(step.interTrialSeconds), outside above 0 to \(interTrialSeconds.upperBound)"
        }
        if !(exercise.durationSeconds > 0 && durationSeconds.contains(exercise.durationSeconds)) {
            return "duration_s is \(exercise.durationSeconds), outside above 0 to \(durationSeconds.upperBound)"
        }
        if !stations.contains(step.lineup.stations) {
            return
                "lineup.stations is \(step.lineup.stations), outside \(stations.lowerBound) to \(stations.upperBound)"
        }
        if !repeats.contains(exercise.repeats) {
            return "repeats is \(exercise.repeats), outside \(repeats.lowerBound) to \(repeats.upperBound)"
        }
        if !trials.contains(exercise.trials) {
            return "trials is \(exercise.trials), outside \(trials.lowerBound) to \(trials.upperBound)"
        }
        return nil
    }
}
