import Figures
import Foundation
import GRDB
import ReadingRows
import TrainingEngine

extension LogReader {
    // MARK: Sessions

    /// Sessions in the filter's order; with `limit`, only that many (the first in that order:
    /// the latest when newest first).
    public func sessions(_ filter: LogFilter = LogFilter(), limit: Int? = nil) throws -> [SessionSummary] {
        try read { db in
            var iso = ISOTimeFormatter()
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT s.id, s.dog_id, d.name AS dog, s.wall_ns, s.phase, s.step, s.exercise, s.mode,
                        p.name AS program, s.station,
                        coalesce(json_extract(s.settings, '$.unlabelled') = 'true', 0) AS unlabelled,
                        count(t.id) AS trials,
                        coalesce(sum(t.outcome = 'hit'), 0) AS hits,
                        coalesce(sum(t.outcome = 'miss'), 0) AS misses,
                        coalesce(sum(t.outcome = 'false-alert'), 0) AS false_alerts,
                        coalesce(sum(t.outcome = 'correct-rejection'), 0) AS correct_rejections,
                        coalesce(sum(t.outcome = 'aborted'), 0) AS aborted,
                        (SELECT e.how FROM session_end e WHERE e.session_id = s.id ORDER BY e.wall_ns LIMIT 1)
                            AS ended_how
                    FROM session s JOIN dog d ON d.id = s.dog_id LEFT JOIN program p ON p.id = s.program_id
                    LEFT JOIN trial_current t ON t.session_id = s.id
                    WHERE (?1 IS NULL OR s.dog_id = ?1) AND (?2 IS NULL OR s.id = ?2)
                        AND (?3 IS NULL OR s.wall_ns >= ?3) AND (?4 IS NULL OR s.wall_ns < ?4)
                        AND \(filter.sessionCondition(from: 5))
                    GROUP BY s.id ORDER BY s.wall_ns \(filter.newestFirst ? "DESC" : "ASC"), s.id LIMIT ?10
                    """,
                arguments: StatementArguments(
                    [
                        filter.dogId.databaseValue, filter.sessionId.databaseValue, filter.since.databaseValue,
                        filter.until.databaseValue,
                    ] + filter.sessionArguments + [(limit ?? -1).databaseValue])
            ).map { row in
                SessionSummary(
                    id: row["id"], dogId: row["dog_id"], dog: row["dog"],
                    started: iso.string(wallNs: row["wall_ns"]), program: row["program"],
                    phase: row["phase"], step: row["step"], exercise: row["exercise"],
                    mode: try row.word("mode", of: "session", row: row["id"]),
                    station: row["station"], unlabelled: row["unlabelled"], results: OutcomeCounts(row),
                    endedHow: row["ended_how"])
            }
        }
    }

    /// Everything the study's session-details view shows.
    public func session(id: String) throws -> SessionDetails {
        try read { db in try LiveDoubleBlind.refuse(db, session: id) }
        let trials = try trials(LogFilter(sessionId: id))
        return try read { db in
            var iso = ISOTimeFormatter()
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT s.*, d.name AS dog, h.code AS handler, p.name AS program, p.sha256
                        FROM session s JOIN dog d ON d.id = s.dog_id
                        LEFT JOIN handler h ON h.id = s.handler_id
                        LEFT JOIN program p ON p.id = s.program_id WHERE s.id = ?
                        """, arguments: [id])
            else { throw SessionLogError.unknownSession(id) }
            let notes = try Row.fetchAll(
                db,
                sql:
                    "SELECT kind, text, wall_ns FROM session_note WHERE session_id = ? ORDER BY wall_ns, mono_ns",
                arguments: [id])
            // The session's figures and its samples, counted by the one implementation.
            var session = Tally()
            var bySample: [String: (label: String?, kind: SampleKind, tally: Tally)] = [:]
            var labels: [String: String] = [:]
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT DISTINCT sm.id, sm.label FROM trial t JOIN trial_station ts ON ts.trial_id = t.id
                    JOIN sample sm ON sm.id = ts.sample_id WHERE t.session_id = ?
                    """, arguments: [id])
            { labels[row[0]] = row[1] }
            try Self.scanTrials(db, LogFilter(sessionId: id), samples: true) { trial, _ in
                session.add(trial)
                for station in trial.stations {
                    // Blanks without a sample id are one group: the clean containers.
                    let key = station.sample ?? "blank"
                    bySample[key, default: (station.sample.flatMap { labels[$0] }, station.kind, Tally())].tally.add(
                        trial, station: station)
                }
            }
            let samples = bySample.values.map { entry in
                let f = entry.tally.figures
                return SessionSample(
                    label: entry.label, kind: entry.kind, presented: f.results.scored,
                    indicated: f.presentations.indications, figures: f)
            }.sorted { ($0.kind.rawValue, $0.label ?? "") < ($1.kind.rawValue, $1.label ?? "") }
            let figures = session.figures
            let counts = figures.results
            let lastTrial = try Int64.fetchOne(
                db, sql: "SELECT max(wall_ns) FROM trial WHERE session_id = ?", arguments: [id])
            let end = try Row.fetchOne(
                db, sql: "SELECT how, detail, wall_ns FROM session_end WHERE session_id = ? ORDER BY wall_ns LIMIT 1",
                arguments: [id])
            let how: String? = end?["how"]
            // An `unknown` end (an older log) carries no time of its own; an interrupted
            // session ended, as far as anyone knows, with its last scored trial.
            let ended: Int64? = how == "ended" || how == "stopped" ? end?["wall_ns"] : lastTrial
            return SessionDetails(
                id: row["id"], dogId: row["dog_id"], dog: row["dog"], handler: row["handler"],
                program: row["program"],
                programSha256: row["sha256"], phase: row["phase"], phaseSteps: row["phase_steps"],
                step: row["step"],
                exercise: row["exercise"], mode: try row.word("mode", of: "session", row: row["id"]),
                station: row["station"],
                settings: row["settings"],
                started: iso.string(wallNs: row["wall_ns"]), ended: ended.map { iso.string(wallNs: $0) },
                endedHow: how, endDetail: end?["detail"],
                conditions: SessionConditions(
                    temperatureC: row["temperature_c"], humidityPercent: row["humidity_pct"], text: row["conditions"]
                ).recorded,
                results: counts,
                correct: figures.trialAccuracy, figures: figures,
                samples: samples,
                improvementSuggestions: notes.filter { $0["kind"] == "improvement" }.map { $0["text"] },
                comments: notes.filter { $0["kind"] == "comment" }.map { $0["text"] },
                trials: trials)
        }
    }

    // MARK: Trials and events

    /// Trials as they stand after corrections, oldest first (newest first if the filter says so).
    public func trials(_ filter: LogFilter = LogFilter(), limit: Int? = nil) throws -> [LoggedTrial] {
        try read { db in
            var iso = ISOTimeFormatter()
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT t.*, d.name AS dog, s.settings AS session_settings FROM trial_current t
                    JOIN session s ON s.id = t.session_id JOIN dog d ON d.id = s.dog_id
                    WHERE (?1 IS NULL OR s.dog_id = ?1) AND (?2 IS NULL OR t.session_id = ?2)
                        AND (?3 IS NULL OR t.wall_ns >= ?3) AND (?4 IS NULL OR t.wall_ns < ?4)
                        AND \(filter.sessionCondition(from: 6))
                    ORDER BY t.wall_ns \(filter.newestFirst ? "DESC" : "ASC"), t.number \(filter.newestFirst ? "DESC" : "ASC") LIMIT ?5
                    """,
                arguments: StatementArguments(
                    [
                        filter.dogId.databaseValue, filter.sessionId.databaseValue, filter.since.databaseValue,
                        filter.until.databaseValue, (limit ?? -1).databaseValue,
                    ] + filter.sessionArguments))
            let layoutStatement = try db.cachedStatement(
                sql: """
                    SELECT ts.station, sm.label, ts.kind, ts.visited, ts.indicated, ts.first_indication_ns,
                        ts.sniffs, ts.dwell_ns, ts.novel FROM trial_station ts
                    LEFT JOIN sample sm ON sm.id = ts.sample_id WHERE ts.trial_id = ? ORDER BY ts.station
                    """)
            // A threshold step's trials only (issue 38): one session's states at a time.
            var procedures: [String: [Int: LoggedProcedureState]] = [:]
            return try rows.map { row in
                let id: String = row["id"]
                var layout = try Row.fetchAll(layoutStatement, arguments: [id]).map {
                    LayoutSlot(
                        station: $0["station"], sample: $0["label"],
                        kind: try $0.word("kind", of: "trial_station", row: "\(id) station \($0["station"] as Int)"),
                        visited: ($0["visited"] as Int?).map { $0 != 0 },
                        indicated: ($0["indicated"] as Int?).map { $0 != 0 },
                        firstIndicationMs: ($0["first_indication_ns"] as Int64?).map { Double($0) / 1e6 },
                        sniffs: $0["sniffs"], dwellMs: ($0["dwell_ns"] as Int64?).map { Double($0) / 1e6 },
                        novel: ($0["novel"] as Int?).map { $0 != 0 })
                }
                let names = StationNames(settings: row["session_settings"], numbers: layout.map(\.station))
                for k in layout.indices { layout[k].name = names.name(layout[k].station) }
                let indicated: Int? = row["indicated_station"]
                let session: String = row["session_id"]
                if procedures[session] == nil { procedures[session] = try Self.procedureStates(db, session: session) }
                var trial = LoggedTrial(
                    id: id, sessionId: row["session_id"], dog: row["dog"], number: row["number"],
                    outcome: try row.word("outcome", of: "trial", row: id), indicatedStation: indicated,
                    indicatedName: indicated.map { names.name($0) },
                    latencyMs: (row["latency_ns"] as Int64?).map { Double($0) / 1e6 },
                    searchMs: (row["search_ns"] as Int64?).map { Double($0) / 1e6 },
                    started: iso.string(wallNs: row["started_wall_ns"]),
                    ended: iso.string(wallNs: row["wall_ns"]),
                    seed: (row["seed"] as Int64?).map { UInt64(bitPattern: $0) }, layout: layout,
                    corrects: row["corrects"], reason: row["reason"])
                trial.procedure = procedures[session]?[trial.number]
                return trial
            }
        }
    }

    /// Events in the order the station logged them.
    public func events(_ filter: LogFilter = LogFilter(), limit: Int? = nil) throws -> [EventSummary] {
        try read { db in
            var iso = ISOTimeFormatter()
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT e.* FROM event e
                    WHERE (?1 IS NULL OR e.session_id IN (SELECT id FROM session WHERE dog_id = ?1))
                        AND (?2 IS NULL OR e.session_id = ?2) AND (?3 IS NULL OR e.trial_id = ?3)
                        AND (?4 IS NULL OR e.kind = ?4)
                        AND (?5 IS NULL OR e.wall_ns >= ?5) AND (?6 IS NULL OR e.wall_ns < ?6)
                    ORDER BY e.seq \(filter.newestFirst ? "DESC" : "ASC") LIMIT ?7
                    """,
                arguments: [
                    filter.dogId, filter.sessionId, filter.trialId, filter.eventKind?.rawValue, filter.since,
                    filter.until, limit ?? -1,
                ]
            )
            // Each session's names, read once (`StationNames`).
            var names: [String: StationNames] = [:]
            func name(_ station: Int?, in session: String?) throws -> String? {
                guard let station, let session else { return nil }
                if names[session] == nil {
                    let settings = try String.fetchOne(
                        db, sql: "SELECT settings FROM session WHERE id = ?", arguments: [session])
                    let numbers = try Int.fetchAll(
                        db,
                        sql: """
                            SELECT station FROM trial_station WHERE trial_id =
                                (SELECT id FROM trial WHERE session_id = ? ORDER BY number LIMIT 1)
                            """, arguments: [session])
                    names[session] = StationNames(settings: settings, numbers: numbers)
                }
                return names[session]?.name(station)
            }
            return try rows.map { row in
                EventSummary(
                    seq: row["seq"], id: row["id"], sessionId: row["session_id"], trialId: row["trial_id"],
                    kind: row["kind"], station: row["station"],
                    stationName: try name(row["station"], in: row["session_id"]),
                    time: iso.string(wallNs: row["wall_ns"]),
                    monoNs: row["mono_ns"], kernelNs: row["kernel_ns"], value: row["value"],
                    durationNs: row["duration_ns"], clickOnsetLatencyNs: row["click_onset_latency_ns"],
                    detail: row["detail"])
            }
        }
    }

    /// How many events match, for "showing N of M".
    public func eventCount(_ filter: LogFilter = LogFilter()) throws -> Int {
        try read { db in
            try Int.fetchOne(
                db,
                sql: """
                    SELECT count(*) FROM event e
                    WHERE (?1 IS NULL OR e.session_id IN (SELECT id FROM session WHERE dog_id = ?1))
                        AND (?2 IS NULL OR e.session_id = ?2) AND (?3 IS NULL OR e.trial_id = ?3)
                        AND (?4 IS NULL OR e.kind = ?4)
                        AND (?5 IS NULL OR e.wall_ns >= ?5) AND (?6 IS NULL OR e.wall_ns < ?6)
                    """,
                arguments: [
                    filter.dogId, filter.sessionId, filter.trialId, filter.eventKind?.rawValue, filter.since,
                    filter.until,
                ]) ?? 0
        }
    }
}
