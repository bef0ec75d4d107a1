import Figures
import Foundation
import GRDB
import TrainingEngine

// A trial's tables, written through their GRDB records: trial, and trial_station (one row
// per station of the layout).

/// What stood in one station during a trial.
public struct StationSlot: Sendable, Hashable, Codable {
    /// 1-based, as the stations are numbered on the lineup.
    public var station: Int
    /// Nil for a clean empty container that carries no sample id.
    public var sampleId: UUID?
    public var kind: SampleKind
    /// What the station saw in the trial; nil only for trials logged before schema v3.
    public var seen: StationSeen?
    /// Whether the dog had never met the sample before this trial (docs/figures.md, "Exposure
    /// and novelty"); nil without a sample, or when not recorded.
    public var novel: Bool?

    public init(station: Int, sampleId: UUID?, kind: SampleKind, seen: StationSeen? = nil, novel: Bool? = nil) {
        self.station = station
        self.sampleId = sampleId
        self.kind = kind
        self.seen = seen
        self.novel = novel
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
    var novel: Int?

    enum CodingKeys: String, CodingKey {
        case station, kind, visited, indicated, sniffs, novel
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
                sniffs: entry.seen?.sniffs, dwellNs: entry.seen?.dwellNs,
                novel: entry.sampleId == nil ? nil : entry.novel.map { $0 ? 1 : 0 }
            ).insert(db)
        }
    }
}
