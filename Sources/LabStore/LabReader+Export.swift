import Foundation
import NIOCore
import PostgresNIO
import ReadingRows
import SessionLog

/// `export --lab`: the rows `LogReader.export` writes from the merged logs, selected from the
/// store by the same `LogFilter` and written by the same `RowWriter`. The columns (names and how
/// each is written) are the log's own (`ExportQuery.columns`); only their SQL is the store's.
enum LabExportQuery {
    /// `$1`…`$9` as `LogFilter.labBindings` binds them.
    static let noSessionChoice =
        "($5::text IS NULL AND $6::text IS NULL AND $7::text IS NULL AND $8::text IS NULL AND $9::text IS NULL)"

    /// Dog names in SQLite's NOCASE order: ASCII letters folded, then by bytes.
    static let nocaseName =
        "translate(d.name, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') COLLATE \"C\""

    static func make(_ table: ExportTable, _ filter: LogFilter, stations: Int) -> PostgresQuery {
        if table == .guesses {
            // The inputs `GuessExportRows` computes a guess's row from: a log's SQL, the same names here.
            let selection = zip(GuessInput.allCases, GuessInput.selection).map { input, expression in
                input.isInteger ? "(\(expression))::bigint" : "(\(expression))::text"
            }
            return PostgresQuery(
                unsafeSQL: LabReader.guessQuery(selection.joined(separator: ", "), filter), binds: filter.labBindings)
        }
        let columns = ExportQuery.columns(table, stations: stations)
        let (expressions, from) = sql(table, filter, stations: stations)
        let select = columns.map { column -> String in
            guard let expression = expressions[column.name] else {
                preconditionFailure("the store has no SQL for \(table)'s column \(column.name)")
            }
            // One type per style, as the row reader expects it.
            switch column.style {
            case .text: return "(\(expression))::text"
            // Its number, or nothing (another column's): the row writes the name (`StationNameRows`).
            case .stationName, .stationNameOf, .trialStationName: return "(\(expression))::bigint"
            case .real: return "(\(expression))::float8"
            case .integer, .isoTime, .unsigned: return "(\(expression))::bigint"
            }
        }
        return PostgresQuery(
            unsafeSQL: "SELECT " + (select + stationsSelected(table)).joined(separator: ", ") + "\n" + from,
            binds: filter.labBindings)
    }

    /// An event's stations, after the columns, as bits (1 << N for station N; `StationNameRows`):
    /// its trial's (`trial_stations`, joined once per trial), else its session's over all its
    /// trials, as a log looks them up. A station off the board (stored before v9) is left out.
    static func stationsSelected(_ table: ExportTable) -> [String] {
        guard table == .events else { return [] }
        return [
            """
            coalesce(lay.stations, (SELECT bit_or(1::bigint << ts.station::int) FROM store.trial_station ts
                JOIN store.trial tt ON tt.id = ts.trial_id
                WHERE tt.session_id = e.session_id AND ts.station BETWEEN \(onBoard)))
            """
        ]
    }

    static let onBoard = "\(LogLimits.stations.lowerBound) AND \(LogLimits.stations.upperBound)"

    /// The chosen sessions' settings, read once before the rows (`StationNameRows`): by the dog,
    /// the session and the session-level choices, not the times.
    static func sessionSettings(_ filter: LogFilter) -> PostgresQuery {
        // $3 and $4 (the times) are not used here: bound typed, as PostgreSQL needs every parameter's type.
        var binds = PostgresBindings(capacity: 9)
        binds.append(filter.dogId)
        binds.append(filter.sessionId)
        binds.append(Int64(0))
        binds.append(Int64(0))
        binds.append(filter.mode?.rawValue)
        binds.append(filter.program)
        binds.append(filter.phase)
        binds.append(filter.step)
        binds.append(filter.handler)
        return PostgresQuery(
            unsafeSQL: """
                SELECT s.id, s.settings::text FROM store.session s
                WHERE ($1::text IS NULL OR s.dog_id = $1::text) AND ($2::text IS NULL OR s.id = $2::text)
                    AND \(filter.labSessionCondition())
                """, binds: binds)
    }

