import GRDB
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

extension LogReader {
    public func stats(by grouping: StatsGrouping, _ filter: LogFilter = LogFilter()) throws -> [StatsRow] {
        let (key, name, joins, perStation): (String, String, String, Bool)
        switch grouping {
        case .dog:
            (key, name, joins, perStation) = ("s.dog_id", "d.name", "", false)
        case .session:
            (key, name, joins, perStation) = ("s.id", "d.name || ' ' || s.id", "", false)
        case .sample:
            (key, name, joins, perStation) = (
                "ts.sample_id", "sm.label",
                "JOIN trial_station ts ON ts.trial_id = t.id JOIN sample sm ON sm.id = ts.sample_id", true
            )
        case .station:
            (key, name, joins, perStation) = (
                "ts.station", "'station ' || ts.station", "JOIN trial_station ts ON ts.trial_id = t.id", true
            )
        }
        let base = """
            FROM trial_current t JOIN session s ON s.id = t.session_id JOIN dog d ON d.id = s.dog_id
            """
        let conditions = """
            (?1 IS NULL OR s.dog_id = ?1) AND (?2 IS NULL OR s.id = ?2)
            AND (?3 IS NULL OR t.wall_ns >= ?3) AND (?4 IS NULL OR t.wall_ns < ?4)
            """
        let arguments: StatementArguments = [filter.dogId, filter.sessionId, filter.since, filter.until]
        return try read { db in
            var rows: [String: StatsRow] = [:]
            var order: [String] = []
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT CAST(\(key) AS TEXT) AS gid, \(name) AS gname, t.outcome, count(*) AS n
                    \(base) \(joins) WHERE \(conditions)
                    GROUP BY gid, t.outcome ORDER BY gname, gid
                    """, arguments: arguments)
            {
                let gid: String = row["gid"]
                if rows[gid] == nil {
                    order.append(gid)
                    rows[gid] = StatsRow(
                        group: row["gname"] ?? gid, groupId: gid, results: OutcomeCounts(),
                        sensitivity: Proportion(successes: 0, trials: 0),
                        specificity: Proportion(successes: 0, trials: 0), medianLatencyMs: nil, indications: 0)
                }
                rows[gid]?.results.add(TrialOutcome(rawValue: row["outcome"]) ?? .aborted, count: row["n"])
            }
            let stationJoin = perStation ? joins : "JOIN trial_station ts ON ts.trial_id = t.id"
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT CAST(\(key) AS TEXT) AS gid,
                        sum(ts.kind = 'target') AS targets,
                        sum(ts.kind = 'target' AND t.indicated_station IS ts.station) AS found,
                        sum(ts.kind IN ('control', 'distractor')) AS others,
                        sum(ts.kind IN ('control', 'distractor') AND t.indicated_station IS NOT ts.station) AS passed
                    \(base) \(stationJoin) WHERE \(conditions) AND t.outcome <> 'aborted'
                    GROUP BY gid
                    """, arguments: arguments)
            {
                let gid: String = row["gid"]
                rows[gid]?.sensitivity = Proportion(successes: row["found"], trials: row["targets"])
                rows[gid]?.specificity = Proportion(successes: row["passed"], trials: row["others"])
            }
            // For a station or sample, only indications made at it.
            let atGroup = perStation ? "AND t.indicated_station = ts.station" : ""
            var latencies: [String: [Int64]] = [:]
            let cursor = try Row.fetchCursor(
                db,
                sql: """
                    SELECT CAST(\(key) AS TEXT) AS gid, t.latency_ns
                    \(base) \(joins) WHERE \(conditions) AND t.indicated_station IS NOT NULL
                        AND t.latency_ns IS NOT NULL AND t.outcome <> 'aborted' \(atGroup)
                    """, arguments: arguments)
            while let row = try cursor.next() {
                latencies[row["gid"], default: []].append(row["latency_ns"])
            }
            for (gid, values) in latencies {
                let sorted = values.sorted()
                let middle = sorted.count / 2
                let median =
                    sorted.count % 2 == 1
                    ? Double(sorted[middle]) : (Double(sorted[middle - 1]) + Double(sorted[middle])) / 2
                rows[gid]?.medianLatencyMs = median / 1e6
                rows[gid]?.indications = sorted.count
            }
            return order.compactMap { rows[$0] }
        }
    }
}
