import Foundation
import GRDB
import TrainingEngine

#if canImport(Glibc)
    import Glibc
#endif

/// When something happened, on both clocks: monotonic nanoseconds order events on one
/// station (and match the kernel's edge timestamps), wall-clock nanoseconds since 1970
/// (UTC) place them in the calendar and across stations.
public struct LogTime: Sendable, Hashable, Codable {
    public var monoNs: Int64
    public var wallNs: Int64

    public init(monoNs: Int64, wallNs: Int64) {
        self.monoNs = monoNs
        self.wallNs = wallNs
    }

    /// Both clocks read now.
    public static func now() -> LogTime {
        LogTime(monoNs: readClock(CLOCK_MONOTONIC), wallNs: readClock(CLOCK_REALTIME))
    }

    private static func readClock(_ clock: clockid_t) -> Int64 {
        var ts = timespec()
        clock_gettime(clock, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}

extension UUID {
    /// The form stored in the log: lower-case text, readable in `sqlite3` and exports.
    var logText: String { uuidString.lowercased() }

    /// A version 7 UUID (RFC 9562): `wallNs` in milliseconds in its first 48 bits, 74 random
    /// bits after. Ids made in time order sort in time order, so each commit adds them to the
    /// last page of an index on them rather than to a random page.
    public static func timeOrdered(wallNs: Int64) -> UUID {
        var generator = SystemRandomNumberGenerator()
        let millis = UInt64(clamping: max(0, wallNs / 1_000_000))
        let high: UInt64 = generator.next()
        let low: UInt64 = generator.next()
        func byte(_ value: UInt64, _ shift: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: value >> shift) }
        return UUID(
            uuid: (
                byte(millis, 40), byte(millis, 32), byte(millis, 24), byte(millis, 16), byte(millis, 8),
                byte(millis, 0),
                0x70 | (byte(high, 0) & 0x0F), byte(high, 8),  // version 7
                0x80 | (byte(low, 0) & 0x3F), byte(low, 8),  // variant 10
                byte(low, 16), byte(low, 24), byte(low, 32), byte(low, 40), byte(low, 48), byte(low, 56)
            ))
    }
}

/// A dog, the subject of training. Personal data of people stays out of the log.
public struct DogRecord: Sendable, Hashable, Codable {
    public var id: UUID
    public var name: String
    /// Date of birth as `YYYY-MM-DD`, if known.
    public var born: String?
    public var notes: String?
    public var time: LogTime

    public init(
        id: UUID = UUID(), name: String, born: String? = nil, notes: String? = nil,
        time: LogTime = .now()
    ) {
        self.id = id
        self.name = name
        self.born = born
        self.notes = notes
        self.time = time
    }
}

/// A handler, by a pseudonymous code only.
public struct HandlerRecord: Sendable, Hashable, Codable {
    public var id: UUID
    public var code: String
    public var time: LogTime

    public init(id: UUID = UUID(), code: String, time: LogTime = .now()) {
        self.id = id
        self.code = code
        self.time = time
    }
}

/// A physical scent sample and its research details.
public struct SampleRecord: Sendable, Hashable, Codable {
    public var id: UUID
    /// The unique id written on the sample, as the researcher searches for it.
    public var label: String
    public var kind: SampleKind
    public var diagnosis: String?
    public var source: String?
    /// How it was collected.
    public var collection: String?
    /// How it was processed and stored.
    public var processing: String?
    /// Collection date as `YYYY-MM-DD`.
    public var collectedOn: String?
    public var time: LogTime

    public init(
        id: UUID = UUID(), label: String, kind: SampleKind, diagnosis: String? = nil,
        source: String? = nil, collection: String? = nil, processing: String? = nil,
        collectedOn: String? = nil, time: LogTime = .now()
    ) {
        self.id = id
        self.label = label
        self.kind = kind
        self.diagnosis = diagnosis
        self.source = source
        self.collection = collection
        self.processing = processing
        self.collectedOn = collectedOn
        self.time = time
    }
}

/// A comment on a sample; notes are appended, never edited.
public struct SampleNote: Sendable, Hashable, Codable {
    public var id: UUID
    public var sampleId: UUID
    public var text: String
    public var time: LogTime

    public init(id: UUID = UUID(), sampleId: UUID, text: String, time: LogTime = .now()) {
        self.id = id
        self.sampleId = sampleId
        self.text = text
        self.time = time
    }
}

/// A training program as it was run: its full text and the SHA-256 of that text, so a
/// session can be tied to the exact program even after the file changes.
public struct ProgramRecord: Sendable, Hashable, Codable {
    public var id: UUID
    public var name: String
    public var content: String
    public var sha256: String
    public var time: LogTime