    /// Each column's SQL by name, and the FROM, WHERE and ORDER BY, as `ExportQuery.make` has
    /// them on a log. Text is ordered by bytes (`COLLATE "C"`), as SQLite orders it.
    static func sql(_ table: ExportTable, _ filter: LogFilter, stations: Int) -> ([String: String], String) {
        let chosenSessions = filter.labSessionCondition()
        switch table {
        case .guesses:
            preconditionFailure("a guess's columns are computed from its inputs (make)")
        case .events:
            return (
                [
                    "event_id": "e.id", "dog": "d.name", "session_id": "e.session_id", "trial_id": "e.trial_id",
                    "kind": "e.kind", "station": "e.station", "station_label": "e.station", "sample": "sm.label",
                    "sample_kind": "ts.kind",
                    "time": "e.wall_ns", "mono_ns": "e.mono_ns", "kernel_ns": "e.kernel_ns", "value": "e.value",
                    "duration_ns": "e.duration_ns", "click_edge_ns": "e.click_edge_ns",
                    "click_handed_ns": "e.click_handed_ns", "click_trigger_ns": "e.click_trigger_ns",
                    "click_delay_frames": "e.click_delay_frames",
                    "click_onset_latency_ns": "e.click_onset_latency_ns", "detail": "e.detail",
                    "station_name": "s.station", "station_id": "e.station_id",
                ],
                // Each station's events in its own order; stations by id (a merged log has them
                // in the order its logs were merged).
                """
                FROM store.event e LEFT JOIN store.session s ON s.id = e.session_id
                LEFT JOIN store.dog d ON d.id = s.dog_id
                LEFT JOIN store.trial_station ts ON ts.trial_id = e.trial_id AND ts.station = e.station
                LEFT JOIN store.sample sm ON sm.id = ts.sample_id
                LEFT JOIN (SELECT ts.trial_id, bit_or(1::bigint << ts.station::int) AS stations
                    FROM store.trial_station ts JOIN store.trial t ON t.id = ts.trial_id
                    JOIN store.session s ON s.id = t.session_id
                    WHERE ts.station BETWEEN \(onBoard)
                        AND ($1::text IS NULL OR s.dog_id = $1::text) AND ($2::text IS NULL OR t.session_id = $2::text)
                        AND \(chosenSessions)
                    GROUP BY ts.trial_id) lay ON lay.trial_id = e.trial_id
                WHERE ($1::text IS NULL OR s.dog_id = $1::text) AND ($2::text IS NULL OR e.session_id = $2::text)
                    AND ($3::bigint IS NULL OR e.wall_ns >= $3::bigint) AND ($4::bigint IS NULL OR e.wall_ns < $4::bigint)
                    AND \(chosenSessions)
                ORDER BY e.station_id COLLATE "C", e.seq
                """
            )
        case .trials:
            var columns = [
                "trial_id": "t.id", "dog": "d.name", "session_id": "t.session_id", "phase": "s.phase",
                "step": "s.step", "exercise": "s.exercise", "mode": "s.mode", "number": "t.number",
                "outcome": "t.outcome", "indicated_station": "t.indicated_station",
                "indicated_station_name": "t.indicated_station", "latency_ns": "t.latency_ns",
                "search_ns": "t.search_ns", "seed": "t.seed", "started": "t.started_wall_ns",
                "started_mono_ns": "t.started_mono_ns", "ended": "t.wall_ns", "ended_mono_ns": "t.mono_ns",
                "corrects": "t.corrects", "reason": "t.reason", "station_name": "s.station",
                "station_id": "s.station_id", "dog_id": "s.dog_id",
                "program": "SELECT p.name FROM store.program p WHERE p.id = s.program_id",
                "handler": "SELECT h.code FROM store.handler h WHERE h.id = s.handler_id",
                "temperature_c": "s.temperature_c", "humidity_pct": "s.humidity_pct", "conditions": "s.conditions",
            ]
            for column in ExportQuery.targetDilutionColumns(trialStation: "store.trial_station", sample: "store.sample")
                + ExportQuery.procedureColumns(trialProcedure: "store.trial_procedure")
            {
                columns[column.name] = column.expression
            }
            for station in stride(from: 1, through: stations, by: 1) {
                columns["station_\(station)_sample"] = """
                    SELECT sm.label FROM store.trial_station ts JOIN store.sample sm ON sm.id = ts.sample_id
                    WHERE ts.trial_id = t.id AND ts.station = \(station)
                    """
                columns["station_\(station)_name"] = "NULL"
                for field in ["kind", "visited", "indicated", "first_indication_ns", "sniffs", "dwell_ns", "novel"] {
                    columns["station_\(station)_\(field)"] =
                        "SELECT ts.\(field) FROM store.trial_station ts WHERE ts.trial_id = t.id AND ts.station = \(station)"
                }
            }
            return (
                columns,
                """
                FROM store.trial_current t JOIN store.session s ON s.id = t.session_id
                JOIN store.dog d ON d.id = s.dog_id
                WHERE ($1::text IS NULL OR s.dog_id = $1::text) AND ($2::text IS NULL OR t.session_id = $2::text)
                    AND ($3::bigint IS NULL OR t.wall_ns >= $3::bigint) AND ($4::bigint IS NULL OR t.wall_ns < $4::bigint)
                    AND \(chosenSessions)
                ORDER BY t.wall_ns, t.number, t.id COLLATE "C"
                """
            )
        case .sessions:
            return (
                [
                    "session_id": "s.id", "dog_id": "s.dog_id", "dog": "d.name", "handler": "h.code",
                    "program": "p.name", "program_sha256": "p.sha256", "phase": "s.phase",
                    "phase_steps": "s.phase_steps", "step": "s.step", "exercise": "s.exercise", "mode": "s.mode",
                    "station": "s.station", "started": "s.wall_ns", "started_mono_ns": "s.mono_ns",
                    "trials": "coalesce(c.trials, 0)", "hits": "coalesce(c.hits, 0)",
                    "misses": "coalesce(c.misses, 0)", "false_alerts": "coalesce(c.false_alerts, 0)",
                    "correct_rejections": "coalesce(c.correct_rejections, 0)", "aborted": "coalesce(c.aborted, 0)",
                    "ended_how":
                        "SELECT e.how FROM store.session_end e WHERE e.session_id = s.id ORDER BY e.wall_ns LIMIT 1",
                    // The notes in the order the station wrote them, as a log keeps them.
                    "improvement_suggestions": """
                    SELECT string_agg(n.text, ' | ' ORDER BY n.mono_ns, n.id) FROM store.session_note n
                    WHERE n.session_id = s.id AND n.kind = 'improvement'
                    """,
                    "settings": "s.settings", "temperature_c": "s.temperature_c", "humidity_pct": "s.humidity_pct",
                    "conditions": "s.conditions",
                ],
                """
                FROM store.session s JOIN store.dog d ON d.id = s.dog_id LEFT JOIN store.handler h ON h.id = s.handler_id
                LEFT JOIN store.program p ON p.id = s.program_id
                LEFT JOIN (SELECT session_id, count(*) AS trials, count(*) FILTER (WHERE outcome = 'hit') AS hits,
                        count(*) FILTER (WHERE outcome = 'miss') AS misses,
                        count(*) FILTER (WHERE outcome = 'false-alert') AS false_alerts,
                        count(*) FILTER (WHERE outcome = 'correct-rejection') AS correct_rejections,
                        count(*) FILTER (WHERE outcome = 'aborted') AS aborted
                    FROM store.trial_current GROUP BY session_id) c ON c.session_id = s.id
                WHERE ($1::text IS NULL OR s.dog_id = $1::text) AND ($2::text IS NULL OR s.id = $2::text)
                    AND ($3::bigint IS NULL OR s.wall_ns >= $3::bigint) AND ($4::bigint IS NULL OR s.wall_ns < $4::bigint)
                    AND \(chosenSessions)
                ORDER BY s.wall_ns, s.id COLLATE "C"
                """
            )
        case .samples:
            return (
                [
                    "sample_id": "sm.id", "label": "sm.label", "kind": "sm.kind", "diagnosis": "sm.diagnosis",
                    "source": "sm.source", "collection": "sm.collection", "processing": "sm.processing",
                    "collected_on": "sm.collected_on", "added": "sm.wall_ns", "added_mono_ns": "sm.mono_ns",
                    // sample_usage on a log: a correction repeats its trial's layout, so it is not counted.
                    "uses": """
                    SELECT count(*) FROM store.trial_station ts JOIN store.trial t ON t.id = ts.trial_id
                    WHERE ts.sample_id = sm.id AND t.corrects IS NULL
                    """,
                    "notes": """
                    SELECT string_agg(n.text, ' | ' ORDER BY n.mono_ns, n.id) FROM store.sample_note n
                    WHERE n.sample_id = sm.id
                    """,
                    "stock": "SELECT st.label FROM store.sample st WHERE st.id = sm.stock_id",
                    "stock_id": "sm.stock_id", "dilution_factor": "sm.dilution_factor",
                    "concentration": "sm.concentration", "concentration_unit": "sm.concentration_unit",
                    "diluent": "sm.diluent", "made_on": "sm.made_on", "made_by": "sm.made_by",
                ],
                """
                FROM store.sample sm
                WHERE ($1::text IS NULL OR sm.id IN (SELECT ts.sample_id FROM store.trial_station ts
                        JOIN store.trial t ON t.id = ts.trial_id JOIN store.session s ON s.id = t.session_id
                        WHERE s.dog_id = $1::text))
                    AND ($2::text IS NULL OR sm.id IN (SELECT ts.sample_id FROM store.trial_station ts
                        JOIN store.trial t ON t.id = ts.trial_id WHERE t.session_id = $2::text))
                    AND ($3::bigint IS NULL OR sm.wall_ns >= $3::bigint) AND ($4::bigint IS NULL OR sm.wall_ns < $4::bigint)
                    AND (\(noSessionChoice) OR sm.id IN (SELECT ts.sample_id FROM store.trial_station ts
                        JOIN store.trial t ON t.id = ts.trial_id JOIN store.session s ON s.id = t.session_id
                        WHERE \(chosenSessions)))
                ORDER BY sm.label COLLATE "C", sm.id COLLATE "C"
                """
            )
        case .milestones:
            return (
                [
                    "milestone_id": "m.id", "dog_id": "m.dog_id", "dog": "d.name",
                    "milestone": "CASE WHEN m.step IS NULL THEN 'phase graduated' ELSE 'step passed' END",
                    "program": "p.name", "phase": "m.phase", "step": "m.step", "criterion": "m.criterion",
                    "session_id": "m.session_id", "time": "m.wall_ns", "mono_ns": "m.mono_ns",
                    "station_name": "s.station", "station_id": "CASE WHEN s.id IS NULL THEN NULL ELSE s.station_id END",
                ],
                """
                FROM store.milestone m JOIN store.dog d ON d.id = m.dog_id
                LEFT JOIN store.session s ON s.id = m.session_id LEFT JOIN store.program p ON p.id = s.program_id
                WHERE ($1::text IS NULL OR m.dog_id = $1::text) AND ($2::text IS NULL OR m.session_id = $2::text)
                    AND ($3::bigint IS NULL OR m.wall_ns >= $3::bigint) AND ($4::bigint IS NULL OR m.wall_ns < $4::bigint)
                    AND \(chosenSessions)
                ORDER BY m.wall_ns, m.id COLLATE "C"
                """
            )
        case .dogs:
            return (
                [
                    "dog_id": "d.id", "dog": "d.name", "born": "d.born",
                    "notes": """
                    coalesce((SELECT n.text FROM store.dog_note n WHERE n.dog_id = d.id
                        ORDER BY n.wall_ns DESC, n.mono_ns DESC LIMIT 1), d.notes)
                    """,
                    "added": "d.wall_ns", "added_mono_ns": "d.mono_ns",
                    "sessions": "SELECT count(*) FROM store.session s WHERE s.dog_id = d.id",
                    "trials": """
                    SELECT count(*) FROM store.trial_current t JOIN store.session s ON s.id = t.session_id
                    WHERE s.dog_id = d.id
                    """,
                    "first_session": "SELECT min(s.wall_ns) FROM store.session s WHERE s.dog_id = d.id",
                    "last_session": "SELECT max(s.wall_ns) FROM store.session s WHERE s.dog_id = d.id",
                    "steps_passed":
                        "SELECT count(*) FROM store.milestone m WHERE m.dog_id = d.id AND m.step IS NOT NULL",
                    "phases_graduated":
                        "SELECT count(*) FROM store.milestone m WHERE m.dog_id = d.id AND m.step IS NULL",
                    "station_ids": """
                    SELECT string_agg(x.id, ' | ' ORDER BY x.id COLLATE "C")
                    FROM (SELECT DISTINCT s.station_id AS id FROM store.session s WHERE s.dog_id = d.id) x
                    """,
                    "station_names": """
                    SELECT string_agg(x.station, ' | ' ORDER BY x.station COLLATE "C")
                    FROM (SELECT DISTINCT s.station FROM store.session s
                        WHERE s.dog_id = d.id AND s.station IS NOT NULL) x
                    """,
                ],
                """
                FROM store.dog d
                WHERE ($1::text IS NULL OR d.id = $1::text)
                    AND ($2::text IS NULL OR d.id = (SELECT s.dog_id FROM store.session s WHERE s.id = $2::text))
                    AND ($3::bigint IS NULL OR d.wall_ns >= $3::bigint) AND ($4::bigint IS NULL OR d.wall_ns < $4::bigint)
                    AND (\(noSessionChoice) OR d.id IN (SELECT s.dog_id FROM store.session s WHERE \(chosenSessions)))
                ORDER BY \(nocaseName), d.wall_ns
                """
            )
        }
    }
}

