import GRDB

extension Schema {
    /// Committed layouts (docs/figures.md, "Committed layouts"): a double-blind trial's
    /// commitment, logged before it starts, and its opening (the salt), logged after it ends.
    /// Both append-only like the rest of the log; a log of an earlier version gets the empty
    /// tables, and its sessions verify as "no commitments logged".
    static func layoutCommitment(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE layout_commitment (
                    id TEXT PRIMARY KEY NOT NULL,
                    session_id TEXT NOT NULL REFERENCES session(id),
                    trial_number INTEGER NOT NULL,
                    digest TEXT NOT NULL,
                    mono_ns INTEGER NOT NULL,
                    wall_ns INTEGER NOT NULL);
                CREATE INDEX layout_commitment_by_session ON layout_commitment(session_id, trial_number);
                CREATE TABLE layout_opening (
                    id TEXT PRIMARY KEY NOT NULL,
                    session_id TEXT NOT NULL REFERENCES session(id),
                    trial_number INTEGER NOT NULL,
                    trial_id TEXT NOT NULL,
                    salt TEXT NOT NULL,
                    mono_ns INTEGER NOT NULL,
                    wall_ns INTEGER NOT NULL);
                CREATE INDEX layout_opening_by_session ON layout_opening(session_id, trial_number);
                """)
        try appendOnly(db, "layout_commitment")
        try appendOnly(db, "layout_opening")
    }
}
