import Figures
import GRDB
import GRDBSQLite
import TrainingEngine

/// How `stats` groups trials.
public enum StatsGrouping: String, Sendable, CaseIterable, Codable {
    case dog, session, sample, station
}

/// The figures of one group, as `Tally` computes them (Figures/Figures.swift: the one
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
    /// By sample: `SampleFlag`'s verdict on it against the others of its kind (nil for a
    /// blank, or a sample alone of its kind).
    public var sampleFlag: SampleFlag.Verdict? = nil

    public var results: OutcomeCounts { figures.results }
    public var sensitivity: Proportion { figures.sensitivity }
    public var specificity: Proportion { figures.specificity }

    private enum Keys: String, CodingKey { case group, groupId, started, kind, sessionsWithoutStationData, sampleFlag }

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
        sampleFlag = try c.decodeIfPresent(SampleFlag.Verdict.self, forKey: .sampleFlag)
        figures = try Figures(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(group, forKey: .group)
        try c.encode(groupId, forKey: .groupId)
        try c.encodeIfPresent(started, forKey: .started)
        try c.encodeIfPresent(kind, forKey: .kind)
        try c.encode(sessionsWithoutStationData, forKey: .sessionsWithoutStationData)
        try c.encodeIfPresent(sampleFlag, forKey: .sampleFlag)
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

/// The grouping of `stats`: trials in, one row per group out, each counted by `Tally`. Fed by
/// whichever source scans the trials (the station's log here, the lab store in LabStore), so
/// the two give the same rows from the same trials: one definition, one implementation.
public struct StatsGrouper {
    public let grouping: StatsGrouping
    /// Sample id to label, for the rows of `--by sample`.
    let labels: [String: String]
    private var groups: [String: Group] = [:]

    public init(by grouping: StatsGrouping, sampleLabels: [String: String] = [:]) {
        self.grouping = grouping
        labels = sampleLabels
    }

    /// Whether the scan must read sample ids (it skips them otherwise, for speed).
    public var needsSamples: Bool { grouping == .sample }

    public mutating func add(_ trial: ScoredTrial, _ context: LogReader.TrialContext) {
        // Copies: the closures below must not read `self` while `group` modifies it.
        let grouping = self.grouping
        let labels = self.labels
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

    private mutating func group(_ key: String, _ name: @autoclosure () -> String, _ update: (inout Group) -> Void) {
        if groups[key] == nil { groups[key] = Group(name: name()) }
        update(&groups[key]!)
    }

    /// The rows, in `stats`' order.
    public func rows() -> [StatsRow] {
        var iso = ISOTimeFormatter()
        var rows = groups.map { key, g in
            StatsRow(
                group: g.name, groupId: key,
                started: grouping == .session ? iso.string(wallNs: g.started) : nil, kind: g.kind,
                figures: g.tally.figures,
                sessionsWithoutStationData: g.sessionsWithoutStationData.sorted())
        }
        if grouping == .sample {
            let flags = SampleFlag.judge(rows.compactMap { r in r.kind.map { (r.groupId, $0, r.figures) } })
            for i in rows.indices { rows[i].sampleFlag = flags[rows[i].groupId] }
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

/// A trial row's compact text (`trial.layout`, `trial.seen`) into the trial the figures
/// count, the same from SQLite's column bytes or PostgreSQL's; its buffers are reused from
/// row to row.
public struct TrialRowDecoder {
    /// Whether sample ids are materialised (only `--by sample` and the report need them).
    public let samples: Bool
    var slots: [StationInLayout] = []
    var seen: [StationSeen] = []

    public init(samples: Bool) { self.samples = samples }

    /// `outcome` as the log spells it; an outcome lineup does not know counts as aborted, as
    /// `stats` always has. Trials of a log older than schema v3 have no `seen`: they are scored
    /// trials without station data, never counted by another rule.
    ///
    /// nil when the layout is not one a station writes (a station out of `LogLimits`, a run
    /// of digits no station has): the caller names the trial, before anything is sized by it.
    public mutating func trial(
        outcome: String, latencyNs: Int64?, layout: UnsafeRawBufferPointer?, seen seenText: UnsafeRawBufferPointer?
    ) -> ScoredTrial? {
        guard
            LogReader.parseLayout(
                layout?.baseAddress?.assumingMemoryBound(to: UInt8.self), layout?.count ?? 0, into: &slots,
                samples: samples)
        else { return nil }
        let hasSeen =
            seenText != nil
            && LogReader.parseSeen(
                seenText?.baseAddress?.assumingMemoryBound(to: UInt8.self), seenText?.count ?? 0, into: &seen)
            && seen.count == slots.count
        return ScoredTrial(
            outcome: TrialOutcome(rawValue: outcome) ?? .aborted, latencyNs: latencyNs,
            stations: slots.enumerated().map { index, slot in
                StationObservation(
                    station: slot.station, kind: slot.kind, sample: slot.sample.isEmpty ? nil : slot.sample,
                    seen: hasSeen ? seen[index] : nil)
            })
    }
}

extension LogReader {
    /// One pass over the trials (after corrections) with their compact layouts and station
    /// views; the grouping is `StatsGrouper`'s, the counting `Tally`'s. Reading compact text
    /// rather than joining 500,000 station rows keeps `stats` over 100,000 trials well under a
    /// second.
    public func stats(by grouping: StatsGrouping, _ filter: LogFilter = LogFilter()) throws -> [StatsRow] {
        try read { db in
            var labels: [String: String] = [:]
            if grouping == .sample {
                for row in try Row.fetchAll(db, sql: "SELECT id, label FROM sample") { labels[row[0]] = row[1] }
            }
            var grouper = StatsGrouper(by: grouping, sampleLabels: labels)
            try Self.scanTrials(db, filter, samples: grouper.needsSamples) { trial, context in
                grouper.add(trial, context)
            }
            return grouper.rows()
        }
    }

    /// Where a scanned trial belongs.
    public struct TrialContext: Sendable {
        public var dogId: String
        public var dog: String
        public var sessionId: String
        public var sessionWallNs: Int64

        public init(dogId: String, dog: String, sessionId: String, sessionWallNs: Int64) {
            self.dogId = dogId
            self.dog = dog
            self.sessionId = sessionId
            self.sessionWallNs = sessionWallNs
        }
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
        var decoder = TrialRowDecoder(samples: samples)
        func bytes(_ column: Int32) -> UnsafeRawBufferPointer? {
            guard sqlite3_column_type(sqlite, column) != SQLITE_NULL else { return nil }
            // The text pointer first: SQLite counts bytes of the value as last converted.
            let base = sqlite3_column_text(sqlite, column)
            return UnsafeRawBufferPointer(start: base, count: Int(sqlite3_column_bytes(sqlite, column)))
        }
        while true {
            let rc = sqlite3_step(sqlite)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else {
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: rc), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
            }
            let latency: Int64? = sqlite3_column_type(sqlite, 1) == SQLITE_NULL ? nil : sqlite3_column_int64(sqlite, 1)
            guard let trial = decoder.trial(outcome: text(0), latencyNs: latency, layout: bytes(2), seen: bytes(3))
            else { throw LogLimits.badLayout(trial: text(8)) }
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
