import Figures
import Foundation
import GRDB
import TrainingEngine

// The handler's guesses read from a log: the queries and the trial rows' decoding. The
// figures are `GuessCounter`'s (Figures/Guesses.swift), shared with the lab store.

extension GuessCounter {
    /// One guess of `station` made at `guessedAtMonoNs`, with its trial's row (`outcome`,
    /// `layout` and `seen` as the log spells them, its start and latency) and its session's.
    /// A layout no station writes is refused naming `trialId`.
    public mutating func add(
        guess station: Int, guessedAtMonoNs: Int64, trialId: String, outcome: String, layout: UnsafeRawBufferPointer,
        seen: UnsafeRawBufferPointer?, startedMonoNs: Int64, latencyNs: Int64?, sessionId: String, dog: String,
        handler: String?
    ) throws {
        // A decoder per guess: guesses are one per trial at most, and few.
        var decoder = TrialRowDecoder(samples: true)
        guard let trial = decoder.trial(outcome: outcome, latencyNs: latencyNs, layout: layout, seen: seen) else {
            throw LogLimits.badLayout(trial: trialId)
        }
        add(
            guess: station, guessedAtMonoNs: guessedAtMonoNs, trial: trial, startedMonoNs: startedMonoNs,
            sessionId: sessionId, dog: dog, handler: handler)
    }
}

extension LogReader {
    /// The chain of corrections a guess follows: from the trial it was made for to each
    /// correction of it, of that correction, and so on (on the `corrects` index).
    static let guessChain = """
        WITH RECURSIVE chain(guessed, id) AS (
            SELECT trial_id, trial_id FROM handler_guess
            UNION SELECT chain.guessed, c.id FROM trial c JOIN chain ON c.corrects = chain.id)

        """

    /// Each guess with its trial as it stands after corrections (`t`), its session, dog and
    /// handler, in the trials ?1 to ?4 and `chosenSessions` select: what `stats --guesses`
    /// counts and `export --what guesses` writes.
    static func guessRows(_ chosenSessions: String) -> String {
        """
        FROM handler_guess g JOIN chain ON chain.guessed = g.trial_id
        JOIN trial_current t ON t.id = chain.id
        JOIN session s ON s.id = t.session_id JOIN dog d ON d.id = s.dog_id
        LEFT JOIN handler h ON h.id = s.handler_id
        WHERE (?1 IS NULL OR s.dog_id = ?1) AND (?2 IS NULL OR s.id = ?2)
            AND (?3 IS NULL OR t.wall_ns >= ?3) AND (?4 IS NULL OR t.wall_ns < ?4)
            AND \(chosenSessions)
        """
    }

    static let guessOrder = "ORDER BY s.wall_ns, s.id, t.number"

    /// The handler's guesses in the trials `filter` selects, as they stand after corrections
    /// (a guess is for its trial and for whatever corrects it: the correction, the correction
    /// of that, and so on, as `chain` follows them), by handler code or by session.
    public func guessStats(by grouping: GuessGrouping, _ filter: LogFilter = LogFilter()) throws -> [GuessFigures] {
        try read { db in
            guard try db.tableExists("handler_guess") else { return [] }
            let rows = try Row.fetchAll(
                db,
                sql: """
                    \(Self.guessChain)SELECT g.station, g.mono_ns, t.id AS trial_id, t.outcome, t.layout, t.seen,
                        t.started_mono_ns, t.latency_ns, s.id AS session_id, d.name AS dog, h.code AS handler
                    \(Self.guessRows(filter.sessionCondition(from: 5)))
                    \(Self.guessOrder)
                    """,
                arguments: StatementArguments(
                    [
                        filter.dogId.databaseValue, filter.sessionId.databaseValue, filter.since.databaseValue,
                        filter.until.databaseValue,
                    ] + filter.sessionArguments))
            var counter = GuessCounter(by: grouping)
            for row in rows {
                var layout: String = row["layout"]
                var seen: String? = row["seen"]
                let add = { (layout: UnsafeRawBufferPointer, seen: UnsafeRawBufferPointer?) in
                    try counter.add(
                        guess: row["station"], guessedAtMonoNs: row["mono_ns"], trialId: row["trial_id"],
                        outcome: row["outcome"], layout: layout, seen: seen, startedMonoNs: row["started_mono_ns"],
                        latencyNs: row["latency_ns"], sessionId: row["session_id"], dog: row["dog"],
                        handler: row["handler"])
                }
                try layout.withUTF8 { layoutBytes in
                    guard seen != nil else { return try add(UnsafeRawBufferPointer(layoutBytes), nil) }
                    try seen!.withUTF8 { try add(UnsafeRawBufferPointer(layoutBytes), UnsafeRawBufferPointer($0)) }
                }
            }
            return counter.figures
        }
    }
}
