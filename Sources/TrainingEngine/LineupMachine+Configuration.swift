extension LineupMachine {
    public struct Configuration: Sendable, Hashable {
        public var mode: TrainingMode
        public var stationCount: Int
        /// Indication hold time T.
        public var hold: Nanoseconds
        /// Beam breaks shorter than this do not end a visit.
        public var holdTolerance: Nanoseconds
        /// Automated trials: how long the dog may search.
        public var searchTimeout: Nanoseconds
        public var interTrialInterval: Nanoseconds
        /// End the trial at the first false alert (otherwise the dog may go on and find the target).
        public var endOnFalseAlert: Bool
        /// Trainer-led: the exercise's length and how many times it may be performed.
        public var exerciseDuration: Nanoseconds
        public var exerciseRepeats: Int
        /// A station active this long is a stuck sensor (0: never). The project's default is
        /// 10 × the hold: far longer than any indication.
        public var stuckAfter: Nanoseconds
        /// A station never active over this many trials in which the dog searched (visited
        /// some station) is reported silent (0: never).
        public var silentAfterTrials: Int
        /// A loaded trial starts without the ready button, once no station is active (the
        /// step's `ready = "auto"`, for rigs that need no reloading).
        public var autoStart = false
        /// A storm: this many debounced edges of one station in a row, each within `chatterGap`
        /// of the last (0: never). A debouncer passes at most one edge per window, so a storm
        /// comes through at about one edge per window; 20 in a row under 10 ms (twice the default
        /// 5 ms window) is ~100 ms of 100 Hz flicker, which no nose makes. Argued, not measured.
        public var chatterEdges = 20
        public var chatterGap: Nanoseconds = 10_000_000
        /// A stormy station is trusted again at its first edge after this long without one.
        public var chatterQuiet: Nanoseconds = 250_000_000

        public init(
            mode: TrainingMode, stationCount: Int, hold: Nanoseconds = 2_000_000_000,
            holdTolerance: Nanoseconds = 150_000_000, searchTimeout: Nanoseconds = 60_000_000_000,
            interTrialInterval: Nanoseconds = 10_000_000_000, endOnFalseAlert: Bool = false,
            exerciseDuration: Nanoseconds = 10_000_000_000, exerciseRepeats: Int = 4, stuckAfter: Nanoseconds? = nil,
            silentAfterTrials: Int = 20
        ) {
            self.stuckAfter = stuckAfter ?? hold &* 10
            self.silentAfterTrials = silentAfterTrials
            self.mode = mode
            self.stationCount = stationCount
            self.hold = hold
            self.holdTolerance = holdTolerance
            self.searchTimeout = searchTimeout
            self.interTrialInterval = interTrialInterval
            self.endOnFalseAlert = endOnFalseAlert
            self.exerciseDuration = exerciseDuration
            self.exerciseRepeats = exerciseRepeats
        }

        /// A configuration for a program's step and exercise; `hold`/`tolerance` from the board
        /// unless the step sets its own hold.
        public init(
            step: Step, exercise: Exercise, stationCount: Int, hold: Nanoseconds,
            holdTolerance: Nanoseconds
        ) {
            self.init(
                mode: step.mode, stationCount: stationCount,
                hold: step.holdSeconds.map { nanoseconds(seconds: $0) } ?? hold,
                holdTolerance: holdTolerance,
                searchTimeout: nanoseconds(seconds: exercise.durationSeconds),
                interTrialInterval: nanoseconds(seconds: step.interTrialSeconds),
                exerciseDuration: nanoseconds(seconds: exercise.durationSeconds),
                exerciseRepeats: exercise.repeats)
            autoStart = step.ready == .auto
            endOnFalseAlert = step.afterFalseAlert == .end
        }
    }
}

extension LineupMachine.Configuration {
    /// The rules a trial is scored by, as the session's settings keep them (JSON values in
    /// text), so `lineupctl verify-scoring` can rescore every trial from the log alone. Keys
    /// are the log's; a key is never renamed (docs/figures.md, "How the re-scorer decides").
    public var loggedRules: [String: String] {
        [
            "mode": mode.rawValue, "hold_ns": "\(hold)", "hold_tolerance_ns": "\(holdTolerance)",
            "search_timeout_ns": "\(searchTimeout)", "round_ns": "\(exerciseDuration)",
            "end_on_false_alert": endOnFalseAlert ? "true" : "false", "stuck_after_ns": "\(stuckAfter)",
            "auto_start": autoStart ? "true" : "false",
        ]
    }
}

/// Kept with a running session (the station's resume file), so a session cut short goes on
/// by the same rules.
extension LineupMachine.Configuration: Codable {}
