import Foundation
import GRDB
import TrainingEngine

// The raw log's table, event: its GRDB record, and the hand-written insert the writer uses.

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
/// where random ids each dirtied a page of their own (`lineup-bench storage`). Only event
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
    /// A click's timing: on click events only.
    public var click: ClickTiming? {
        get { clickTiming?.timing }
        set { clickTiming = newValue.map(ClickTimingBox.init) }
    }
    /// Behind a reference: inline, the timing's 80 bytes made every event 232 bytes, and the
    /// writer's queue (`LogWriter`) holds up to 65,536 events, each of whose pages stays resident
    /// (and locked, `mlockall`) once a storm has filled it; boxed, an event is 160 bytes.
    private var clickTiming: ClickTimingBox?
    /// Anything else, as a JSON object in text.
    public var detail: String?

    // The coded form names `click`, as when the timing was stored inline.
    private enum CodingKeys: String, CodingKey {
        case id, kind, sessionId, trialId, station, time, kernelNs, value, durationNs, detail
        case clickTiming = "click"
    }

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
        self.clickTiming = click.map(ClickTimingBox.init)
        self.detail = detail
    }
}

/// A click's timing, held by reference in ``LoggedEvent`` and never changed in place (a new
/// timing is a new box), so the event keeps its value semantics; compared, hashed and coded as
/// the timing itself.
final class ClickTimingBox: Sendable, Hashable, Codable {
    let timing: ClickTiming
    init(_ timing: ClickTiming) { self.timing = timing }
    convenience init(from decoder: any Decoder) throws { self.init(try ClickTiming(from: decoder)) }
    func encode(to encoder: any Encoder) throws { try timing.encode(to: encoder) }
    static func == (a: ClickTimingBox, b: ClickTimingBox) -> Bool { a.timing == b.timing }
    func hash(into hasher: inout Hasher) { hasher.combine(timing) }
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
    /// batch rate, and `row.insert(db)` measured slower. `lineup-bench log --rate 20000
    /// --seconds 20` (release, this 2-core build machine shared with other builds), batch p50
    /// hand-written against through `EventRow.insert`: 3 runs each, one after the other,
    /// 11.4, 9.1, 11.1 ms (median 11.1) against 12.5, 19.3, 21.8 ms (median 19.3); 3 more each,
    /// taking turns, 7.2, 6.1, 8.2 ms (median 7.2) against 12.1, 14.1, 11.5 ms (median 12.1).
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
