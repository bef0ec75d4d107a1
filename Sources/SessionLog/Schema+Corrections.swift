import GRDB

extension Schema {
    /// One current version per trial, the project's rule for corrections that meet in a merge
    /// (a trial corrected in the lab log and again on its station): the correction that reached
    /// this log first stands. A merge no longer copies a second correction of a trial (it says
    /// so, `MergeSummary.correctionsRefused`), and this view enforces the rule for logs merged
    /// before it, which may hold two: a correction is current only when no other uncorrected
    /// correction of the same trial (same session, number and start, which a correction keeps)
    /// came into the log before it (a lower rowid). Before, both counted.
    static func oneCurrentCorrection(_ db: Database) throws {
        try db.execute(
            sql: """
                DROP VIEW trial_current;
                CREATE VIEW trial_current AS
                    SELECT * FROM trial t
                    WHERE NOT EXISTS (SELECT 1 FROM trial c WHERE c.corrects = t.id)
                        AND (t.corrects IS NULL OR NOT EXISTS (
                            SELECT 1 FROM trial o
                            WHERE o.session_id = t.session_id AND o.number = t.number
                                AND o.started_wall_ns = t.started_wall_ns AND o.corrects IS NOT NULL
                                AND o.rowid < t.rowid
                                AND NOT EXISTS (SELECT 1 FROM trial c2 WHERE c2.corrects = o.id)));
                """)
    }
}
