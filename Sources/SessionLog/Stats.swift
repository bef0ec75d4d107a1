import GRDB
import GRDBSQLite
import TrainingEngine

/// How `stats` groups trials.
public enum StatsGrouping: String, Sendable, CaseIterable, Codable {
    case dog, session, sample, station
}

/// Detection figures for one group.
///
/// Trial counts: for `dog` and `session`, each trial once; for `sample` and `station`,
/// each trial in which that sample or station stood in the lineup.
/// Sensitivity and specificity are counted per station, as Ehmann 2012 reports them:
/// sensitivity = target presentations indicated / target presentations; specificity =
/// control and distractor presentations not indicated / those presentations (blank
/// containers are left out). Aborted trials count in `results.aborted` only.
public struct StatsRow: Sendable, Hashable, Codable {
    public var group: String
    public var groupId: String
    public var results: OutcomeCounts
    public var sensitivity: Proportion
    public var specificity: Proportion
    /// Median time from the start cue to an indication (hit or false alert).
    public var medianLatencyMs: Double?
    public var indications: Int
}

/// Running counts for one group.
private struct Tally {
    var name: String
    var results = OutcomeCounts()
    var targets = 0
    var found = 0
    var others = 0
    var passed = 0
    var latencies: [Int64] = []
}

extension LogReader {
    /// One pass over the trials (after corrections) with their compact layouts; the
    /// counting is done here rather than by joining 500,000 layout rows in SQL, which
    /// keeps `stats` over 100,000 trials well under a second.
    public func stats(by grouping: StatsGrouping, _ filter: LogFilter = LogFilter()) throws -> [StatsRow] {
        try read { db in
            var labels: [String: String] = [:]
            if grouping == .sample {
                for row in try Row.fetchAll(db, sql: "SELECT id, label FROM sample") { labels[row[0]] = row[1] }
            }
            var tallies: [String: Tally] = [:]
            func tally(_ key: String, _ name: @autoclosure () -> String, _ update: (inout Tally) -> Void) {
                if tallies[key] == nil { tallies[key] = Tally(name: name()) }
                update(&tallies[key]!)
            }
            let statement = try db.makeStatement(
                sql: """
                    SELECT t.outcome, t.indicated_station, t.latency_ns, t.layout, s.dog_id, d.name, s.id
                    FROM trial_current t JOIN session s ON s.id = t.session_id JOIN dog d ON d.id = s.dog_id
                    WHERE (?1 IS NULL OR s.dog_id = ?1) AND (?2 IS NULL OR s.id = ?2)
                        AND (?3 IS NULL OR t.wall_ns >= ?3) AND (?4 IS NULL OR t.wall_ns < ?4)
                    """)
            try statement.setArguments([filter.dogId, filter.sessionId, filter.since, filter.until])
            // Straight from SQLite's column accessors: GRDB rows and Swift strings per
            // trial would cost more than the query itself.
            let sqlite = statement.sqliteStatement
            func text(_ column: Int32) -> String {
                guard let bytes = sqlite3_column_text(sqlite, column) else { return "" }
                return String(
                    decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(sqlite, column))),
                    as: UTF8.self)
            }
            var slots: [LayoutEntry] = []
            while true {
                let rc = sqlite3_step(sqlite)
                if rc == SQLITE_DONE { break }
                guard rc == SQLITE_ROW else {
                    throw DatabaseError(
                        resultCode: ResultCode(rawValue: rc),
                        message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
                }
                let outcome = TrialOutcome(rawValue: text(0)) ?? .aborted
                let indicated: Int? =
                    sqlite3_column_type(sqlite, 1) == SQLITE_NULL ? nil : Int(sqlite3_column_int64(sqlite, 1))
                let latency: Int64? =
                    sqlite3_column_type(sqlite, 2) == SQLITE_NULL ? nil : sqlite3_column_int64(sqlite, 2)
                Self.parseLayout(
                    sqlite3_column_text(sqlite, 3), Int(sqlite3_column_bytes(sqlite, 3)), into: &slots,
                    samples: grouping == .sample)
                let scored = outcome != .aborted
                func count(_ t: inout Tally, _ slot: LayoutEntry) {
                    guard scored else { return }
                    switch slot.kind {
                    case .target:
                        t.targets += 1
                        if slot.station == indicated { t.found += 1 }
                    case .control, .distractor:
                        t.others += 1
                        if slot.station != indicated { t.passed += 1 }
                    case .blank: break
                    }
                }
                switch grouping {
                case .dog, .session:
                    let key = text(grouping == .dog ? 4 : 6)
                    tally(key, grouping == .dog ? text(5) : "\(text(5)) \(key)") { t in
                        t.results.add(outcome)
                        for slot in slots { count(&t, slot) }
                        if scored, indicated != nil, let latency { t.latencies.append(latency) }
                    }
                case .station, .sample:
                    for slot in slots {
                        let key = grouping == .station ? String(slot.station) : slot.sample
                        if grouping == .sample && key.isEmpty { continue }
                        tally(key, grouping == .station ? "station \(slot.station)" : labels[key] ?? key) { t in
                            t.results.add(outcome)
                            count(&t, slot)
                            if scored, indicated == slot.station, let latency { t.latencies.append(latency) }
                        }
                    }
                }
            }
            return tallies.map { key, t in
                let sorted = t.latencies.sorted()
                let middle = sorted.count / 2
                let median: Double? =
                    sorted.isEmpty
                    ? nil
                    : (sorted.count % 2 == 1
                        ? Double(sorted[middle]) : (Double(sorted[middle - 1]) + Double(sorted[middle])) / 2)
                return StatsRow(
                    group: t.name, groupId: key, results: t.results,
                    sensitivity: Proportion(successes: t.found, trials: t.targets),
                    specificity: Proportion(successes: t.passed, trials: t.others),
                    medianLatencyMs: median.map { $0 / 1e6 }, indications: sorted.count)
            }.sorted { a, b in
                if grouping == .station, let x = Int(a.groupId), let y = Int(b.groupId) { return x < y }
                return (a.group, a.groupId) < (b.group, b.groupId)
            }
        }
    }

    /// Parses `1:target:<uuid>;2:blank:;...` into `slots`, reusing its storage. The
    /// sample id is only materialised when a sample is named.
    static func parseLayout(
        _ base: UnsafePointer<UInt8>?, _ count: Int, into slots: inout [LayoutEntry], samples: Bool = true
    ) {
        slots.removeAll(keepingCapacity: true)
        guard let base else { return }
        let bytes = UnsafeBufferPointer(start: base, count: count)
        var index = 0
        while index < count {
            var station = 0
            while index < count, bytes[index] != UInt8(ascii: ":") {
                station = station * 10 + Int(bytes[index] &- 48)
                index += 1
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
            slots.append(LayoutEntry(station: station, kind: kind, sample: sample))
            index += 1
        }
    }
}

/// One station of a trial's compact layout.
struct LayoutEntry {
    var station: Int
    var kind: SampleKind
    var sample: String
}
