import Figures
import Foundation
import PostgresNIO
import SessionLog

extension LabReader {
    /// `selection` from each guess with its trial as it stands after corrections (`t`), its
    /// session, dog and handler, in the trials `filter` selects (bound by `labBindings`), in
    /// `stats --guesses`'s order: what it counts and `export --what guesses` writes.
    static func guessQuery(_ selection: String, _ filter: LogFilter) -> String {
        """
        WITH RECURSIVE chain(guessed, id) AS (
            SELECT trial_id, trial_id FROM store.handler_guess
            UNION SELECT chain.guessed, c.id FROM store.trial c JOIN chain ON c.corrects = chain.id)
        SELECT \(selection)
        FROM store.handler_guess g JOIN chain ON chain.guessed = g.trial_id
        JOIN store.trial_current t ON t.id = chain.id
        JOIN store.session s ON s.id = t.session_id JOIN store.dog d ON d.id = s.dog_id
        LEFT JOIN store.handler h ON h.id = s.handler_id
        WHERE \(filter.labTrialCondition)
        ORDER BY s.wall_ns, s.id COLLATE "C", t.number
        """
    }

    /// `stats --guesses`: the handler's guesses in the trials `filter` selects, what
    /// `LogReader.guessStats(by:_:)` gives on the merged logs. The same join (a guess is for its
    /// trial and whatever corrects it, down the chain of corrections), the same filter and order, ids ordered by their
    /// bytes as SQLite orders them, and the rows counted by the same `GuessCounter`.
    public func guessStats(by grouping: GuessGrouping, _ filter: LogFilter) async throws -> [GuessFigures] {
        var counter = GuessCounter(by: grouping)
        let query = PostgresQuery(
            unsafeSQL: Self.guessQuery(
                "g.station, g.mono_ns, t.id, t.outcome, t.layout, t.seen, t.started_mono_ns, t.latency_ns, s.id, d.name, h.code",
                filter), binds: filter.labBindings)
        try await store.stream(query) { row in
            let (station, guessedAt, trialId, outcome, layout, seen, startedAt, latency, sessionId, dog, handler) =
                try row.decode(
                    (Int64, Int64, String, String, String, String?, Int64, Int64?, String, String, String?).self)
            var layoutText = layout
            var seenText = seen
            let add = { (layout: UnsafeRawBufferPointer, seen: UnsafeRawBufferPointer?) in
                try counter.add(
                    guess: Int(station), guessedAtMonoNs: guessedAt, trialId: trialId, outcome: outcome, layout: layout,
                    seen: seen, startedMonoNs: startedAt, latencyNs: latency, sessionId: sessionId, dog: dog,
                    handler: handler)
            }
            try layoutText.withUTF8 { layoutBytes in
                guard seenText != nil else { return try add(UnsafeRawBufferPointer(layoutBytes), nil) }
                try seenText!.withUTF8 { try add(UnsafeRawBufferPointer(layoutBytes), UnsafeRawBufferPointer($0)) }
            }
        }
        return counter.figures
    }
}
