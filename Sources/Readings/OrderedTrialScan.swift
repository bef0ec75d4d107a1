import Figures
import ReadingRows
import TrainingEngine

/// Every trial after corrections of the chosen dog, or of every dog, in the order a dog met
/// them (start, session id by its bytes, number), each with whether the filter chose it
/// (`inScope`): the pass that counts a sample's exposure from a dog's earlier trials, outside
/// the selection too (narrowing to a week must not make the week's first trial of an old sample
/// novel). Beneath `stats --familiar-novel`; the report's pass is the same.
enum OrderedTrialScan {
    /// The dog (parameter 1) chooses the trials read; the session, the trial's own wall time and
    /// the session's choices (parameters 2 to 9) say which are in scope.
    static let query: ReadingSQL = """
        SELECT t.outcome, t.latency_ns, t.layout, t.seen, s.dog_id, d.name, s.id,
            CASE WHEN (\(text: 2) IS NULL OR s.id = \(text: 2))
                AND (\(integer: 3) IS NULL OR t.wall_ns >= \(integer: 3))
                AND (\(integer: 4) IS NULL OR t.wall_ns < \(integer: 4))
                AND \(LogFilter.sessionCondition) THEN 1 ELSE 0 END,
            t.id, t.number
        FROM \(table: "trial_current") t JOIN \(table: "session") s ON s.id = t.session_id
            JOIN \(table: "dog") d ON d.id = s.dog_id
        WHERE (\(text: 1) IS NULL OR s.dog_id = \(text: 1))
        ORDER BY t.started_wall_ns, \(byBytes: "s.id"), t.number
        """

    /// Each trial's sample ids are decoded (exposure is by sample). A trial whose layout is not
    /// stations is the source's to refuse or leave out (`RowScanner.badRow`).
    static func scan<Scanner: RowScanner>(
        _ rows: inout Scanner, _ filter: LogFilter,
        _ body: (_ trial: ScoredTrial, _ context: TrialContext, _ inScope: Bool) throws -> Void
    ) throws {
        var decoder = TrialRowDecoder(samples: true)
        let scanner = rows
        // Trials come by session: one dog's id and name for the run of them.
        var dogId = ""
        var dog = ""
        try rows.scan(query, filter.readingBinds) { row in
            let outcome = try row.text(0) ?? ""
            let latency = try row.integer(1)
            let decoded = try row.withBytes(2) { layout in
                try row.withBytes(3) { seen in
                    decoder.trial(outcome: outcome, latencyNs: latency, layout: layout, seen: seen)
                }
            }
            guard let trial = decoded else {
                let id = try row.text(8) ?? "(no id)"
                try scanner.badRow(.layout(trial: id))
                return
            }
            let id = try row.text(4) ?? ""
            if id != dogId {
                dogId = id
                dog = try row.text(5) ?? ""
            }
            try body(
                trial,
                TrialContext(
                    dogId: dogId, dog: dog, sessionId: try row.text(6) ?? "", sessionWallNs: 0,
                    trialNumber: Int(try row.integer(9) ?? 0)),
                try row.integer(7) == 1)
        }
    }
}
