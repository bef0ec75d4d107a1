import Foundation
import GRDB

// A dog's exposure to each sample: the one count behind usage limits per dog, sample rotation,
// novelty (docs/figures.md, "Exposure and novelty") and `samples show`'s uses per dog.

extension LogReader {
    /// One row per dog and sample it has met: `dog_id`, `sample_id`, `exposure` (the dog's
    /// trials, of any outcome, aborted ones included, whose layout put the sample in a station)
    /// and `last_wall_ns`. A correction repeats its trial's layout and is not counted again.
    /// `condition` narrows the rows counted (`s.dog_id = ?`, `ts.sample_id = ?`) before
    /// grouping, so a session's start reads one dog's rows, not the whole log's.
    static func exposureSQL(where condition: String = "1") -> String {
        """
        SELECT s.dog_id, ts.sample_id, count(DISTINCT t.id) AS exposure, max(t.wall_ns) AS last_wall_ns
        FROM trial_station ts JOIN trial t ON t.id = ts.trial_id AND t.corrects IS NULL
        JOIN session s ON s.id = t.session_id
        WHERE ts.sample_id IS NOT NULL AND (\(condition)) GROUP BY s.dog_id, ts.sample_id
        """
    }

    /// The dog's exposure to each sample it has met, by sample id (a sample it never met is
    /// absent: exposure 0, novel). `dog` is the dog's id.
    public func exposure(dog: String) throws -> [String: Int] {
        try read { db in
            var out: [String: Int] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT sample_id, exposure FROM (\(Self.exposureSQL(where: "s.dog_id = ?")))",
                arguments: [dog.lowercased()])
            {
                out[row["sample_id"]] = row["exposure"]
            }
            return out
        }
    }
}
