import Figures
import Foundation
import PostgresNIO
import ReadingRows
import SessionLog
import TrainingEngine

extension LabReader {
    /// `lineupctl report` over the store: the rows `LogReader.report` reads from the merged
    /// logs of the same stations with the same filter, read from `store.*` and handed to the
    /// same `ReportAssembly`. One snapshot (REPEATABLE READ): a sync committing meanwhile does
    /// not give a trial without its session.
    public func report(_ filter: LogFilter = LogFilter(), maxPoints: Int = 120) async throws -> ReportData {
        try await inSnapshot { try await gatherReport(filter, maxPoints: maxPoints) }
    }

    /// `work` in one read-only snapshot of the store.
    func inSnapshot<T>(_ work: () async throws -> T) async throws -> T {
        do {
            try await store.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            let result = try await work()
            try await store.execute("COMMIT")
            return result
        } catch {
            // A transaction left open would be closed with the connection; a failed one, too.
            _ = try? await store.execute("ROLLBACK")
            throw error
        }
    }

    /// Each session's dog (id, name) whose trials the ordered pass reads: the chosen dog's, or
    /// every dog's. Read once, so the pass over the trials joins nothing.
    func sessionDogs(_ filter: LogFilter) async throws -> [String: (id: String, name: String)] {
        var dogs: [String: (id: String, name: String)] = [:]
        var binds = PostgresBindings(capacity: 1)
        binds.append(filter.dogId)
        for row in try await store.rows(
            PostgresQuery(
                unsafeSQL: """
                    SELECT s.id, s.dog_id, d.name FROM store.session s JOIN store.dog d ON d.id = s.dog_id
                    WHERE ($1::text IS NULL OR s.dog_id = $1::text)
                    """, binds: binds))
        {
            let (id, dogId, dog) = try readable("session") { try row.decode((String, String, String).self) }
            dogs[id] = (dogId, dog)
        }
        return dogs
    }

