import Foundation
import PostgresNIO
import SessionLog
import TrainingEngine

extension LabReader {
    /// `lineupctl report` over the whole store: the rows `LogReader.report` reads from the
    /// merged logs of the same stations, read from `store.*` and handed to the same
    /// `ReportAssembly`. One snapshot (REPEATABLE READ): a sync committing meanwhile does not
    /// give a trial without its session.
    public func report(maxPoints: Int = 120) async throws -> ReportData {
        let filter = LogFilter()
        do {
            try await store.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            let data = try await gatherReport(filter, maxPoints: maxPoints)
            try await store.execute("COMMIT")
            return data
        } catch {
            // A transaction left open would be closed with the connection; a failed one, too.
            _ = try? await store.execute("ROLLBACK")
            throw error
        }
    }

    private func gatherReport(_ filter: LogFilter, maxPoints: Int) async throws -> ReportData {
        var programs: [String: ReportAssembly.ProgramRow] = [:]
        for row in try await store.rows("SELECT id, name, content FROM store.program") {
            let (id, name, content) = try readable("program") { try row.decode((String, String, String).self) }
            programs[id] = ReportAssembly.ProgramRow(name: name, content: content)
        }
        // Each session's first end, as the log's report takes it. Ids are ordered as SQLite
        // orders them (bytes), whatever the database's collation.
        var sessions: [ReportAssembly.SessionRow] = []
        for row in try await store.rows(
            """
            SELECT s.id, s.dog_id, d.name, s.wall_ns, s.phase, s.step, s.exercise, s.mode, s.station, s.station_id,
                s.program_id, e.how, e.detail
            FROM store.session s JOIN store.dog d ON d.id = s.dog_id
                LEFT JOIN (SELECT DISTINCT ON (session_id) session_id, how, detail FROM store.session_end
                    ORDER BY session_id, wall_ns) e ON e.session_id = s.id
            ORDER BY s.wall_ns, s.id COLLATE "C"
            """)
        {
            let (id, dogId, dog, wallNs, phase, step, exercise, mode, station, stationId, programId, how, detail) =
                try readable("session") {
                    try row.decode(
                        (
                            String, String, String, Int64, String?, String?, String?, String, String?, String?, String?,
                            String?, String?
                        ).self)
                }
            sessions.append(
                ReportAssembly.SessionRow(
                    id: id, dogId: dogId, dog: dog, wallNs: wallNs, phase: phase, step: step, exercise: exercise,
                    mode: mode, station: station, stationId: stationId, programId: programId, endedHow: how,
                    endDetail: detail))
        }
        var assembly = try ReportAssembly(
            filter: filter, maxPoints: maxPoints, sessions: sessions, programs: programs)
        var dogs: [String: (id: String, name: String)] = [:]
        for session in sessions { dogs[session.id] = (session.dogId, session.dog) }
        try await scanReportTrials(dogs: dogs) { trial, dogId, dog, sessionId in
            assembly.addTrial(trial, dogId: dogId, dog: dog, sessionId: sessionId, inScope: true)
        }
        for row in try await store.rows(
            "SELECT session_id, kind, text FROM store.session_note ORDER BY wall_ns, mono_ns, id COLLATE \"C\"")
        {
            let (sessionId, kind, text) = try readable("session_note") { try row.decode((String, String, String).self) }
            assembly.addNote(sessionId: sessionId, kind: kind, text: text)
        }
        for row in try await store.rows(
            """
            SELECT session_id, click_onset_latency_ns FROM store.event
            WHERE kind = 'click' AND click_onset_latency_ns IS NOT NULL
            """)
        {
            let (sessionId, onset) = try readable("event") { try row.decode((String?, Int64).self) }
            assembly.addClick(sessionId: sessionId, onsetNs: onset)
        }
        for row in try await store.rows("SELECT session_id, detail, station FROM store.event WHERE kind = 'fault'") {
            let (sessionId, detail, station) = try readable("event") { try row.decode((String?, String?, Int64?).self) }
            assembly.addFault(sessionId: sessionId, detail: detail, station: station.map { Int($0) })
        }
        for row in try await store.rows(
            """
            SELECT dog_id, session_id, phase, step, criterion, wall_ns FROM store.milestone
            ORDER BY wall_ns, id COLLATE "C"
            """)
        {
            let (dogId, sessionId, phase, step, criterion, wallNs) = try readable("milestone") {
                try row.decode((String, String?, String, String?, String?, Int64).self)
            }
            assembly.addMilestone(
                dogId: dogId, sessionId: sessionId, phase: phase, step: step, criterion: criterion, wallNs: wallNs)
        }
        var samples: [ReportAssembly.SampleRow] = []
        for row in try await store.rows("SELECT id, label, kind, source, collection, processing FROM store.sample") {
            let (id, label, kind, source, collection, processing) = try readable("sample") {
                try row.decode((String, String, String, String?, String?, String?).self)
            }
            samples.append(
                ReportAssembly.SampleRow(
                    id: id, label: label, kind: kind, source: source, collection: collection, processing: processing))
        }
        return assembly.finish(samples: samples, generatedWallNs: LogTime.now().wallNs)
    }

