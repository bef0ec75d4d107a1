import Foundation
import GRDB
import GRDBSQLite
import ReadingRows

/// How a column's value is written.
public enum ExportStyle: Sendable, Equatable {
    case integer
    case text
    /// Integer nanoseconds since 1970 (UTC), written as ISO 8601 with offset.
    case isoTime
    /// A UInt64 stored in SQLite's signed integer (seeds).
    case unsigned
    /// A real number (a dilution factor, a concentration, a temperature), written as Swift's
    /// shortest round-trip form (`1000.0`, `1e-07`, `21.5`): the same bytes from either source.
    case real
    /// A station's name: the SQL selects its number, written as the name its session logged
    /// (`StationNameRows`, the rule `StationNames` keeps).
    case stationName
    /// The name of the station whose number the column of this name holds
    /// (`target_station_name` beside `target_station`): its SQL selects nothing (NULL).
    case stationNameOf(String)
    /// The name of station N where the trial has it (`station_N_name`: where `station_N_kind`
    /// is not NULL), empty where it has not: its SQL selects nothing (NULL).
    case trialStationName(Int)
}

/// One exported column: its name in the header, its SQL, how its value is written. A guess's
/// columns are computed from what the query selects (`GuessExportRows`): their SQL is empty.
public struct ExportColumn: Sendable {
    public var name: String
    public var expression: String
    public var style: ExportStyle

    public init(name: String, expression: String, style: ExportStyle) {
        self.name = name
        self.expression = expression
        self.style = style
    }
}

/// The queries behind `export`, public so a benchmark can hand the same rows to
/// `sqlite3 -csv`.
public struct ExportQuery {
    public let columns: [ExportColumn]
    let from: String
    let order: String
    let values: [DatabaseValue]
    /// What the SQL selects when it is not the columns' SQL: a guess's inputs (`GuessInput`).
    var selection: [String]? = nil
    /// Written before the SELECT: the guesses' WITH clause.
    var prefix = ""
    var arguments: StatementArguments { StatementArguments(values) }

    /// The SQL that selects the exported rows.
    public var sql: String {
        prefix + "SELECT " + (selection ?? columns.map(\.expression)).joined(separator: ", ") + "\n" + from
            + "\n"
            + order
    }

    public var header: [String] { columns.map(\.name) }

    /// The same query with its arguments written in, for `sqlite3`.
    public var inlineSQL: String {
        var text = sql
        for (index, value) in values.enumerated().reversed() {
            let literal: String
            switch value.storage {
            case .int64(let v): literal = String(v)
            case .string(let s): literal = "'" + s.replacingOccurrences(of: "'", with: "''") + "'"
            default: literal = "NULL"
            }
            text = text.replacingOccurrences(of: "?\(index + 1)", with: literal)
        }
        return text
    }

    /// The trial's target as a dilution (issue 38): the station that held the target (a lineup
    /// has at most one), its sample, and what that sample was diluted from and how; empty on a
    /// trial with no target, and the dilution's columns empty when the target is no dilution.
    /// One definition for both sources: the store (`LabExportQuery`) passes its own tables.
    public static func targetDilutionColumns(trialStation: String, sample: String) -> [(
        name: String, expression: String, style: ExportStyle
    )] {
        let isTarget = "tx.trial_id = t.id AND tx.kind = 'target'"
        let ofTarget = "\(trialStation) tx JOIN \(sample) sx ON sx.id = tx.sample_id"
        func ofSample(_ field: String) -> String {
            "(SELECT sx.\(field) FROM \(ofTarget) WHERE \(isTarget) LIMIT 1)"
        }
        return [
            ("target_station", "(SELECT tx.station FROM \(trialStation) tx WHERE \(isTarget) LIMIT 1)", .integer),
            // Named from `target_station`'s number: no second subquery.
            ("target_station_name", "NULL", .stationNameOf("target_station")),
            ("target_sample", ofSample("label"), .text),
            (
                "target_stock",
                "(SELECT st.label FROM \(ofTarget) JOIN \(sample) st ON st.id = sx.stock_id WHERE \(isTarget) LIMIT 1)",
                .text
            ),
            ("target_dilution_factor", ofSample("dilution_factor"), .real),
            ("target_concentration", ofSample("concentration"), .real),
            ("target_concentration_unit", ofSample("concentration_unit"), .text),
            ("target_diluent", ofSample("diluent"), .text),
        ]
    }

