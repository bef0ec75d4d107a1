import GRDB
import GRDBSQLite
import TrainingEngine

/// How `stats` groups trials.
public enum StatsGrouping: String, Sendable, CaseIterable, Codable {
    case dog, session, sample, station
}

/// The figures of one group, as `Tally` computes them (TrainingEngine/Figures.swift: the one
/// definition of every figure). In JSON the figures' keys sit beside `group` and `groupId`.
///
/// Trial counts: for `dog` and `session`, each trial once; for `sample` and `station`,
/// each trial in which that sample or station stood in the lineup, with the latency of that
/// station's first indication. Aborted trials count in `results.aborted` only.
public struct StatsRow: Sendable, Hashable, Codable {
    public var group: String
    public var groupId: String
    /// By session: when it started (ISO 8601, the station's local offset).
    public var started: String?
    /// By sample: its kind (target, control, distractor, blank), which says which of the
    /// station-level verdicts its row can hold.
    public var kind: SampleKind?
    public var figures: Figures
    /// Sessions (ids) with scored trials logged before the log kept what each station saw:
    /// their trials count in `results`, never in a station-level figure.
    public var sessionsWithoutStationData: [String]

    public var results: OutcomeCounts { figures.results }
    public var sensitivity: Proportion { figures.sensitivity }
    public var specificity: Proportion { figures.specificity }

    private enum Keys: String, CodingKey { case group, groupId, started, kind, sessionsWithoutStationData }

    public init(
        group: String, groupId: String, started: String? = nil, kind: SampleKind? = nil, figures: Figures,
        sessionsWithoutStationData: [String] = []
    ) {
        self.group = group
        self.groupId = groupId
        self.started = started
        self.kind = kind
        self.figures = figures
        self.sessionsWithoutStationData = sessionsWithoutStationData
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        group = try c.decode(String.self, forKey: .group)
        groupId = try c.decode(String.self, forKey: .groupId)
        started = try c.decodeIfPresent(String.self, forKey: .started)
        kind = try c.decodeIfPresent(SampleKind.self, forKey: .kind)
        sessionsWithoutStationData = try c.decode([String].self, forKey: .sessionsWithoutStationData)
        figures = try Figures(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(group, forKey: .group)
        try c.encode(groupId, forKey: .groupId)
        try c.encodeIfPresent(started, forKey: .started)
        try c.encodeIfPresent(kind, forKey: .kind)
        try c.encode(sessionsWithoutStationData, forKey: .sessionsWithoutStationData)
        try figures.encode(to: encoder)
    }
}

/// One group's running counts.
private struct Group {
    var name: String
    var started: Int64 = .max
    var kind: SampleKind?
    var tally = Tally()
    var sessionsWithoutStationData: Set<String> = []
}

extension LogReader {
    /// One pass over the trials (after corrections) with their compact layouts and station
    /// views; the counting is `Tally`'s. Reading compact text rather than joining 500,000
    /// station rows keeps `stats` over 100,000 trials well under a second.
    public func stats(by grouping: StatsGrouping, _ filter: LogFilter = LogFilter()) throws -> [StatsRow] {
        try read { db in
            var labels: [String: String] = [:]
            if grouping == .sample {
                for row in try Row.fetchAll(db, sql: "SELECT id, label FROM sample") { labels[row[0]] = row[1] }
            }
            var groups: [String: Group] = [:]
            func group(_ key: String, _ name: @autoclosure () -> String, _ update: (inout Group) -> Void) {
                if groups[key] == nil { groups[key] = Group(name: name()) }
                update(&groups[key]!)
            }
            try Self.scanTrials(db, filter, samples: grouping == .sample) { trial, context in
                let lacking = trial.outcome != .aborted && !trial.hasStationData
                switch grouping {
                case .dog, .session:
                    let key = grouping == .dog ? context.dogId : context.sessionId
                    group(key, grouping == .dog ? context.dog : "\(context.dog) \(key)") { g in
                        g.tally.add(trial)
                        g.started = min(g.started, context.sessionWallNs)
                        if lacking { g.sessionsWithoutStationData.insert(context.sessionId) }
                    }
                case .station, .sample:
                    for station in trial.stations {
                        let key = grouping == .station ? String(station.station) : station.sample ?? ""
                        if grouping == .sample && key.isEmpty { continue }
                        group(key, grouping == .station ? "station \(station.station)" : labels[key] ?? key) { g in
                            if grouping == .sample { g.kind = g.kind ?? station.kind }
                            g.tally.add(trial, station: station)
                            if lacking { g.sessionsWithoutStationData.insert(context.sessionId) }
                        }
                    }
                }
            }
            var iso = ISOTimeFormatter()
            let rows = groups.map { key, g in
                StatsRow(
                    group: g.name, groupId: key,
                    started: grouping == .session ? iso.string(wallNs: g.started) : nil, kind: g.kind,
                    figures: g.tally.figures,
                    sessionsWithoutStationData: g.sessionsWithoutStationData.sorted())
            }
            return rows.sorted { a, b in
                switch grouping {
                case .station:
                    return (Int(a.groupId) ?? 0, a.groupId) < (Int(b.groupId) ?? 0, b.groupId)
                case .session:
                    // Oldest first, as a learning curve reads; the id breaks ties.
                    return (a.started ?? "", a.groupId) < (b.started ?? "", b.groupId)
                default:
                    return (a.group, a.groupId) < (b.group, b.groupId)
                }
            }
        }
    }

