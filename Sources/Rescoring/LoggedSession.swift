// What the re-scorer reads: a session's log as plain values. Built by SessionLog from the log's
// rows (`LogReader.loggedForRescoring`) and by the property tests from the engine's actions; it
// shares no type and no code with TrainingEngine, so the two scorings agree only if the rules do.

/// How a trial ended, in the log's words.
public enum Verdict: String, Sendable, Hashable, Codable {
    case hit
    case falseAlert = "false-alert"
    case miss
    case correctRejection = "correct-rejection"
    case aborted
}

/// The step's rules as the session's settings logged them (times in nanoseconds).
public struct ScoringRules: Sendable, Hashable, Codable {
    public enum Mode: String, Sendable, Hashable, Codable {
        case trainerLed = "trainer-led"
        case automated
        case doubleBlind = "double-blind"
    }
    public var mode: Mode
    public var hold: Int64
    public var holdTolerance: Int64
    public var searchTimeout: Int64
    /// A trainer-led round's length.
    public var roundLength: Int64
    public var endOnFalseAlert: Bool
    /// A station active this long is stuck (0: never).
    public var stuckAfter: Int64
    /// The debounce window: a level settled after chatter is known when its window closes
    /// (0: a log from before the settings kept it, where it is taken at its own time).
    public var debounce: Int64

    public init(
        mode: Mode, hold: Int64, holdTolerance: Int64, searchTimeout: Int64, roundLength: Int64,
        endOnFalseAlert: Bool, stuckAfter: Int64, debounce: Int64 = 0
    ) {
        self.mode = mode
        self.hold = hold
        self.holdTolerance = holdTolerance
        self.searchTimeout = searchTimeout
        self.roundLength = roundLength
        self.endOnFalseAlert = endOnFalseAlert
        self.stuckAfter = stuckAfter
        self.debounce = debounce
    }
}

/// One row of the log that the re-scorer reads, in the log's order. Stations are the log's
/// numbers (1-based, the board's); times are the station's monotonic nanoseconds.
public enum LoggedInput: Sendable, Hashable {
    /// A station's level as the debouncer passed it: a raw edge it did not take for chatter.
    /// `known`: when the station read it, if after its timers passed its stamp (nil: in time).
    case level(station: Int, active: Bool, at: Int64, known: Int64? = nil)
    /// The level a station settled at after chatter, stamped with the edge that set it; the
    /// station learns it when the debounce window the last level opened closes, or at `known`
    /// when it settled it only after deciding its timers past that (nil: in time).
    case settled(station: Int, active: Bool, at: Int64, known: Int64? = nil)
    /// A trainer's press, with the station the log attributed it to (nil: none).
    case press(click: Bool, station: Int?, at: Int64)
    /// A search's start cue, or a trainer-led round's.
    case start(at: Int64)
    /// A sensor fault as logged: stuck, or a storm (chatter), from `at`.
    case stuck(station: Int, at: Int64)
    case chatter(station: Int, at: Int64)
    /// A stuck or stormy station trusted again.
    case recovered(station: Int, at: Int64)
    /// An indication the log holds (compared, never used to score).
    case indication(station: Int, at: Int64)
    /// lineupd went on with the session after it stopped (a resume, perhaps after a reboot, whose
    /// monotonic clock starts again): the stations `active` as it went on are the levels from
    /// then, whatever the log said before; the trial running when it stopped ended with it, and
    /// no visit, timer, stuck or storm outlives it.
    case resumed(active: Set<Int>, at: Int64)
}

/// A trial's row as the log holds it (after corrections are not wanted: the station's own).
public struct TrialAsLogged: Sendable, Hashable {
    public var number: Int
    public var startedAt: Int64
    public var endedAt: Int64
    /// The step's stations in this trial, in the layout's order, and the target's (nil: none).
    public var stations: [Int]
    public var target: Int?
    public var outcome: Verdict
    public var indicatedStation: Int?
    /// The stations the trial's row says were indicated (nil: logged before the log kept it).
    public var indicated: Set<Int>?

    public init(
        number: Int, startedAt: Int64, endedAt: Int64, stations: [Int], target: Int?, outcome: Verdict,
        indicatedStation: Int?, indicated: Set<Int>?
    ) {
        self.number = number
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.stations = stations
        self.target = target
        self.outcome = outcome
        self.indicatedStation = indicatedStation
        self.indicated = indicated
    }
}

/// A session as the re-scorer reads it.
public struct LoggedSession: Sendable, Hashable {
    public var session: String
    public var rules: ScoringRules
    public var inputs: [LoggedInput]
    public var trials: [TrialAsLogged]
    /// A threshold session's procedure and its rows (nil: any other session).
    public var procedure: LoggedProcedure? = nil
    /// Each station's name by its number, as the session's board named it (empty: numbers
    /// only): a disagreement names a station as a person reads it, `B (2)`.
    public var stationNames: [Int: String] = [:]

    public init(session: String, rules: ScoringRules, inputs: [LoggedInput], trials: [TrialAsLogged]) {
        self.session = session
        self.rules = rules
        self.inputs = inputs
        self.trials = trials
    }
}

/// Where the log and the re-scorer disagree about one trial.
public struct Disagreement: Sendable, Hashable, Codable {
    public var session: String
    /// The trial's number (from 1); nil for a press outside every trial.
    public var trial: Int?
    /// What is compared: outcome, indicated station, indicated stations, indications, end, press.
    public var what: String
    public var logSays: String
    public var rescorerSays: String

    public init(session: String, trial: Int?, what: String, logSays: String, rescorerSays: String) {
        self.session = session
        self.trial = trial
        self.what = what
        self.logSays = logSays
        self.rescorerSays = rescorerSays
    }

    enum CodingKeys: String, CodingKey {
        case session, trial, what
        case logSays = "log_says"
        case rescorerSays = "rescorer_says"
    }

    /// One line: session, trial, what the log says, what the re-scorer says.
    public var line: String {
        let where_ = trial.map { "trial \($0)" } ?? "between trials"
        return
            "session \(session.prefix(8)) \(where_): \(what): the log says \(logSays), the re-scorer says \(rescorerSays)"
    }
}