    public init(id: UUID = UUID(), name: String, content: String, time: LogTime = .now()) {
        self.id = id
        self.name = name
        self.content = content
        self.sha256 = SHA256Digest.hex(of: Array(content.utf8))
        self.time = time
    }
}

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

/// What stood in one station during a trial.
public struct StationSlot: Sendable, Hashable, Codable {
    /// 1-based, as the stations are numbered on the lineup.
    public var station: Int
    /// Nil for a clean empty container that carries no sample id.
    public var sampleId: UUID?
    public var kind: SampleKind
    /// What the station saw in the trial; nil only for trials logged before schema v3.
    public var seen: StationSeen?

    public init(station: Int, sampleId: UUID?, kind: SampleKind, seen: StationSeen? = nil) {
        self.station = station
        self.sampleId = sampleId
        self.kind = kind
        self.seen = seen
    }
}

/// One trial as it ended: the layout, the seed that chose it, and how it went.
public struct TrialRecord: Sendable, Hashable, Codable {
    public var id: UUID
    public var sessionId: UUID
    /// 1-based within the session.
    public var number: Int
    public var seed: UInt64?
    public var layout: [StationSlot]
    public var outcome: TrialOutcome
    public var indicatedStation: Int?
    /// From the start cue to the indication, if there was one.
    public var latencyNs: Int64?
    /// Time spent searching (at stations) before the trial ended.
    public var searchNs: Int64?
    public var started: LogTime
    public var ended: LogTime
    /// Set on a correction: the trial row this one replaces.
    public var corrects: UUID?
    /// Why a correction was made, or why the trial was aborted.
    public var reason: String?

    public init(
        id: UUID = UUID(), sessionId: UUID, number: Int, seed: UInt64? = nil,
        layout: [StationSlot], outcome: TrialOutcome, indicatedStation: Int? = nil,
        latencyNs: Int64? = nil, searchNs: Int64? = nil, started: LogTime, ended: LogTime,
        corrects: UUID? = nil, reason: String? = nil
    ) {
        self.id = id
        self.sessionId = sessionId
        self.number = number
        self.seed = seed
        self.layout = layout
        self.outcome = outcome
        self.indicatedStation = indicatedStation
        self.latencyNs = latencyNs
        self.searchNs = searchNs
        self.started = started
        self.ended = ended
        self.corrects = corrects
        self.reason = reason
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

/// What an event records.
public enum EventKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// A raw sensor edge with the kernel's timestamp; `value` is the new level.
    case edge
    /// A short nose visit at a station; `durationNs` is its length.
    case sniff
    /// The agreed behaviour held long enough at a station.
    case indication
    /// The click sounded; the click fields carry its timing.
    case click
    /// A button press (clicker, error, ready); `value` is the button number.
    case button
    /// A cue sounded (start, end).
    case cue
    /// Something went wrong (dropped edges, ALSA underrun, queue overflow).
    case fault
    /// Free text from the trainer or the station.
    case note
}

/// How late the click was, from the edge that earned it to sound leaving the DAC.
public struct ClickTiming: Sendable, Hashable, Codable {
    /// Kernel timestamp of the edge (or button press) that caused the click.
    public var edgeNs: Int64?
    /// When the samples were handed to ALSA.
    public var handedNs: Int64?
    /// ALSA's trigger timestamp for the stream start.
    public var triggerNs: Int64?
    /// ALSA's reported delay in frames when the click was written.
    public var delayFrames: Int64?
    /// From edge to estimated sound onset.
    public var onsetLatencyNs: Int64?

    public init(
        edgeNs: Int64? = nil, handedNs: Int64? = nil, triggerNs: Int64? = nil,
        delayFrames: Int64? = nil, onsetLatencyNs: Int64? = nil
    ) {
        self.edgeNs = edgeNs
        self.handedNs = handedNs
        self.triggerNs = triggerNs
        self.delayFrames = delayFrames
        self.onsetLatencyNs = onsetLatencyNs
    }
}

/// One event of the raw log. Built by the station, queued, and written in batches.
///
/// Its id is time-ordered (``UUID/timeOrdered(wallNs:)``) unless given: `event_by_id`
/// (which lets a merge skip the events it holds) then grows at its end, one page per commit,
/// where random ids each dirtied a page of their own (`lineupctl bench storage`). Only event
/// ids are made so: a trial's or session's id is known by its first 8 characters, which
/// ids made within the same minute would share.
public struct LoggedEvent: Sendable, Hashable, Codable {
    public var id: UUID
    public var kind: EventKind
    public var sessionId: UUID?
    public var trialId: UUID?
    /// 1-based station number, if the event belongs to one.
    public var station: Int?
    public var time: LogTime
    /// The kernel's CLOCK_MONOTONIC timestamp of an edge.
    public var kernelNs: Int64?
    public var value: Int64?
    public var durationNs: Int64?
    public var click: ClickTiming?
    /// Anything else, as a JSON object in text.
    public var detail: String?

