import Foundation
import GRDB
import TrainingEngine

// A session's tables, each written through its GRDB record: session, session_note,
// session_end, milestone.

/// One session: a dog, an exercise or a block of trials, as set up when it started.
public struct SessionRecord: Sendable, Hashable, Codable {
    public var id: UUID
    public var dogId: UUID
    public var handlerId: UUID?
    public var programId: UUID?
    public var phase: String?
    /// How many steps the phase has in its program, for progress percentages.
    public var phaseSteps: Int?
    public var step: String?
    public var exercise: String?
    public var mode: TrainingMode
    /// The settings in force (duration, hold time, repeats...), as a JSON object.
    public var settings: String
    /// The station's name, so logs of several stations can be merged.
    public var station: String?
    /// The kernel's boot id: monotonic times compare only within one boot.
    public var bootId: String?
    /// The room it ran in, when the researcher gave it.
    public var conditions: SessionConditions? = nil
    public var time: LogTime

    public init(
        id: UUID = UUID(), dogId: UUID, handlerId: UUID? = nil, programId: UUID? = nil,
        phase: String? = nil, phaseSteps: Int? = nil, step: String? = nil,
        exercise: String? = nil, mode: TrainingMode, settings: String = "{}",
        station: String? = nil, bootId: String? = SessionRecord.currentBootId(),
        time: LogTime = .now()
    ) {
        self.id = id
        self.dogId = dogId
        self.handlerId = handlerId
        self.programId = programId
        self.phase = phase
        self.phaseSteps = phaseSteps
        self.step = step
        self.exercise = exercise
        self.mode = mode
        self.settings = settings
        self.station = station
        self.bootId = bootId
        self.time = time
    }

    /// `/proc/sys/kernel/random/boot_id`, or nil where there is none.
    public static func currentBootId() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)
        else { return nil }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Written after a session: the study records improvement suggestions each time.
public struct SessionNote: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case improvement
        case comment
    }

    public var id: UUID
    public var sessionId: UUID
    public var kind: Kind
    public var text: String
    public var time: LogTime

    public init(
        id: UUID = UUID(), sessionId: UUID, kind: Kind = .improvement, text: String,
        time: LogTime = .now()
    ) {
        self.id = id
        self.sessionId = sessionId
        self.kind = kind
        self.text = text
        self.time = time
    }
}

/// How a session ended (see `Schema.v2`): written once per session.
public struct SessionEnd: Sendable, Hashable, Codable {
    public enum How: String, Sendable, Hashable, Codable, CaseIterable {
        /// By the trainer, or at the end of a simulated block.
        case ended
        /// lineupd was stopped during it; its running trial is logged aborted.
        case stopped
        /// Found unfinished when lineupd started again: a crash, a kill or a power cut.
        case interrupted
        /// Logged before lineup recorded how sessions end.
        case unknown
    }

    public var id: UUID
    public var sessionId: UUID
    public var how: How
    public var detail: String?
    public var time: LogTime

    public init(id: UUID = UUID(), sessionId: UUID, how: How, detail: String? = nil, time: LogTime = .now()) {
        self.id = id
        self.sessionId = sessionId
        self.how = how
        self.detail = detail
        self.time = time
    }
}

/// A step passed or a phase graduated (`step` nil), as the program's criteria decided.
public struct MilestoneRecord: Sendable, Hashable, Codable {
    public var id: UUID
    public var dogId: UUID
    public var sessionId: UUID?
    public var phase: String
    public var step: String?
    /// The criterion that was met, in words ("30 consecutive correct").
    public var criterion: String?
    public var time: LogTime

    public init(
        id: UUID = UUID(), dogId: UUID, sessionId: UUID? = nil, phase: String,
        step: String? = nil, criterion: String? = nil, time: LogTime = .now()
    ) {
        self.id = id
        self.dogId = dogId
        self.sessionId = sessionId
        self.phase = phase
        self.step = step
        self.criterion = criterion
        self.time = time
    }
}

/// A row of `session`; `station_id` is left NULL, as for every row of this log's own.
struct SessionRow: Encodable, PersistableRecord {
    static let databaseTableName = "session"
    var id: String
    var dogId: String
    var handlerId: String?
    var programId: String?
    var phase: String?
    var phaseSteps: Int?
    var step: String?
    var exercise: String?
    var mode: String
    var settings: String
    var station: String?
    var bootId: String?
    var temperatureC: Double?
    var humidityPct: Double?
    var conditions: String?
    var monoNs: Int64
    var wallNs: Int64