/// A row of the store as `RowWriter` reads it: the query casts every column to bigint, float8
/// or text, each read from its bytes (binary bigint or float8, or text in either format).
struct LabExportRow: ExportRow {
    var cells: [ByteBuffer?] = []
    var formats: [PostgresFormat] = []

    mutating func load(_ row: PostgresRow) {
        cells.removeAll(keepingCapacity: true)
        formats.removeAll(keepingCapacity: true)
        for cell in row {
            cells.append(cell.bytes)
            formats.append(cell.format)
        }
    }

    func isNull(_ column: Int) -> Bool { cells[column] == nil }

    func int64(_ column: Int) -> Int64 {
        guard let bytes = cells[column] else { return 0 }
        if formats[column] == .binary, bytes.readableBytes == 8 {
            return bytes.getInteger(at: bytes.readerIndex, as: Int64.self) ?? 0
        }
        return Int64(String(buffer: bytes)) ?? 0
    }

    func double(_ column: Int) -> Double {
        guard let bytes = cells[column] else { return 0 }
        if formats[column] == .binary, bytes.readableBytes == 8,
            let bits = bytes.getInteger(at: bytes.readerIndex, as: UInt64.self)
        {
            return Double(bitPattern: bits)
        }
        return Double(String(buffer: bytes)) ?? 0
    }

