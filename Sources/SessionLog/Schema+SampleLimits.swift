import GRDB

extension Schema {
    /// A sample's usage limits, given when it is registered (NULL: none; a program's limits
    /// then apply), and whether each trial's sample was novel to the dog (1: the dog had never
    /// met it before that trial; NULL: no sample, or a trial logged before this migration).
    /// Columns added to append-only tables: their triggers stand.
    static func sampleLimitsAndNovelty(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE sample ADD COLUMN max_uses INTEGER CHECK (max_uses >= 1);
                ALTER TABLE sample ADD COLUMN max_uses_per_dog INTEGER CHECK (max_uses_per_dog >= 1);
                ALTER TABLE trial_station ADD COLUMN novel INTEGER CHECK (novel IN (0, 1));
                """)
    }
}
