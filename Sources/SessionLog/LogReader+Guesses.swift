import Figures
import Foundation
import GRDB
import TrainingEngine

// The handler's guesses' join as `export --what guesses` reads it from a log (ExportQuery.swift);
// `stats --guesses` is `GuessReading` (Sources/Readings).

extension LogReader {
    /// The chain of corrections a guess follows: from the trial it was made for to each
    /// correction of it, of that correction, and so on (on the `corrects` index).
    static let guessChain = """
        WITH RECURSIVE chain(guessed, id) AS (
            SELECT trial_id, trial_id FROM handler_guess
            UNION SELECT chain.guessed, c.id FROM trial c JOIN chain ON c.corrects = chain.id)

        """

    /// Each guess with its trial as it stands after corrections (`t`), its session, dog and
    /// handler, in the trials ?1 to ?4 and `chosenSessions` select: what `export --what
    /// guesses` writes.
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
}