    func withText(_ column: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        guard let bytes = cells[column] else { return }
        bytes.withUnsafeReadableBytes { raw in body(raw.bindMemory(to: UInt8.self)) }
    }
}

extension LabReader {
    /// Streams the rows `export` writes from the merged logs, `filter` selecting them as it
    /// does there; one row in memory at a time. Returns the number of rows written.
    @discardableResult
    public func export(
        _ table: ExportTable, format: ExportFormat, filter: LogFilter = LogFilter(), to sink: ByteSink,
        timeZone: TimeZone = .current
    ) async throws -> Int {
        var count = 0
        do {
            // The highest station on the board sizes the trials' columns. A trial station off the
            // board (stored before v9) has no column: it is left out, named once.
            let low = Int64(LogLimits.stations.lowerBound)
            let high = Int64(LogLimits.stations.upperBound)
            let bounds = try await store.rows(
                """
                SELECT coalesce(max(station) FILTER (WHERE station BETWEEN \(low) AND \(high)), 0)
                FROM store.trial_station
                """)
            let highest = try bounds[0].decode(Int64.self)
            if table == .trials {
                for row in try await store.rows(
                    """
                    SELECT trial_id, station FROM store.trial_station WHERE station NOT BETWEEN \(low) AND \(high)
                    ORDER BY trial_id COLLATE "C", station
                    """)
                {
                    let (trial, station) = try row.decode((String, Int64).self)
                    damage.leaveOut(
                        store: store.display, "a station of trial \(trial)",
                        because: "station \(station), outside \(low) to \(high)")
                }
            }
            let query = LabExportQuery.make(table, filter, stations: Int(highest))
            let columns = ExportQuery.columns(table, stations: Int(highest))
            var settings: [String: String] = [:]
            let names = StationNameRows(
                table, columns: columns, stations: table == .trials ? .kinds : .selected,
                settings: { settings[$0] })
            if names.any {
                for try await row in try await store.connection.query(
                    LabExportQuery.sessionSettings(filter), logger: store.logger)
                {
                    let (id, text) = try row.decode((String, String?).self)
                    settings[id] = text
                }
            }
            var writer = RowWriter(
                columns: columns, format: format, sink: sink, timeZone: timeZone, names: names.any ? names : nil)
            writer.writeHeader()
            var cells = LabExportRow()
            var guesses = GuessExportRows()
            for try await row in try await store.connection.query(query, logger: store.logger) {
                cells.load(row)
                count += 1
                let more = table == .guesses ? try writer.write(try guesses.row(cells)) : try writer.write(cells)
                if !more { break }
            }
        } catch let error as LabStoreError {
            throw error
        } catch let error as SessionLogError {
            // A trial's layout no station writes, or the export's reader: said as on a log.
            throw error
        } catch {
            throw store.map(error)
        }
        try sink.flush()
        return count
    }
}