    public init(
        id: UUID? = nil, kind: EventKind, sessionId: UUID? = nil, trialId: UUID? = nil,
        station: Int? = nil, time: LogTime = .now(), kernelNs: Int64? = nil,
        value: Int64? = nil, durationNs: Int64? = nil, click: ClickTiming? = nil,
        detail: String? = nil
    ) {
        self.id = id ?? .timeOrdered(wallNs: time.wallNs)
        self.kind = kind
        self.sessionId = sessionId
        self.trialId = trialId
        self.station = station
        self.time = time
        self.kernelNs = kernelNs
        self.value = value
        self.durationNs = durationNs
        self.click = click
        self.detail = detail
    }
}

// MARK: - Writing rows

/// A record that can be appended to the log in a transaction.
public protocol AppendableRecord: Sendable {
    func append(to db: Database) throws
}

// Each table is written through one GRDB record below, its coding keys spelled as the schema
// spells the columns (Schema.swift). Only `insert` is ever called, never `save` or an upsert:
// the log is append-only and its triggers refuse UPDATE and DELETE. Ids go in as lower-case
// UUID text (`logText`), not as GRDB's default 16-byte blob, as the log has always held them.
// The one exception is the hot event insert, kept hand-written (see `LoggedEvent.append`).

/// A row of `dog`.
struct DogRow: Encodable, PersistableRecord {
    static let databaseTableName = "dog"
    var id: String
    var name: String
    var born: String?
    var notes: String?
    var monoNs: Int64
    var wallNs: Int64

    enum CodingKeys: String, CodingKey {
        case id, name, born, notes
        case monoNs = "mono_ns"
        case wallNs = "wall_ns"
    }
}

extension DogRecord: AppendableRecord {
    public func append(to db: Database) throws {
        try DogRow(
            id: id.logText, name: name, born: born, notes: notes, monoNs: time.monoNs, wallNs: time.wallNs
        ).insert(db)
    }
}

/// A row of `handler`.
struct HandlerRow: Encodable, PersistableRecord {
    static let databaseTableName = "handler"
    var id: String
    var code: String
    var monoNs: Int64
    var wallNs: Int64

    enum CodingKeys: String, CodingKey {
        case id, code
        case monoNs = "mono_ns"
        case wallNs = "wall_ns"
    }
}

extension HandlerRecord: AppendableRecord {
    public func append(to db: Database) throws {
        try HandlerRow(id: id.logText, code: code, monoNs: time.monoNs, wallNs: time.wallNs).insert(db)
    }
}

/// A row of `sample`.
struct SampleRow: Encodable, PersistableRecord {
    static let databaseTableName = "sample"
    var id: String
    var label: String
    var kind: String
    var diagnosis: String?
    var source: String?
    var collection: String?
    var processing: String?
    var collectedOn: String?
    var monoNs: Int64
    var wallNs: Int64

    enum CodingKeys: String, CodingKey {
        case id, label, kind, diagnosis, source, collection, processing
        case collectedOn = "collected_on"
        case monoNs = "mono_ns"
        case wallNs = "wall_ns"
    }
}

extension SampleRecord: AppendableRecord {
    public func append(to db: Database) throws {
        try SampleRow(
            id: id.logText, label: label, kind: kind.rawValue, diagnosis: diagnosis, source: source,
            collection: collection, processing: processing, collectedOn: collectedOn, monoNs: time.monoNs,
            wallNs: time.wallNs
        ).insert(db)
    }
}

/// A row of `sample_note`.
struct SampleNoteRow: Encodable, PersistableRecord {
    static let databaseTableName = "sample_note"
    var id: String
    var sampleId: String
    var text: String
    var monoNs: Int64
    var wallNs: Int64

