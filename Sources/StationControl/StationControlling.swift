import TrainingEngine

// What the control requests carry and what the station answers: the values on the wire.
// The requests themselves, and the `StationControlling` calls that answer them, are in
// ControlCalls.swift.

/// Who is asking: the handler's view never sees a double-blind layout; the loading
/// assistant's does. Chosen by the client (`lineupctl layout --assistant`), because both are
/// members of the station's group: the refusal protects the blind from a slip, not an attack.
public enum ClientView: String, Sendable, Codable, Hashable {
    case handler
    case assistant
}

/// What `session start` asks for.
public struct SessionRequest: Sendable, Codable, Hashable {
    public var dog: String
    /// A built-in program's name (`study`, `research-5-station`).
    public var program: String
    /// `phase/step` ids within the program, e.g. `discriminate/2`.
    public var step: String
    /// An exercise id within the step; the step's first when nil.
    public var exercise: String?
    /// The program's step fixes the mode; nil takes it, and a mode that contradicts the
    /// step is refused.
    public var mode: TrainingMode?
    public var trials: Int?
    /// How many times this session does a trainer-led exercise (its rounds), within the
    /// exercise's bounds (`Exercise.repetitionBounds`: 1 to the program's repeats); nil: the
    /// program's repeats. lineupd refuses a count outside them, or on a step not trainer-led.
    public var repetitions: Int?
    /// The samples to use (labels or ids), at least one per station that is not a blank in
    /// any trial: every target and control station of an automated or double-blind session
    /// is laid out with a sample the log knows. Empty: refused unless `unlabelled`.
    public var samples: [String]
    /// The trainer says so: run without samples, the stations labelled by kind only. The
    /// session's settings and every listing say so.
    public var unlabelled: Bool?
    public var handler: String?
    public var seed: UInt64?
    /// A block laid out in advance (a researcher's layout sheet): the kind in each station,
    /// trial by trial. When given, it replaces the generated layouts and sets the trial count.
    public var layouts: [[SampleKind]]?
    /// True to add `dog` to the log as a new dog; otherwise an unknown name is refused, so a
    /// misspelt name never starts a second record of the same animal. Absent means false.
    public var newDog: Bool?
    /// The exercise's duration in seconds for this session (trainer-led: each repetition;
    /// automated: each trial's search time-out), instead of the program's. The study's screen
    /// lets the trainer choose it.
    public var durationSeconds: Double?
    /// The board stations the step uses (names or numbers, in the lineup's order), as many as
    /// its containers; nil: the board's first N.
    public var stations: [String]?
    /// Who asks: lineupctl at the station (nil or `station`), or the station's page for one of
    /// its accounts (`page`, set by lineup-web whatever the browser sent). lineupd decides by it
    /// who may fix a double-blind step's seed or layouts (`SessionAsker.mayFixBlindLayouts`).
    public var asker: SessionAsker?
    /// The room the session runs in (issue 38): °C, relative humidity in %, free text. lineupd
    /// checks them (`SessionConditions.checked`) before anything is written.
    public var temperatureC: Double?
    public var humidityPercent: Double?
    public var conditions: String?

    public init(
        dog: String, program: String, step: String, exercise: String? = nil, mode: TrainingMode? = nil,
        trials: Int? = nil,
        samples: [String] = [], handler: String? = nil, seed: UInt64? = nil, layouts: [[SampleKind]]? = nil,
        newDog: Bool? = nil, unlabelled: Bool? = nil
    ) {
        self.newDog = newDog
        self.unlabelled = unlabelled
        self.dog = dog
        self.program = program
        self.step = step
        self.exercise = exercise
        self.mode = mode
        self.trials = trials
        self.samples = samples
        self.handler = handler
        self.seed = seed
        self.layouts = layouts
    }