    static let targetDilution = targetDilutionColumns(trialStation: "trial_station", sample: "sample")

    /// A threshold trial's procedure state (issue 38, `trial_procedure`): what the procedure
    /// presented and what it made of the answer; empty on a trial of no threshold step. A
    /// correction keeps its trial's row (the procedure chose before the outcome was corrected),
    /// so the row is found by session and trial number. One definition for both sources.
    public static func procedureColumns(trialProcedure: String) -> [(
        name: String, expression: String, style: ExportStyle
    )] {
        func of(_ field: String) -> String {
            "(SELECT p.\(field) FROM \(trialProcedure) p WHERE p.session_id = t.session_id AND p.trial_number = t.number)"
        }
        return [
            ("procedure", of("procedure"), .text), ("procedure_rung", of("rung"), .integer),
            ("procedure_catch_trial", of("catch_trial"), .integer), ("procedure_direction", of("direction"), .text),
            ("procedure_reversal", of("reversal"), .integer), ("procedure_reversals", of("reversals"), .integer),
            ("procedure_next_rung", of("next_rung"), .integer), ("procedure_stopped", of("stopped"), .integer),
        ]
    }

    static let procedure = procedureColumns(trialProcedure: "trial_procedure")

    /// The columns of `table`'s export (names, how each is written), the same from any source.
    public static func columns(_ table: ExportTable, stations: Int) -> [ExportColumn] {
        make(table, LogFilter(), stations: stations).columns
    }

