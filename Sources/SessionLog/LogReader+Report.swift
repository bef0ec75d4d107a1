import Figures
import Foundation
import GRDB
import GRDBSQLite
import ReadingRows
import TrainingEngine

// Gathering what `lineupctl report` shows from a log: the queries only; the assembly, shared
// with the lab store, is ReportAssembly (Figures/ReportAssembly.swift).

extension LogReader {
    /// Gathers the report: one read transaction, one ordered pass over the trials. A dog's
    /// learning curve has at most `maxPoints` points: beyond that, consecutive sessions are
    /// pooled (ceil(sessions / maxPoints) per point) and the point's figures are the pooled trials'.
    public func report(_ filter: LogFilter = LogFilter(), maxPoints: Int = 120) throws -> ReportData {
        try read { db in
            // The tallies are arrays by station number: every station is in range first.
            try LogLimits.checkStations(db)
            var programs: [String: ReportAssembly.ProgramRow] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT id, name, content FROM program") {
                programs[row[0]] = ReportAssembly.ProgramRow(name: row[1], content: row[2])
            }
            // Sessions of the chosen dog or session; the time window is applied by the assembly.
            let sessions = try Row.fetchAll(
                db,
                sql: """
                    SELECT s.id, s.dog_id, d.name AS dog, s.wall_ns, s.phase, s.step, s.exercise, s.mode,
                        s.station, s.station_id, s.program_id, s.settings,
                        (SELECT e.how FROM session_end e WHERE e.session_id = s.id ORDER BY e.wall_ns LIMIT 1) AS how,
                        (SELECT e.detail FROM session_end e WHERE e.session_id = s.id ORDER BY e.wall_ns LIMIT 1)
                            AS detail
                    FROM session s JOIN dog d ON d.id = s.dog_id
                    WHERE (?1 IS NULL OR s.dog_id = ?1) AND (?2 IS NULL OR s.id = ?2)
                        AND \(filter.sessionCondition(from: 3))
                    ORDER BY s.wall_ns, s.id
                    """,
                arguments: StatementArguments(
                    [filter.dogId.databaseValue, filter.sessionId.databaseValue] + filter.sessionArguments)
            ).map { row in
                ReportAssembly.SessionRow(
                    id: row["id"], dogId: row["dog_id"], dog: row["dog"], wallNs: row["wall_ns"], phase: row["phase"],
                    step: row["step"], exercise: row["exercise"], mode: row["mode"], station: row["station"],
                    stationId: row["station_id"], programId: row["program_id"], endedHow: row["how"],
                    endDetail: row["detail"], settings: row["settings"])
            }
            var assembly = try ReportAssembly(
                filter: filter, maxPoints: maxPoints, sessions: sessions, programs: programs)
            // Each session's threshold figures and track (its trials come in order here).
            var thresholds = ThresholdCounter(
                samples: try Self.thresholdSamples(db), grouping: .session, recordsTrack: true)
            let conditions = try Self.sessionConditions(db)
            try Self.addThresholdProcedures(db, filter, to: &thresholds)
            let started = Dictionary(sessions.map { ($0.id, $0.wallNs) }, uniquingKeysWith: { first, _ in first })
            try Self.scanReportTrials(db, filter) { trial, dogId, dog, sessionId, inScope, number in
                assembly.addTrial(trial, dogId: dogId, dog: dog, sessionId: sessionId, inScope: inScope)
                guard inScope, let wallNs = started[sessionId] else { return }
                thresholds.add(
                    trial,
                    context: TrialContext(
                        dogId: dogId, dog: dog, sessionId: sessionId, sessionWallNs: wallNs, trialNumber: number),
                    conditions: conditions[sessionId])
            }

            // Suggestions, comments, clicks and faults of the sessions in scope.
            for row in try Row.fetchAll(
                db, sql: "SELECT session_id, kind, text FROM session_note ORDER BY wall_ns, mono_ns, id")
            {
                assembly.addNote(sessionId: row[0], kind: row[1], text: row[2])
            }
            let eventWindow = "(?1 IS NULL OR wall_ns >= ?1) AND (?2 IS NULL OR wall_ns < ?2)"
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT session_id, click_onset_latency_ns FROM event
                    WHERE kind = 'click' AND click_onset_latency_ns IS NOT NULL AND \(eventWindow)
                    """, arguments: [filter.since, filter.until])
            {
                assembly.addClick(sessionId: row[0], onsetNs: row[1])
            }
            for row in try Row.fetchAll(
                db, sql: "SELECT session_id, detail, station FROM event WHERE kind = 'fault' AND \(eventWindow)",
                arguments: [filter.since, filter.until])
            {
                assembly.addFault(sessionId: row[0], detail: row[1], station: row[2])
            }
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT dog_id, session_id, phase, step, criterion, wall_ns FROM milestone
                    WHERE (?1 IS NULL OR dog_id = ?1) ORDER BY wall_ns, id
                    """, arguments: [filter.dogId])
            {
                assembly.addMilestone(
                    dogId: row["dog_id"], sessionId: row["session_id"], phase: row["phase"], step: row["step"],
                    criterion: row["criterion"], wallNs: row["wall_ns"])
            }
            let samples = try Row.fetchAll(
                db, sql: "SELECT id, label, kind, source, collection, processing FROM sample"
            ).map { row in
                ReportAssembly.SampleRow(
                    id: row[0], label: row[1], kind: row[2],
                    facts: SampleFacts(source: row[3], collection: row[4], processing: row[5]))
            }
            var data = assembly.finish(samples: samples, generatedWallNs: LogTime.now().wallNs)
            data.thresholds = thresholds.rows()
            return data
        }
    }

    /// Every trial (after corrections) of the chosen dog, or of every dog, in the assembly's
    /// order (start, session id, number), each with whether the filter chose it: one pass feeds
    /// both the tallies and the samples' exposure. Straight from SQLite's column accessors, as
    /// `scanTrials`, and decoded by the same `TrialRowDecoder`.
    static func scanReportTrials(
        _ db: Database, _ filter: LogFilter,
        _ body: (
            _ trial: ScoredTrial, _ dogId: String, _ dog: String, _ sessionId: String, _ inScope: Bool, _ number: Int
        ) throws -> Void
    ) throws {
        let statement = try db.makeStatement(
            sql: """
                SELECT t.outcome, t.latency_ns, t.layout, t.seen, s.dog_id, d.name, s.id,
                    ((?2 IS NULL OR s.id = ?2) AND (?3 IS NULL OR t.wall_ns >= ?3) AND (?4 IS NULL OR t.wall_ns < ?4)
                        AND \(filter.sessionCondition(from: 5))) AS in_scope, t.id, t.number
                FROM trial_current t JOIN session s ON s.id = t.session_id JOIN dog d ON d.id = s.dog_id
                WHERE (?1 IS NULL OR s.dog_id = ?1)
                ORDER BY t.started_wall_ns, s.id, t.number
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
        func bytes(_ column: Int32) -> UnsafeRawBufferPointer? {
            guard sqlite3_column_type(sqlite, column) != SQLITE_NULL else { return nil }
            // The text pointer first: SQLite counts bytes of the value as last converted.
            let base = sqlite3_column_text(sqlite, column)
            return UnsafeRawBufferPointer(start: base, count: Int(sqlite3_column_bytes(sqlite, column)))
        }
        var decoder = TrialRowDecoder(samples: true)
        // Trials come by session: one dog's id and name for the run of them.
        var dogId = ""
        var dog = ""
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
            let id = text(4)
            if id != dogId {
                dogId = id
                dog = text(5)
            }
            try body(
                trial, dogId, dog, text(6), sqlite3_column_int64(sqlite, 7) != 0, Int(sqlite3_column_int64(sqlite, 9)))
        }
    }
}

extension ReportAssembly {
    /// The assembly for the rows a log or the lab store chose by `filter`; a session's mode
    /// this lineup does not know is `SessionLogError.unknownWord`, naming the session.
    public init(filter: LogFilter, maxPoints: Int, sessions: [SessionRow], programs: [String: ProgramRow]) throws {
        do {
            try self.init(
                scope: Scope(
                    dogId: filter.dogId, sessionId: filter.sessionId, since: filter.since, until: filter.until),
                maxPoints: maxPoints, sessions: sessions, programs: programs)
        } catch let word as UnknownWord {
            throw SessionLogError.unknownWord(
                table: word.table, row: word.row, column: word.column, value: word.value, known: word.known)
        }
    }

    /// A fault event in the time window, as the log keeps it: its detail names what failed.
    public mutating func addFault(sessionId: String?, detail: String?, station: Int?) {
        addFault(
            sessionId: sessionId,
            named: LogReader.faultName(detail, station: station.map { stationSaid(session: sessionId, $0) }))
    }
}

extension LogReader {
    /// What a fault event's detail says failed; a sensor's fault names its station as the
    /// session's board does, its number beside it (`sensor stuck at station East (2)`, `station`
    /// from `StationNames.said`), so a flagged station stands out.
    /// A detail that cannot be read is counted as a plain `fault` rather than failing the report.
    static func faultName(_ detail: String?, station: String? = nil) -> String {
        guard let detail, let fault = try? EventDetail.decode(FaultDetail.self, from: detail) else { return "fault" }
        if let name = fault.fault { return name }
        if let sensor = fault.sensor {
            return "sensor \(sensor)" + (station.map { " at station \($0)" } ?? "")
        }
        if fault.clickFailed != nil { return "click-failed" }
        if fault.read != nil { return "unreadable" }  // an input that could not be read, not its errno
        return fault.fields.first ?? "fault"
    }
}
