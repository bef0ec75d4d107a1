import GRDB

extension Schema {
    /// The room a session ran in (issue 38), given when it starts: temperature in °C, relative
    /// humidity in percent, and free text. NULL when not given, and for every session of an
    /// older log. The ranges are `SessionConditions`' (checked there first, with the words).
    static func sessionConditions(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE session ADD COLUMN temperature_c REAL CHECK (temperature_c BETWEEN -40 AND 60);
                ALTER TABLE session ADD COLUMN humidity_pct REAL CHECK (humidity_pct BETWEEN 0 AND 100);
                ALTER TABLE session ADD COLUMN conditions TEXT;
                """)
    }
}