    /// As synthesized, except that `samples` may be left out on the wire (none given).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        dog = try c.decode(String.self, forKey: .dog)
        program = try c.decode(String.self, forKey: .program)
        step = try c.decode(String.self, forKey: .step)
        exercise = try c.decodeIfPresent(String.self, forKey: .exercise)
        mode = try c.decodeIfPresent(TrainingMode.self, forKey: .mode)
        trials = try c.decodeIfPresent(Int.self, forKey: .trials)
        repetitions = try c.decodeIfPresent(Int.self, forKey: .repetitions)
        samples = try c.decodeIfPresent([String].self, forKey: .samples) ?? []
        unlabelled = try c.decodeIfPresent(Bool.self, forKey: .unlabelled)
        handler = try c.decodeIfPresent(String.self, forKey: .handler)
        seed = try c.decodeIfPresent(UInt64.self, forKey: .seed)
        layouts = try c.decodeIfPresent([[SampleKind]].self, forKey: .layouts)
        newDog = try c.decodeIfPresent(Bool.self, forKey: .newDog)
        durationSeconds = try c.decodeIfPresent(Double.self, forKey: .durationSeconds)
        stations = try c.decodeIfPresent([String].self, forKey: .stations)
        asker = try c.decodeIfPresent(SessionAsker.self, forKey: .asker)
        temperatureC = try c.decodeIfPresent(Double.self, forKey: .temperatureC)
        humidityPercent = try c.decodeIfPresent(Double.self, forKey: .humidityPercent)
        conditions = try c.decodeIfPresent(String.self, forKey: .conditions)
    }
}

/// Who asks for a session to start.
public enum SessionAsker: String, Sendable, Codable, Hashable {
    /// `lineupctl session start` over the control socket: a member of the station's group at
    /// the station (the researcher who plans a block).
    case station
    /// The station's page, for any of its accounts: a trainer or admin is the handler's side.
    case page

    /// Whether this asker may fix a double-blind step's layouts (a seed, or a layout sheet):
    /// whoever fixes them knows every target's station (a simulator with the seed predicts
    /// them), so never the page, whose accounts are the handler's side. The one rule; lineupd
    /// applies it at every session start.
    public var mayFixBlindLayouts: Bool { self == .station }
}

/// The station now, for `lineupctl status`.
public struct StationStatus: Sendable, Codable, Hashable {
    /// What the station is doing.
    public var state: StationState
    /// The same in the trainer's words, with what to do next ("load trial 3 of 20, then
    /// press ready").
    public var activity: String?
    public var session: String?
    public var dog: String?
    public var mode: TrainingMode?
    /// The trial (or trainer-led round) running now, or the next one to run (from 1).
    public var trial: Int?
    public var trials: Int?
    /// Trials (or rounds) scored and logged so far.
    public var trialsDone: Int?
    /// The program and its step (`phase/step`).
    public var program: String?
    public var step: String?
    /// The running session's stations, by the board's names, in the lineup's order: which
    /// containers are out (the same in every trial, so nothing of a layout), for the handler's
    /// guess on the page.
    public var lineupStations: [String]?
    /// Trainer-led: the repetition of the exercise running now (from 1), and how many are done.
    public var exercise: Int?
    public var exercisesDone: Int?
    /// Trainer-led: the exercise's repetitions allowed; seconds left in the running one.
    public var exerciseRepeats: Int?
    /// Seconds left in every timed state: the search, the inter-trial interval, the round.
    public var secondsLeft: Double?
    public var audio: String
    public var gpio: String
    public var clicks: UInt64
    public var failedClicks: UInt64
    /// The trainer's timer cues handed to ALSA, and those that could not sound.
    public var cues: UInt64?
    public var failedCues: UInt64?
    /// Whether the clicks sound: while they fail, what fails (`sound-not-taken`,
    /// `sound-stalled`, `sound-error`; docs/faults.md), nil once a click plays again; and the
    /// runs of failing clicks since lineupd started, each counted once.
    public var soundFault: String?
    public var soundFaults: UInt64?
    /// The fault in the trainer's words (`SoundFault.description`), while `soundFault` holds.
    public var soundFaultWhy: String?
    /// The board's output lines on now (station names, `buzzer`); and, on the simulated
    /// lineup, how many times the buzzer sounded.
    public var outputsOn: [String]?
    public var buzzerPulses: UInt64?
    public var edges: UInt64
    public var droppedEdges: UInt64
    public var logOverflow: UInt64
    /// The session log's health: events committed, events lost to a failed write, how long
    /// events waited to be on disk (recent p99 and worst, in ms), and the last write error.
    public var logWritten: Int?
    public var logLost: Int?
    public var logDurableMillisP99: Double?
    public var logDurableMillisMax: Double?
    public var logError: String?
    /// Free space on the log's filesystem (MB), and the board's thresholds: a warning at each
    /// session start below the first, sessions refused below the second.
    public var logFreeMegabytes: Int?
    public var logWarnFreeMegabytes: Int?
    public var logMinFreeMegabytes: Int?
    /// False while the log cannot take writes (its last write failed: a full disk, a read-only
    /// card, an I/O error); `logPaused` then says, in words, why no trial starts and what to do.
    public var logWritable: Bool?
    public var logPaused: String?
    /// Why the log cannot take writes, found by asking the system directly (its disk mounted
    /// read-only, a file lineupd may not write), before any write fails; nil when it can.
    public var logUnwritable: String?
    /// The session cut short, waiting to be resumed or ended (state `interrupted`).
    public var interrupted: InterruptedSession?
    /// Stations whose sensor is flagged now, with the fault (stuck, chatter, silent,
    /// active-at-start), and the sensor faults seen since lineupd started, by kind.
    public var flaggedStations: [FlaggedStation]?
    public var sensorFaults: [String: Int]?
    /// Each input's level as the hot loop last acted on it (the stations in board order, then
    /// the buttons the board has), and since when. While a double-blind session runs the
    /// stations' levels are left out (`stationLevelsWithheld`): where the dog's nose is tells a
    /// handler where it searched, as the watch lines would; the buttons' stay.
    public var inputLevels: [InputLevel]?
    public var stationLevelsWithheld: Bool?
    /// How far the lab store is behind this station's log, as lineup-sync last reported.
    public var labSync: LabSyncStatus?
    public var uptimeSeconds: Double
    /// The kernel's boot id (`/proc/sys/kernel/random/boot_id`) lineupd runs in: a new one means
    /// the station was rebooted (a power cut, a restart of the board), not only lineupd
    /// restarted; sessions and resumes record it, since monotonic times compare within one boot.
    public var bootId: String?