    enum CodingKeys: String, CodingKey {
        case id, text
        case sampleId = "sample_id"
        case monoNs = "mono_ns"
        case wallNs = "wall_ns"
    }
}

extension SampleNote: AppendableRecord {
    public func append(to db: Database) throws {
        try SampleNoteRow(
            id: id.logText, sampleId: sampleId.logText, text: text, monoNs: time.monoNs, wallNs: time.wallNs
        ).insert(db)
    }
}

/// A row of `program`.
struct ProgramRow: Encodable, PersistableRecord {
    static let databaseTableName = "program"
    var id: String
    var name: String
    var content: String
    var sha256: String
    var monoNs: Int64
    var wallNs: Int64

    enum CodingKeys: String, CodingKey {
        case id, name, content, sha256
        case monoNs = "mono_ns"
        case wallNs = "wall_ns"
    }
}

extension ProgramRecord: AppendableRecord {
    /// A program already logged with the same hash is not logged twice. Looked up first rather
    /// than `INSERT OR IGNORE`, which would also swallow a clash of ids (a real error).
    public func append(to db: Database) throws {
        guard try ProgramRow.filter(Column("sha256") == sha256).isEmpty(db) else { return }
        try ProgramRow(
            id: id.logText, name: name, content: content, sha256: sha256, monoNs: time.monoNs, wallNs: time.wallNs
        ).insert(db)
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
    var monoNs: Int64
    var wallNs: Int64

    enum CodingKeys: String, CodingKey {
        case id, phase, step, exercise, mode, settings, station
        case dogId = "dog_id"
        case handlerId = "handler_id"
        case programId = "program_id"
        case phaseSteps = "phase_steps"
        case bootId = "boot_id"
        case monoNs = "mono_ns"
        case wallNs = "wall_ns"
    }
}

extension SessionRecord: AppendableRecord {
    public func append(to db: Database) throws {
        try SessionRow(
            id: id.logText, dogId: dogId.logText, handlerId: handlerId?.logText, programId: programId?.logText,
            phase: phase, phaseSteps: phaseSteps, step: step, exercise: exercise, mode: mode.rawValue,
            settings: settings, station: station, bootId: bootId, monoNs: time.monoNs, wallNs: time.wallNs
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

/// A row of `trial`: `mono_ns` and `wall_ns` are its end, `started_*` its start cue.
struct TrialRow: Encodable, PersistableRecord {
    static let databaseTableName = "trial"
    var id: String
    var sessionId: String
    var number: Int
    var seed: Int64?
    var outcome: String
    var indicatedStation: Int?
    var latencyNs: Int64?
    var searchNs: Int64?
    var startedMonoNs: Int64
    var startedWallNs: Int64
    var corrects: String?
    var reason: String?
    var layout: String
    var seen: String?
    var monoNs: Int64
    var wallNs: Int64

    enum CodingKeys: String, CodingKey {
        case id, number, seed, outcome, corrects, reason, layout, seen
        case sessionId = "session_id"
        case indicatedStation = "indicated_station"
        case latencyNs = "latency_ns"
        case searchNs = "search_ns"
        case startedMonoNs = "started_mono_ns"
        case startedWallNs = "started_wall_ns"
        case monoNs = "mono_ns"
        case wallNs = "wall_ns"
    }
}

/// A row of `trial_station`: what stood in one station, and what it saw (NULL when unknown).
struct TrialStationRow: Encodable, PersistableRecord {
    static let databaseTableName = "trial_station"
    var trialId: String
    var station: Int
    var sampleId: String?
    var kind: String
    var visited: Int?
    var indicated: Int?
    var firstIndicationNs: Int64?
    var sniffs: Int?
    var dwellNs: Int64?

    enum CodingKeys: String, CodingKey {
        case station, kind, visited, indicated, sniffs
        case trialId = "trial_id"
        case sampleId = "sample_id"
        case firstIndicationNs = "first_indication_ns"
        case dwellNs = "dwell_ns"
    }
}

extension TrialRecord: AppendableRecord {
    /// `1:target:<uuid>;2:blank:;...`, as stored in `trial.layout`.
    var compactLayout: String {
        layout.map { "\($0.station):\($0.kind.rawValue):\($0.sampleId?.logText ?? "")" }.joined(separator: ";")
    }

    /// `visited:indicated:first_ns:sniffs:dwell_ns;...` in station order, as stored in
    /// `trial.seen`; nil when any station's view is unknown.
    var compactSeen: String? {
        var parts: [String] = []
        for entry in layout {
            guard let seen = entry.seen else { return nil }
            parts.append(
                "\(seen.visited ? 1 : 0):\(seen.indicated ? 1 : 0):\(seen.firstIndicationNs.map(String.init) ?? ""):"
                    + "\(seen.sniffs):\(seen.dwellNs)")
        }
        return parts.joined(separator: ";")
    }

    public func append(to db: Database) throws {
        let trialId = id.logText
        try TrialRow(
            id: trialId, sessionId: sessionId.logText, number: number,
            // The seed is a UInt64; SQLite integers are signed, so its bits are kept as Int64.
            seed: seed.map { Int64(bitPattern: $0) }, outcome: outcome.rawValue, indicatedStation: indicatedStation,
            latencyNs: latencyNs, searchNs: searchNs, startedMonoNs: started.monoNs, startedWallNs: started.wallNs,
            corrects: corrects?.logText, reason: reason, layout: compactLayout, seen: compactSeen,
            monoNs: ended.monoNs, wallNs: ended.wallNs
        ).insert(db)
        for entry in layout {
            try TrialStationRow(
                trialId: trialId, station: entry.station, sampleId: entry.sampleId?.logText,
                kind: entry.kind.rawValue, visited: entry.seen.map { $0.visited ? 1 : 0 },
                indicated: entry.seen.map { $0.indicated ? 1 : 0 }, firstIndicationNs: entry.seen?.firstIndicationNs,
                sniffs: entry.seen?.sniffs, dwellNs: entry.seen?.dwellNs
            ).insert(db)
        }
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

/// A row of `event`; `seq` is SQLite's (the rowid, in insertion order) and `station_id` is
/// left NULL, as for every row of this log's own.
struct EventRow: Encodable, PersistableRecord {
    static let databaseTableName = "event"
    var id: String
    var sessionId: String?
    var trialId: String?
    var kind: String
    var station: Int?
    var monoNs: Int64
    var wallNs: Int64
    var kernelNs: Int64?
    var value: Int64?
    var durationNs: Int64?
    var clickEdgeNs: Int64?
    var clickHandedNs: Int64?
    var clickTriggerNs: Int64?
    var clickDelayFrames: Int64?
    var clickOnsetLatencyNs: Int64?
    var detail: String?

    enum CodingKeys: String, CodingKey {
        case id, kind, station, value, detail
        case sessionId = "session_id"
        case trialId = "trial_id"
        case monoNs = "mono_ns"
        case wallNs = "wall_ns"
        case kernelNs = "kernel_ns"
        case durationNs = "duration_ns"
        case clickEdgeNs = "click_edge_ns"
        case clickHandedNs = "click_handed_ns"
        case clickTriggerNs = "click_trigger_ns"
        case clickDelayFrames = "click_delay_frames"
        case clickOnsetLatencyNs = "click_onset_latency_ns"
    }
}

extension LoggedEvent: AppendableRecord {
    /// This event as its GRDB record: the same columns and values as ``append(to:)`` writes
    /// (RecordRowsTests writes events both ways and compares the rows).
    var row: EventRow {
        EventRow(
            id: id.logText, sessionId: sessionId?.logText, trialId: trialId?.logText, kind: kind.rawValue,
            station: station, monoNs: time.monoNs, wallNs: time.wallNs, kernelNs: kernelNs, value: value,
            durationNs: durationNs, clickEdgeNs: click?.edgeNs, clickHandedNs: click?.handedNs,
            clickTriggerNs: click?.triggerNs, clickDelayFrames: click?.delayFrames,
            clickOnsetLatencyNs: click?.onsetLatencyNs, detail: detail)
    }

    /// Hand-written, unlike every other table's insert: events are written at the writer's
    /// batch rate, and `row.insert(db)` measured slower. `lineupctl bench log --rate 20000
    /// --seconds 20` (release, 3 runs each, this 2-core build machine shared with other
    /// builds): batch p50 11.4, 9.1, 11.1 ms (median 11.1) hand-written against 12.5, 19.3,
    /// 21.8 ms (median 19.3) through `EventRow.insert`.
    public func append(to db: Database) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO event (id, session_id, trial_id, kind, station, mono_ns, wall_ns,
                    kernel_ns, value, duration_ns, click_edge_ns, click_handed_ns,
                    click_trigger_ns, click_delay_frames, click_onset_latency_ns, detail)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            id.logText, sessionId?.logText, trialId?.logText, kind.rawValue, station, time.monoNs,
            time.wallNs, kernelNs, value, durationNs, click?.edgeNs, click?.handedNs,
            click?.triggerNs, click?.delayFrames, click?.onsetLatencyNs, detail,
        ])
    }
}