    /// Every trial of the store after corrections, in the report's order (start, session id,
    /// number: the order `LogReader.report` reads the merged logs in), decoded by the same
    /// `TrialRowDecoder` straight from the cells' bytes (a text value's bytes are its UTF-8 in
    /// either of PostgreSQL's formats); each trial's dog comes from its session (`dogs`), so
    /// the query joins nothing. Streamed, not gathered. A layout no station writes is refused,
    /// naming the trial.
    func scanReportTrials(
        dogs: [String: (id: String, name: String)],
        _ body: (_ trial: ScoredTrial, _ dogId: String, _ dog: String, _ sessionId: String) throws -> Void
    ) async throws {
        var decoder = TrialRowDecoder(samples: true)
        let rows: PostgresRowSequence
        do {
            rows = try await store.connection.query(
                """
                SELECT outcome, latency_ns, layout, seen, session_id, id FROM store.trial_current
                ORDER BY started_wall_ns, session_id COLLATE "C", number
                """, logger: store.logger)
        } catch {
            throw store.map(error)
        }
        var iterator = rows.makeAsyncIterator()
        while true {
            let next: PostgresRow?
            do { next = try await iterator.next() } catch { throw store.map(error) }
            guard let row = next else { break }
            var cells = row.makeIterator()
            guard let outcomeCell = cells.next(), let latencyCell = cells.next(), let layoutCell = cells.next(),
                let seenCell = cells.next(), let sessionCell = cells.next(), let idCell = cells.next()
            else {
                throw LabStoreError.refused(
                    store: store.display, message: "store.trial_current answered fewer columns than asked")
            }
            let (outcome, latency, sessionId) = try readable("trial") {
                (
                    try outcomeCell.decode(String.self), try latencyCell.decode(Int64?.self),
                    try sessionCell.decode(String.self)
                )
            }
            // The session is in the same snapshot (a trial's session is a foreign key).
            guard let dog = dogs[sessionId] else { continue }
            let layout = layoutCell.bytes ?? ByteBuffer()
            let trial = layout.withUnsafeReadableBytes { layoutBytes in
                guard let seen = seenCell.bytes else {
                    return decoder.trial(outcome: outcome, latencyNs: latency, layout: layoutBytes, seen: nil)
                }
                return seen.withUnsafeReadableBytes { seenBytes in
                    decoder.trial(outcome: outcome, latencyNs: latency, layout: layoutBytes, seen: seenBytes)
                }
            }
            guard let trial else {
                throw LogLimits.badLayout(trial: (try? idCell.decode(String.self)) ?? "(no id)")
            }
            try body(trial, dog.id, dog.name, sessionId)
        }
    }

    /// One row's columns as `type`; a value of another type (a store altered by hand) is
    /// refused in one line naming the table.
    private func readable<T>(_ table: String, _ decode: () throws -> T) throws -> T {
        do {
            return try decode()
        } catch {
            throw LabStoreError.refused(
                store: store.display,
                message: "a store.\(table) row lineupctl cannot read (\(String(describing: error)))")
        }
    }
}