    public init(
        state: StationState, session: String? = nil, dog: String? = nil, mode: TrainingMode? = nil, trial: Int? = nil,
        trials: Int? = nil, step: String? = nil, audio: String, gpio: String, clicks: UInt64 = 0,
        failedClicks: UInt64 = 0, edges: UInt64 = 0, droppedEdges: UInt64 = 0, logOverflow: UInt64 = 0,
        uptimeSeconds: Double = 0
    ) {
        self.state = state
        self.session = session
        self.dog = dog
        self.mode = mode
        self.trial = trial
        self.trials = trials
        self.step = step
        self.audio = audio
        self.gpio = gpio
        self.clicks = clicks
        self.failedClicks = failedClicks
        self.edges = edges
        self.droppedEdges = droppedEdges
        self.logOverflow = logOverflow
        self.uptimeSeconds = uptimeSeconds
    }
}

/// What the station is doing: `status`'s `state`.
public enum StationState: String, Sendable, Codable, CaseIterable {
    /// No session.
    case idle
    /// The next trial (or round) waits for the ready press; with `ready = "auto"`, for no
    /// station to be active.
    case waitingForReady = "waiting-for-ready"
    /// A start was refused: a station is active (a lid, a paw). Clear it, press ready again.
    case blocked
    case searching
    /// Searching, with the dog's nose at a station now (a hold counts once it lasts).
    case holding
    /// The pause between trials.
    case interval
    /// A trainer-led round is running.
    case roundRunning = "round-running"
    /// Every trial of the block has run: end the session.
    case blockComplete = "block-complete"
    /// Every repetition of the trainer-led exercise is done: end the session.
    case repetitionsDone = "repetitions-done"
    /// The session was aborted: end it.
    case aborted
    /// The log cannot take writes (a full disk, a read-only card): no trial starts until it can.
    case paused
    /// A session was cut short (a crash, a kill, a power cut, a restart): resume it or end it.
    case interrupted
}

/// `ready`'s result: what the engine did with the press.
public struct ReadyReply: Sendable, Codable, Hashable {
    /// `started`: the trial (or round) started now; `queued`: it starts when the
    /// inter-trial interval is over. A refusal is an error reply instead.
    public var result: String
    public var trial: Int
    public var message: String
    public init(result: String, trial: Int, message: String) {
        self.result = result
        self.trial = trial
        self.message = message
    }
}

