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
        try await scanReportTrials { trial, dogId, dog, sessionId in
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
    /// `TrialRowDecoder`. Streamed, not gathered. A layout no station writes is refused,
    /// naming the trial.
    func scanReportTrials(
        _ body: (_ trial: ScoredTrial, _ dogId: String, _ dog: String, _ sessionId: String) throws -> Void
    ) async throws {
        var decoder = TrialRowDecoder(samples: true)
        let rows: PostgresRowSequence
        do {
            rows = try await store.connection.query(
                """
                SELECT t.outcome, t.latency_ns, t.layout, t.seen, s.dog_id, d.name, s.id, t.id
                FROM store.trial_current t JOIN store.session s ON s.id = t.session_id
                    JOIN store.dog d ON d.id = s.dog_id
                ORDER BY t.started_wall_ns, s.id COLLATE "C", t.number
                """, logger: store.logger)
        } catch {
            throw store.map(error)
        }
        var iterator = rows.makeAsyncIterator()
        while true {
            let next: PostgresRow?
            do { next = try await iterator.next() } catch { throw store.map(error) }
            guard let row = next else { break }
            let (outcome, latency, layout, seen, dogId, dog, sessionId, trialId) = try readable("trial") {
                try row.decode((String, Int64?, String, String?, String, String, String, String).self)
            }
            var layoutText = layout
            var seenText = seen
            let trial = layoutText.withUTF8 { layoutBytes in
                guard seenText != nil else {
                    return decoder.trial(
                        outcome: outcome, latencyNs: latency, layout: UnsafeRawBufferPointer(layoutBytes), seen: nil)
                }
                return seenText!.withUTF8 { seenBytes in
                    decoder.trial(
                        outcome: outcome, latencyNs: latency, layout: UnsafeRawBufferPointer(layoutBytes),
                        seen: UnsafeRawBufferPointer(seenBytes))
                }
            }
            guard let trial else { throw LogLimits.badLayout(trial: trialId) }
            try body(trial, dogId, dog, sessionId)
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
