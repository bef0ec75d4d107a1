import GRDB

extension Schema {
    /// The lab's counts of each sample's uses on its other stations, as lineup-sync last
    /// pulled them (`registry-uses`): a row per sample with `dog_id` NULL for all dogs, and a
    /// row per sample and dog of this station that met it there. The latest row of a sample
    /// (and dog), by rowid, stands; a pull writes a row only where it says something else, so
    /// the log keeps each change and when the store counted it (`as_of_wall_ns`, the store's
    /// clock). Kept in the log so the limits hold across restarts and offline.
    static func labSampleUses(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE lab_sample_uses (
                    id TEXT PRIMARY KEY NOT NULL,
                    sample_id TEXT NOT NULL REFERENCES sample(id),
                    dog_id TEXT REFERENCES dog(id),
                    uses INTEGER NOT NULL CHECK (uses >= 0),
                    as_of_wall_ns INTEGER NOT NULL,
                    mono_ns INTEGER NOT NULL,
                    wall_ns INTEGER NOT NULL);
                CREATE INDEX lab_sample_uses_by_sample ON lab_sample_uses(sample_id, dog_id);
                """)
        try appendOnly(db, "lab_sample_uses")
    }
}