    private func gatherReport(_ filter: LogFilter, maxPoints: Int) async throws -> ReportData {
        var programs: [String: ReportAssembly.ProgramRow] = [:]
        for row in try await store.rows("SELECT id, name, content FROM store.program") {
            let (id, name, content) = try readable("program") { try row.decode((String, String, String).self) }
            programs[id] = ReportAssembly.ProgramRow(name: name, content: content)
        }
        // Each session's first end, as the log's report takes it. Ids are ordered as SQLite
        // orders them (bytes), whatever the database's collation.
        // Sessions of the chosen dog or session, mode, program, step and handler. The time
        // window ($3, $4) is the assembly's to apply; it is named here only because
        // PostgreSQL must type every parameter it is given.
        var sessions: [ReportAssembly.SessionRow] = []
        for row in try await store.rows(
            PostgresQuery(
                unsafeSQL: """
                    SELECT s.id, s.dog_id, d.name, s.wall_ns, s.phase, s.step, s.exercise, s.mode, s.station,
                        s.station_id, s.program_id, e.how, e.detail, s.settings
                    FROM store.session s JOIN store.dog d ON d.id = s.dog_id
                        LEFT JOIN (SELECT DISTINCT ON (session_id) session_id, how, detail FROM store.session_end
                            ORDER BY session_id, wall_ns) e ON e.session_id = s.id
                    WHERE ($1::text IS NULL OR s.dog_id = $1::text) AND ($2::text IS NULL OR s.id = $2::text)
                        AND ($3::bigint IS NULL OR TRUE) AND ($4::bigint IS NULL OR TRUE)
                        AND \(filter.labSessionCondition())
                    ORDER BY s.wall_ns, s.id COLLATE "C"
                    """, binds: filter.labBindings))
        {
            let (
                id, dogId, dog, wallNs, phase, step, exercise, mode, station, stationId, programId, how, detail,
                settings
            ) =
                try readable("session") {
                    try row.decode(
                        (
                            String, String, String, Int64, String?, String?, String?, String, String?, String?, String?,
                            String?, String?, String
                        ).self)
                }
            sessions.append(
                ReportAssembly.SessionRow(
                    id: id, dogId: dogId, dog: dog, wallNs: wallNs, phase: phase, step: step, exercise: exercise,
                    mode: mode, station: station, stationId: stationId, programId: programId, endedHow: how,
                    endDetail: detail, settings: settings))
        }
        var assembly = try ReportAssembly(
            filter: filter, maxPoints: maxPoints, sessions: sessions, programs: programs)
        // Unfiltered, the sessions read are every session; else every session of the chosen
        // dog (or of every dog) is read for the trials' exposure.
        var dogs: [String: (id: String, name: String)] = [:]
        if filter == LogFilter() {
            for session in sessions { dogs[session.id] = (session.dogId, session.dog) }
        } else {
            dogs = try await sessionDogs(filter)
        }
        let (thresholdSamples, conditions) = try await thresholdInputs()
        var thresholds = ThresholdCounter(samples: thresholdSamples, grouping: .session, recordsTrack: true)
        try await addThresholdProcedures(filter, to: &thresholds)
        let started = Dictionary(sessions.map { ($0.id, $0.wallNs) }, uniquingKeysWith: { first, _ in first })
        try await scanReportTrials(filter, dogs: dogs) { trial, dogId, dog, sessionId, inScope, number in
            assembly.addTrial(trial, dogId: dogId, dog: dog, sessionId: sessionId, inScope: inScope)
            guard inScope, let wallNs = started[sessionId] else { return }
            thresholds.add(
                trial,
                context: TrialContext(
                    dogId: dogId, dog: dog, sessionId: sessionId, sessionWallNs: wallNs, trialNumber: number),
                conditions: conditions[sessionId])
        }
        for row in try await store.rows(
            "SELECT session_id, kind, text FROM store.session_note ORDER BY wall_ns, mono_ns, id COLLATE \"C\"")
        {
            let (sessionId, kind, text) = try readable("session_note") { try row.decode((String, String, String).self) }
            assembly.addNote(sessionId: sessionId, kind: kind, text: text)
        }
        // Clicks and faults in the time window (since inclusive, until exclusive).
        var window = PostgresBindings(capacity: 2)
        window.append(filter.since)
        window.append(filter.until)
        let inWindow = "($1::bigint IS NULL OR wall_ns >= $1::bigint) AND ($2::bigint IS NULL OR wall_ns < $2::bigint)"
        for row in try await store.rows(
            PostgresQuery(
                unsafeSQL: """
                    SELECT session_id, click_onset_latency_ns FROM store.event
                    WHERE kind = 'click' AND click_onset_latency_ns IS NOT NULL AND \(inWindow)
                    """, binds: window))
        {
            let (sessionId, onset) = try readable("event") { try row.decode((String?, Int64).self) }
            assembly.addClick(sessionId: sessionId, onsetNs: onset)
        }
        for row in try await store.rows(
            PostgresQuery(
                unsafeSQL: "SELECT session_id, detail, station FROM store.event WHERE kind = 'fault' AND \(inWindow)",
                binds: window))
        {
            let (sessionId, detail, station) = try readable("event") { try row.decode((String?, String?, Int64?).self) }
            assembly.addFault(sessionId: sessionId, detail: detail, station: station.map { Int($0) })
        }
        var dog = PostgresBindings(capacity: 1)
        dog.append(filter.dogId)
        for row in try await store.rows(
            PostgresQuery(
                unsafeSQL: """
                    SELECT dog_id, session_id, phase, step, criterion, wall_ns FROM store.milestone
                    WHERE ($1::text IS NULL OR dog_id = $1::text) ORDER BY wall_ns, id COLLATE "C"
                    """, binds: dog))
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
                    id: id, label: label, kind: kind,
                    facts: SampleFacts(source: source, collection: collection, processing: processing)))
        }
        var data = assembly.finish(samples: samples, generatedWallNs: LogTime.now().wallNs)
        data.thresholds = thresholds.rows()
        return data
    }

    /// Every trial of the store after corrections of the chosen dog, or of every dog, in the
    /// report's order (start, session id, number: the order `LogReader.scanReportTrials` reads
    /// the merged logs in), each with whether the filter chose it (`inScope`), decoded by the
    /// same `TrialRowDecoder` straight from the cells' bytes (a text value's bytes are its
    /// UTF-8 in either of PostgreSQL's formats). Each trial's dog comes from its session
    /// (`dogs`): unfiltered, the query joins nothing. Streamed, not gathered. A trial whose
    /// layout no station writes is left out, named once (`LabDamage`).
    func scanReportTrials(
        _ filter: LogFilter, dogs: [String: (id: String, name: String)],
        _ body: (
            _ trial: ScoredTrial, _ dogId: String, _ dog: String, _ sessionId: String, _ inScope: Bool, _ number: Int
        ) throws -> Void
    ) async throws {
        var decoder = TrialRowDecoder(samples: true)
        let query: PostgresQuery
        if filter == LogFilter() {
            query = """
                SELECT outcome, latency_ns, layout, seen, session_id, id, true, number::bigint FROM store.trial_current
                ORDER BY started_wall_ns, session_id COLLATE "C", number
                """
        } else {
            // As on a log: the dog chooses the trials read; the session, the trial's own wall
            // time and the session's choices say which are counted.
            query = PostgresQuery(
                unsafeSQL: """
                    SELECT t.outcome, t.latency_ns, t.layout, t.seen, t.session_id, t.id,
                        (($2::text IS NULL OR s.id = $2::text)
                            AND ($3::bigint IS NULL OR t.wall_ns >= $3::bigint)
                            AND ($4::bigint IS NULL OR t.wall_ns < $4::bigint)
                            AND \(filter.labSessionCondition())) IS TRUE, t.number::bigint
                    FROM store.trial_current t JOIN store.session s ON s.id = t.session_id
                    WHERE ($1::text IS NULL OR s.dog_id = $1::text)
                    ORDER BY t.started_wall_ns, t.session_id COLLATE "C", t.number
                    """, binds: filter.labBindings)
        }
        let rows: PostgresRowSequence
        do {
            rows = try await store.connection.query(query, logger: store.logger)
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
                let seenCell = cells.next(), let sessionCell = cells.next(), let idCell = cells.next(),
                let inScopeCell = cells.next(), let numberCell = cells.next()
            else {
                throw LabStoreError.refused(
                    store: store.display, message: "store.trial_current answered fewer columns than asked")
            }
            let (outcome, latency, sessionId, inScope, number) = try readable("trial") {
                (
                    try outcomeCell.decode(String.self), try latencyCell.decode(Int64?.self),
                    try sessionCell.decode(String.self), try inScopeCell.decode(Bool.self),
                    try numberCell.decode(Int64.self)
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
                leaveOutLayout(trial: (try? idCell.decode(String.self)) ?? "(no id)")
                continue
            }
            try body(trial, dog.id, dog.name, sessionId, inScope, Int(number))
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
