import GRDB

extension Schema {
    /// A sample made by diluting another (issue 38): the sample it was made from (`stock_id`,
    /// a sample of the log), how much it was diluted (`dilution_factor`: 1000 is one part of
    /// stock in 1000 parts of the whole, 1:1000) and/or the concentration it holds with its
    /// unit, the diluent, the day it was made and who made it (a pseudonymous code). All NULL
    /// for a sample that is not a dilution, and for every sample of an older log. Each dilution
    /// is a sample of its own, so its uses, limits and each dog's exposure are its own.
    static func sampleDilution(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE sample ADD COLUMN stock_id TEXT REFERENCES sample(id);
                ALTER TABLE sample ADD COLUMN dilution_factor REAL CHECK (dilution_factor > 1);
                ALTER TABLE sample ADD COLUMN concentration REAL CHECK (concentration > 0);
                ALTER TABLE sample ADD COLUMN concentration_unit TEXT;
                ALTER TABLE sample ADD COLUMN diluent TEXT;
                ALTER TABLE sample ADD COLUMN made_on TEXT;
                ALTER TABLE sample ADD COLUMN made_by TEXT;
                CREATE INDEX sample_by_stock ON sample(stock_id) WHERE stock_id IS NOT NULL;
                """)
    }
}
