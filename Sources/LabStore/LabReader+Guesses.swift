import Figures
import Foundation
import PostgresNIO
import ReadingRows
import SessionLog

extension LabReader {
    /// `selection` from each guess with its trial as it stands after corrections (`t`), its
    /// session, dog and handler, in the trials `filter` selects (bound by `labBindings`), in
    /// session order: what `export --what guesses` writes (`stats --guesses` is `GuessReading`).
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
}