    enum CodingKeys: String, CodingKey {
        case id, phase, step, exercise, mode, settings, station, conditions
        case temperatureC = "temperature_c"
        case humidityPct = "humidity_pct"
        case dogId = "dog_id"
        case handlerId = "handler_id"
        case programId = "program_id"
        case phaseSteps = "phase_steps"
        case bootId = "boot_id"
        case monoNs = "mono_ns"
        case wallNs = "wall_ns"
    }

    /// The conditions' columns (v12) only when given, so that a session without them is the
    /// same INSERT as before and can still be written to an older schema (SchemaTests).
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(dogId, forKey: .dogId)
        try c.encode(handlerId, forKey: .handlerId)
        try c.encode(programId, forKey: .programId)
        try c.encode(phase, forKey: .phase)
        try c.encode(phaseSteps, forKey: .phaseSteps)
        try c.encode(step, forKey: .step)
        try c.encode(exercise, forKey: .exercise)
        try c.encode(mode, forKey: .mode)
        try c.encode(settings, forKey: .settings)
        try c.encode(station, forKey: .station)
        try c.encode(bootId, forKey: .bootId)
        if let temperatureC { try c.encode(temperatureC, forKey: .temperatureC) }
        if let humidityPct { try c.encode(humidityPct, forKey: .humidityPct) }
        if let conditions { try c.encode(conditions, forKey: .conditions) }
        try c.encode(monoNs, forKey: .monoNs)
        try c.encode(wallNs, forKey: .wallNs)
    }
}

extension SessionRecord: AppendableRecord {
    public func append(to db: Database) throws {
        try SessionRow(
            id: id.logText, dogId: dogId.logText, handlerId: handlerId?.logText, programId: programId?.logText,
            phase: phase, phaseSteps: phaseSteps, step: step, exercise: exercise, mode: mode.rawValue,
            settings: settings, station: station, bootId: bootId, temperatureC: conditions?.temperatureC,
            humidityPct: conditions?.humidityPercent, conditions: conditions?.text, monoNs: time.monoNs,
            wallNs: time.wallNs
        ).insert(db)
    }
}

/// A row of `session_note`.
struct SessionNoteRow: Encodable, PersistableRecord {
    static let databaseTableName = "session_note"
    var id: String
    var sessionId: String
    var kind: String
    var text: String
    var monoNs: Int64
    var wallNs: Int64

    enum CodingKeys: String, CodingKey {
        case id, kind, text
        case sessionId = "session_id"
        case monoNs = "mono_ns"
        case wallNs = "wall_ns"
    }
}

extension SessionNote: AppendableRecord {
    public func append(to db: Database) throws {
        try SessionNoteRow(
            id: id.logText, sessionId: sessionId.logText, kind: kind.rawValue, text: text, monoNs: time.monoNs,
            wallNs: time.wallNs
        ).insert(db)
    }
}

/// A row of `session_end`.
struct SessionEndRow: Encodable, PersistableRecord {
    static let databaseTableName = "session_end"
    var id: String
    var sessionId: String
    var how: String
    var detail: String?
    var monoNs: Int64
    var wallNs: Int64

    enum CodingKeys: String, CodingKey {
        case id, how, detail
        case sessionId = "session_id"
        case monoNs = "mono_ns"
        case wallNs = "wall_ns"
    }
}

extension SessionEnd: AppendableRecord {
    public func append(to db: Database) throws {
        try SessionEndRow(
            id: id.logText, sessionId: sessionId.logText, how: how.rawValue, detail: detail, monoNs: time.monoNs,
            wallNs: time.wallNs
        ).insert(db)
    }
}

/// A row of `milestone`.
struct MilestoneRow: Encodable, PersistableRecord {
    static let databaseTableName = "milestone"
    var id: String
    var dogId: String
    var sessionId: String?
    var phase: String
    var step: String?
    var criterion: String?
    var monoNs: Int64
    var wallNs: Int64

    enum CodingKeys: String, CodingKey {
        case id, phase, step, criterion
        case dogId = "dog_id"
        case sessionId = "session_id"
        case monoNs = "mono_ns"
        case wallNs = "wall_ns"
    }
}

extension MilestoneRecord: AppendableRecord {
    public func append(to db: Database) throws {
        try MilestoneRow(
            id: id.logText, dogId: dogId.logText, sessionId: sessionId?.logText, phase: phase, step: step,
            criterion: criterion, monoNs: time.monoNs, wallNs: time.wallNs
        ).insert(db)
    }
}