/// One input's level now: a station's sensor (a nose present) or a button (pressed).
public struct InputLevel: Sendable, Codable, Hashable {
    /// The station's name, or `clicker`, `error`, `ready`.
    public var input: String
    public var isStation: Bool
    /// Active: a nose at the station, or the button down. Otherwise clear.
    public var active: Bool
    /// Seconds since the level last changed, when `status` was answered; since lineupd began
    /// reading the line if it has not changed.
    public var secondsSinceChange: Double
    /// When it changed, UTC (ISO 8601, milliseconds).
    public var changedAt: String

    public init(input: String, isStation: Bool, active: Bool, secondsSinceChange: Double, changedAt: String) {
        self.input = input
        self.isStation = isStation
        self.active = active
        self.secondsSinceChange = secondsSinceChange
        self.changedAt = changedAt
    }
}

/// A station whose sensor is flagged now.
public struct FlaggedStation: Sendable, Codable, Hashable {
    public var station: String
    public var fault: StationFault

    public init(station: String, fault: StationFault) {
        self.station = station
        self.fault = fault
    }
}

/// Why a station is flagged: the engine's sensor faults (`SensorFault`), and a sensor whose
/// input the hot loop cannot read. The words are the wire's (`status`'s `flaggedStations`).
public enum StationFault: String, Sendable, Codable, Hashable, CaseIterable {
    case activeAtStart = "active-at-start"
    case stuck
    case silent
    case chatter
    /// Its input descriptor cannot be read (a failed GPIO read): its edges are not seen.
    case unreadable

    public init(_ fault: SensorFault) {
        switch fault {
        case .activeAtStart: self = .activeAtStart
        case .stuck: self = .stuck
        case .silent: self = .silent
        case .chatter: self = .chatter
        }
    }
}

/// One station of the current layout, as the loading assistant reads it.
public struct LayoutEntry: Sendable, Codable, Hashable {
    public var station: String
    public var kind: SampleKind
    public var sample: String?

    public init(station: String, kind: SampleKind, sample: String?) {
        self.station = station
        self.kind = kind
        self.sample = sample
    }
}

/// `simulate`: the simulated station's world, moved by hand (a trainer trying the station
/// without hardware, or a test): a nose at a station (`input` is its name or number) or a
/// button (`clicker`, `error`, `ready`) goes active or inactive. Refused on a real board.
public struct SimulatedInput: Sendable, Codable, Hashable {
    public var input: String
    public var active: Bool

    public init(input: String, active: Bool) {
        self.input = input
        self.active = active
    }
}

/// `about`'s result: what this lineupd offers, so lineupctl asks rather than guesses.
public struct StationAbout: Sendable, Codable, Hashable {
    /// The session log lineupd writes, as an absolute path: the additions' log.
    public var log: String
    /// The programs directory it reads `NAME.toml` from (absolute), if it has one.
    public var programsDirectory: String?
    /// Every program `session start --program` would be given: the built-in ones, then each
    /// `NAME.toml` of the directory, including those that do not load (with why).
    public var programs: [OfferedProgram]

    public init(log: String, programsDirectory: String?, programs: [OfferedProgram]) {
        self.log = log
        self.programsDirectory = programsDirectory
        self.programs = programs
    }
}

/// One program as lineupd would load it for `session start --program NAME`.
public struct OfferedProgram: Sendable, Codable, Hashable {
    public var name: String
    /// `built-in` or the file's path.
    public var source: String
    /// The program's text as lineupd read it (nil when it could not be read).
    public var text: String?
    /// Why lineupd would refuse it: the loader's message, a lineup this board cannot hold,
    /// or a built-in of the same name taking its place. Nil when it is accepted.
    public var refused: String?

    public init(name: String, source: String, text: String?, refused: String?) {
        self.name = name
        self.source = source
        self.text = text
        self.refused = refused
    }
}

/// A refusal the person at the other end can act on.
public struct ControlRefusal: Error, Sendable, Codable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Codable, Hashable {
        case noSession = "no-session"
        case sessionRunning = "session-running"
        case blind
        case badRequest = "bad-request"
        case unknown
        /// The dog or sample is already in the log.
        case duplicate
        case notReady = "not-ready"
        case failed
        // The protocol's own refusals, given by the socket server before the station is asked.
        case badVersion = "bad-version"
        case unknownRequest = "unknown-request"
        case tooLong = "too-long"
        /// Too many clients at once.
        case busy
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