    /// Where a scanned trial belongs.
    struct TrialContext {
        var dogId: String
        var dog: String
        var sessionId: String
        var sessionWallNs: Int64
    }

    /// Every trial (after corrections) matching `filter`, as the figures count it, oldest
    /// session first. Straight from SQLite's column accessors: GRDB rows per trial would cost
    /// more than the query itself. Sample ids are only read when `samples` is set.
    static func scanTrials(
        _ db: Database, _ filter: LogFilter, samples: Bool, _ body: (ScoredTrial, TrialContext) throws -> Void
    ) throws {
        let statement = try db.makeStatement(
            sql: """
                SELECT t.outcome, t.latency_ns, t.layout, t.seen, s.dog_id, d.name, s.id, s.wall_ns, t.id
                FROM trial_current t JOIN session s ON s.id = t.session_id JOIN dog d ON d.id = s.dog_id
                WHERE (?1 IS NULL OR s.dog_id = ?1) AND (?2 IS NULL OR s.id = ?2)
                    AND (?3 IS NULL OR t.wall_ns >= ?3) AND (?4 IS NULL OR t.wall_ns < ?4)
                    AND \(filter.sessionCondition(from: 5))
                """)
        try statement.setArguments(
            StatementArguments(
                [
                    filter.dogId.databaseValue, filter.sessionId.databaseValue, filter.since.databaseValue,
                    filter.until.databaseValue,
                ] + filter.sessionArguments))
        let sqlite = statement.sqliteStatement
        func text(_ column: Int32) -> String {
            guard let bytes = sqlite3_column_text(sqlite, column) else { return "" }
            return String(
                decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(sqlite, column))),
                as: UTF8.self)
        }
        var slots: [StationInLayout] = []
        var seen: [StationSeen] = []
        while true {
            let rc = sqlite3_step(sqlite)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else {
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: rc), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
            }
            let outcome = TrialOutcome(rawValue: text(0)) ?? .aborted
            let latency: Int64? = sqlite3_column_type(sqlite, 1) == SQLITE_NULL ? nil : sqlite3_column_int64(sqlite, 1)
            guard
                parseLayout(
                    sqlite3_column_text(sqlite, 2), Int(sqlite3_column_bytes(sqlite, 2)), into: &slots,
                    samples: samples)
            else { throw LogLimits.badLayout(trial: text(8)) }
            // Trials of a log older than schema v3 have no `seen`: they are scored trials
            // without station data, never counted by another rule.
            let hasSeen =
                sqlite3_column_type(sqlite, 3) != SQLITE_NULL
                && parseSeen(sqlite3_column_text(sqlite, 3), Int(sqlite3_column_bytes(sqlite, 3)), into: &seen)
                && seen.count == slots.count
            let trial = ScoredTrial(
                outcome: outcome, latencyNs: latency,
                stations: slots.enumerated().map { index, slot in
                    StationObservation(
                        station: slot.station, kind: slot.kind, sample: slot.sample.isEmpty ? nil : slot.sample,
                        seen: hasSeen ? seen[index] : nil)
                })
            try body(
                trial,
                TrialContext(
                    dogId: text(4), dog: text(5), sessionId: text(6), sessionWallNs: sqlite3_column_int64(sqlite, 7)))
        }
    }

    /// Parses `1:1:2000000000:0:2500000000;0:0::0:0;...` (see `trial.seen`) into `seen`;
    /// false if the text is not in that form.
    static func parseSeen(_ base: UnsafePointer<UInt8>?, _ count: Int, into seen: inout [StationSeen]) -> Bool {
        seen.removeAll(keepingCapacity: true)
        guard let base else { return false }
        let bytes = UnsafeBufferPointer(start: base, count: count)
        var index = 0
        func number() -> Int64? {
            var value: Int64 = 0
            var digits = 0
            var negative = false
            if index < count, bytes[index] == UInt8(ascii: "-") {
                negative = true
                index += 1
            }
            while index < count, bytes[index] >= 48, bytes[index] <= 57 {
                value = value &* 10 &+ Int64(bytes[index] &- 48)
                digits += 1
                index += 1
            }
            return digits == 0 ? nil : (negative ? -value : value)
        }
        func expect(_ c: Character) -> Bool {
            guard index < count, bytes[index] == c.asciiValue! else { return false }
            index += 1
            return true
        }
        while index < count {
            guard let visited = number(), expect(":"), let indicated = number(), expect(":") else { return false }
            let first = number()
            guard expect(":"), let sniffs = number(), expect(":"), let dwell = number() else { return false }
            seen.append(
                StationSeen(
                    visited: visited != 0, indicated: indicated != 0, firstIndicationNs: first, sniffs: Int(sniffs),
                    dwellNs: dwell))
            if index < count && !expect(";") { return false }
        }
        return true
    }

    /// Parses `1:target:<uuid>;2:blank:;...` into `slots`, reusing its storage. The
    /// sample id is only materialised when a sample is named.
    /// False, with `slots` unusable, when a station is not a number in `LogLimits.stations` or
    /// the layout names more stations than a board has: the callers refuse the row.
    static func parseLayout(
        _ base: UnsafePointer<UInt8>?, _ count: Int, into slots: inout [StationInLayout], samples: Bool = true
    ) -> Bool {
        slots.removeAll(keepingCapacity: true)
        guard let base else { return true }
        let bytes = UnsafeBufferPointer(start: base, count: count)
        var index = 0
        while index < count {
            var station = 0
            var digits = 0
            while index < count, bytes[index] != UInt8(ascii: ":") {
                // Bounded before it can overflow: a row of digits is refused, never trapped on.
                guard bytes[index] >= 48, bytes[index] <= 57, station <= LogLimits.stations.upperBound else {
                    return false
                }
                station = station * 10 + Int(bytes[index] &- 48)
                digits += 1
                index += 1
            }
            guard digits > 0, LogLimits.stations.contains(station), slots.count < LogLimits.stations.count else {
                return false
            }
            index += 1
            let kindStart = index
            while index < count, bytes[index] != UInt8(ascii: ":") { index += 1 }
            let kind: SampleKind
            switch kindStart < count ? bytes[kindStart] : 0 {
            case UInt8(ascii: "t"): kind = .target
            case UInt8(ascii: "c"): kind = .control
            case UInt8(ascii: "d"): kind = .distractor
            default: kind = .blank
            }
            index += 1
            let sampleStart = index
            while index < count, bytes[index] != UInt8(ascii: ";") { index += 1 }
            let sample =
                samples && sampleStart < index
                ? String(decoding: UnsafeBufferPointer(rebasing: bytes[sampleStart..<index]), as: UTF8.self) : ""
            slots.append(StationInLayout(station: station, kind: kind, sample: sample))
            index += 1
        }
        return true
    }
}

/// One station of a trial's compact layout.
struct StationInLayout {
    var station: Int
    var kind: SampleKind
    var sample: String
}