    static func make(_ table: ExportTable, _ filter: LogFilter, stations: Int) -> ExportQuery {
        // ?1 to ?4: dog, session and time; ?5 to ?9: the session-level choices (`sessionCondition`).
        let arguments: [DatabaseValue] =
            [
                filter.dogId.databaseValue, filter.sessionId.databaseValue, filter.since.databaseValue,
                filter.until.databaseValue,
            ] + filter.sessionArguments
        let chosenSessions = filter.sessionCondition(from: 5)
        // Samples and dogs are no session's: with a session-level choice, those of the chosen sessions.
        let noSessionChoice = "(?5 IS NULL AND ?6 IS NULL AND ?7 IS NULL AND ?8 IS NULL AND ?9 IS NULL)"
        func col(_ name: String, _ expression: String, _ style: ExportStyle = .text) -> ExportColumn {
            ExportColumn(name: name, expression: expression, style: style)
        }
        switch table {
        case .guesses:
            return ExportQuery(
                columns: GuessInput.columns, from: LogReader.guessRows(chosenSessions), order: LogReader.guessOrder,
                values: arguments, selection: GuessInput.selection, prefix: LogReader.guessChain)
        case .events:
            return ExportQuery(
                columns: [
                    col("event_id", "e.id"), col("dog", "d.name"), col("session_id", "e.session_id"),
                    col("trial_id", "e.trial_id"), col("kind", "e.kind"), col("station", "e.station", .integer),
                    // The station's name on the board (`station_name` is the station that logged it).
                    col("station_label", "e.station", .stationName),
                    col("sample", "sm.label"), col("sample_kind", "ts.kind"), col("time", "e.wall_ns", .isoTime),
                    col("mono_ns", "e.mono_ns", .integer), col("kernel_ns", "e.kernel_ns", .integer),
                    col("value", "e.value", .integer), col("duration_ns", "e.duration_ns", .integer),
                    col("click_edge_ns", "e.click_edge_ns", .integer),
                    col("click_handed_ns", "e.click_handed_ns", .integer),
                    col("click_trigger_ns", "e.click_trigger_ns", .integer),
                    col("click_delay_frames", "e.click_delay_frames", .integer),
                    col("click_onset_latency_ns", "e.click_onset_latency_ns", .integer), col("detail", "e.detail"),
                    // Which station logged it (a lab log merges several).
                    col("station_name", "s.station"),
                    col("station_id", "coalesce(e.station_id, s.station_id, (SELECT id FROM log_identity))"),
                ],
                from: """
                    FROM event e LEFT JOIN session s ON s.id = e.session_id LEFT JOIN dog d ON d.id = s.dog_id
                    LEFT JOIN trial_station ts ON ts.trial_id = e.trial_id AND ts.station = e.station
                    LEFT JOIN sample sm ON sm.id = ts.sample_id
                    WHERE (?1 IS NULL OR s.dog_id = ?1) AND (?2 IS NULL OR e.session_id = ?2)
                        AND (?3 IS NULL OR e.wall_ns >= ?3) AND (?4 IS NULL OR e.wall_ns < ?4)
                        AND \(chosenSessions)
                    """, order: "ORDER BY e.seq", values: arguments)
        case .trials:
            var columns = [
                col("trial_id", "t.id"), col("dog", "d.name"), col("session_id", "t.session_id"),
                col("phase", "s.phase"), col("step", "s.step"), col("exercise", "s.exercise"),
                col("mode", "s.mode"), col("number", "t.number", .integer), col("outcome", "t.outcome"),
                col("indicated_station", "t.indicated_station", .integer),
                col("indicated_station_name", "t.indicated_station", .stationName),
                col("latency_ns", "t.latency_ns", .integer), col("search_ns", "t.search_ns", .integer),
                col("seed", "t.seed", .unsigned), col("started", "t.started_wall_ns", .isoTime),
                col("started_mono_ns", "t.started_mono_ns", .integer), col("ended", "t.wall_ns", .isoTime),
                col("ended_mono_ns", "t.mono_ns", .integer), col("corrects", "t.corrects"),
                col("reason", "t.reason"), col("station_name", "s.station"),
                col("station_id", "coalesce(s.station_id, (SELECT id FROM log_identity))"),
                // Who and what the trial belongs to, so a trial needs no join with the
                // sessions export (added after the columns readers already index).
                col("dog_id", "s.dog_id"), col("program", "(SELECT p.name FROM program p WHERE p.id = s.program_id)"),
                col("handler", "(SELECT h.code FROM handler h WHERE h.id = s.handler_id)"),
            ]
            columns += targetDilution.map { col($0.name, $0.expression, $0.style) }
            columns += [
                col("temperature_c", "s.temperature_c", .real), col("humidity_pct", "s.humidity_pct", .real),
                col("conditions", "s.conditions"),
            ]
            columns += procedure.map { col($0.name, $0.expression, $0.style) }
            for station in stride(from: 1, through: stations, by: 1) {
                // Its name where the trial has it (empty where the sample is): from station_N_kind.
                columns.append(col("station_\(station)_name", "NULL", .trialStationName(station)))
                columns.append(
                    col(
                        "station_\(station)_sample",
                        """
                        (SELECT sm.label FROM trial_station ts JOIN sample sm ON sm.id = ts.sample_id
                         WHERE ts.trial_id = t.id AND ts.station = \(station))
                        """))
                columns.append(
                    col(
                        "station_\(station)_kind",
                        "(SELECT ts.kind FROM trial_station ts WHERE ts.trial_id = t.id AND ts.station = \(station))"))
                // What the station saw (empty for trials logged before schema v3): every
                // station-level figure can be recomputed from these.
                // `novel`: 1 when the dog had never met the station's sample before the trial
                // (docs/figures.md, "Exposure and novelty"); empty before schema v6.
                for field in ["visited", "indicated", "first_indication_ns", "sniffs", "dwell_ns", "novel"] {
                    columns.append(
                        col(
                            "station_\(station)_\(field)",
                            "(SELECT ts.\(field) FROM trial_station ts WHERE ts.trial_id = t.id AND ts.station = \(station))",
                            .integer))
                }
            }
            return ExportQuery(
                columns: columns,
                from: """
                    FROM trial_current t JOIN session s ON s.id = t.session_id JOIN dog d ON d.id = s.dog_id
                    WHERE (?1 IS NULL OR s.dog_id = ?1) AND (?2 IS NULL OR t.session_id = ?2)
                        AND (?3 IS NULL OR t.wall_ns >= ?3) AND (?4 IS NULL OR t.wall_ns < ?4)
                        AND \(chosenSessions)
                    """, order: "ORDER BY t.wall_ns, t.number", values: arguments)
        case .sessions:
            return ExportQuery(
                columns: [
                    col("session_id", "s.id"), col("dog_id", "s.dog_id"), col("dog", "d.name"),
                    col("handler", "h.code"), col("program", "p.name"), col("program_sha256", "p.sha256"),
                    col("phase", "s.phase"), col("phase_steps", "s.phase_steps", .integer), col("step", "s.step"),
                    col("exercise", "s.exercise"), col("mode", "s.mode"), col("station", "s.station"),
                    col("started", "s.wall_ns", .isoTime), col("started_mono_ns", "s.mono_ns", .integer),
                    col("trials", "coalesce(c.trials, 0)", .integer), col("hits", "coalesce(c.hits, 0)", .integer),
                    col("misses", "coalesce(c.misses, 0)", .integer),
                    col("false_alerts", "coalesce(c.false_alerts, 0)", .integer),
                    col("correct_rejections", "coalesce(c.correct_rejections, 0)", .integer),
                    col("aborted", "coalesce(c.aborted, 0)", .integer),
                    // How it ended (ended, stopped, interrupted, unknown); empty while it runs.
                    col(
                        "ended_how",
                        "(SELECT e.how FROM session_end e WHERE e.session_id = s.id ORDER BY e.wall_ns LIMIT 1)"),
                    col(
                        "improvement_suggestions",
                        """
                        (SELECT group_concat(n.text, ' | ') FROM session_note n
                         WHERE n.session_id = s.id AND n.kind = 'improvement')
                        """),
                    col("settings", "s.settings"),
                    col("temperature_c", "s.temperature_c", .real), col("humidity_pct", "s.humidity_pct", .real),
                    col("conditions", "s.conditions"),
                ],
                from: """
                    FROM session s JOIN dog d ON d.id = s.dog_id LEFT JOIN handler h ON h.id = s.handler_id
                    LEFT JOIN program p ON p.id = s.program_id
                    LEFT JOIN (SELECT session_id, count(*) AS trials, sum(outcome = 'hit') AS hits,
                            sum(outcome = 'miss') AS misses, sum(outcome = 'false-alert') AS false_alerts,
                            sum(outcome = 'correct-rejection') AS correct_rejections,
                            sum(outcome = 'aborted') AS aborted
                        FROM trial_current GROUP BY session_id) c ON c.session_id = s.id
                    WHERE (?1 IS NULL OR s.dog_id = ?1) AND (?2 IS NULL OR s.id = ?2)
                        AND (?3 IS NULL OR s.wall_ns >= ?3) AND (?4 IS NULL OR s.wall_ns < ?4)
                        AND \(chosenSessions)
                    """, order: "ORDER BY s.wall_ns, s.id", values: arguments)
        case .samples:
            return ExportQuery(
                columns: [
                    col("sample_id", "sm.id"), col("label", "sm.label"), col("kind", "sm.kind"),
                    col("diagnosis", "sm.diagnosis"), col("source", "sm.source"),
                    col("collection", "sm.collection"), col("processing", "sm.processing"),
                    col("collected_on", "sm.collected_on"), col("added", "sm.wall_ns", .isoTime),
                    col("added_mono_ns", "sm.mono_ns", .integer), col("uses", "u.uses", .integer),
                    col(
                        "notes",
                        "(SELECT group_concat(n.text, ' | ') FROM sample_note n WHERE n.sample_id = sm.id)"),
                    // What a dilution was made from and how (empty for a sample that is none).
                    col("stock", "(SELECT st.label FROM sample st WHERE st.id = sm.stock_id)"),
                    col("stock_id", "sm.stock_id"), col("dilution_factor", "sm.dilution_factor", .real),
                    col("concentration", "sm.concentration", .real),
                    col("concentration_unit", "sm.concentration_unit"), col("diluent", "sm.diluent"),
                    col("made_on", "sm.made_on"), col("made_by", "sm.made_by"),
                ],
                from: """
                    FROM sample sm JOIN sample_usage u ON u.sample_id = sm.id
                    WHERE (?1 IS NULL OR sm.id IN (SELECT ts.sample_id FROM trial_station ts
                            JOIN trial t ON t.id = ts.trial_id JOIN session s ON s.id = t.session_id
                            WHERE s.dog_id = ?1))
                        AND (?2 IS NULL OR sm.id IN (SELECT ts.sample_id FROM trial_station ts
                            JOIN trial t ON t.id = ts.trial_id WHERE t.session_id = ?2))
                        AND (?3 IS NULL OR sm.wall_ns >= ?3) AND (?4 IS NULL OR sm.wall_ns < ?4)
                        AND (\(noSessionChoice) OR sm.id IN (SELECT ts.sample_id FROM trial_station ts
                            JOIN trial t ON t.id = ts.trial_id JOIN session s ON s.id = t.session_id
                            WHERE \(chosenSessions)))
                    """, order: "ORDER BY sm.label", values: arguments)
        case .milestones:
            // A step passed (`step` set) or a phase graduated (`step` empty), with the session
            // whose end earned it; the station is that session's.
            return ExportQuery(
                columns: [
                    col("milestone_id", "m.id"), col("dog_id", "m.dog_id"), col("dog", "d.name"),
                    col("milestone", "CASE WHEN m.step IS NULL THEN 'phase graduated' ELSE 'step passed' END"),
                    col("program", "p.name"), col("phase", "m.phase"), col("step", "m.step"),
                    col("criterion", "m.criterion"), col("session_id", "m.session_id"),
                    col("time", "m.wall_ns", .isoTime), col("mono_ns", "m.mono_ns", .integer),
                    col("station_name", "s.station"),
                    col(
                        "station_id",
                        "CASE WHEN s.id IS NULL THEN NULL ELSE coalesce(s.station_id, (SELECT id FROM log_identity)) END"
                    ),
                ],
                from: """
                    FROM milestone m JOIN dog d ON d.id = m.dog_id LEFT JOIN session s ON s.id = m.session_id
                    LEFT JOIN program p ON p.id = s.program_id
                    WHERE (?1 IS NULL OR m.dog_id = ?1) AND (?2 IS NULL OR m.session_id = ?2)
                        AND (?3 IS NULL OR m.wall_ns >= ?3) AND (?4 IS NULL OR m.wall_ns < ?4)
                        AND \(chosenSessions)
                    """, order: "ORDER BY m.wall_ns, m.id", values: arguments)
        case .dogs:
            // A dog belongs to no one station (a lab log matches it by name across stations): its
            // row names the stations it has sessions on instead.
            return ExportQuery(
                columns: [
                    col("dog_id", "d.id"), col("dog", "d.name"), col("born", "d.born"),
                    col("notes", LogReader.currentDogNotes),
                    col("added", "d.wall_ns", .isoTime), col("added_mono_ns", "d.mono_ns", .integer),
                    col("sessions", "(SELECT count(*) FROM session s WHERE s.dog_id = d.id)", .integer),
                    col(
                        "trials",
                        "(SELECT count(*) FROM trial_current t JOIN session s ON s.id = t.session_id WHERE s.dog_id = d.id)",
                        .integer),
                    col("first_session", "(SELECT min(s.wall_ns) FROM session s WHERE s.dog_id = d.id)", .isoTime),
                    col("last_session", "(SELECT max(s.wall_ns) FROM session s WHERE s.dog_id = d.id)", .isoTime),
                    col(
                        "steps_passed",
                        "(SELECT count(*) FROM milestone m WHERE m.dog_id = d.id AND m.step IS NOT NULL)", .integer),
                    col(
                        "phases_graduated",
                        "(SELECT count(*) FROM milestone m WHERE m.dog_id = d.id AND m.step IS NULL)", .integer),
                    col(
                        "station_ids",
                        """
                        (SELECT group_concat(id, ' | ') FROM (SELECT DISTINCT
                            coalesce(s.station_id, (SELECT id FROM log_identity)) AS id
                         FROM session s WHERE s.dog_id = d.id ORDER BY id))
                        """),
                    col(
                        "station_names",
                        """
                        (SELECT group_concat(station, ' | ') FROM (SELECT DISTINCT s.station FROM session s
                         WHERE s.dog_id = d.id AND s.station IS NOT NULL ORDER BY s.station))
                        """),
                ],
                from: """
                    FROM dog d
                    WHERE (?1 IS NULL OR d.id = ?1)
                        AND (?2 IS NULL OR d.id = (SELECT s.dog_id FROM session s WHERE s.id = ?2))
                        AND (?3 IS NULL OR d.wall_ns >= ?3) AND (?4 IS NULL OR d.wall_ns < ?4)
                        AND (\(noSessionChoice) OR d.id IN (SELECT s.dog_id FROM session s WHERE \(chosenSessions)))
                    """, order: "ORDER BY d.name COLLATE NOCASE, d.wall_ns", values: arguments)
        }
    }
}
