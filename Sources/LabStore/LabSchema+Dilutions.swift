/// Issue 38's columns of the station log, mirrored: a sample may be a dilution of a stock
/// (schema v11 on a station: the stock, the dilution factor and/or the concentration with its
/// unit, the diluent, when and by whom it was made), and a session records the room it ran in
/// (v12: temperature, relative humidity, free text). The same CHECKs as the log's, so a row a
/// station could not hold is refused here too. The plain views `samples` and `sessions` list
/// their table's columns as they were when made (`t.*` is expanded then), so they are made
/// again; `lab_samples` gains the dilution's columns at its end, which the registry's pull reads.
extension LabSchema {
    /// The columns a store must have for a station at schema v11 and v12: a sync into a store
    /// without them would drop them, so it is refused instead (`StationSync.run`).
    public static let dilutionColumns: [(table: String, column: String)] =
        ["stock_id", "dilution_factor", "concentration", "concentration_unit", "diluent", "made_on", "made_by"].map {
            ("sample", $0)
        } + ["temperature_c", "humidity_pct", "conditions"].map { ("session", $0) }

    static let dilutions: [String] =
        [
            """
            ALTER TABLE store.sample
                ADD COLUMN stock_id text REFERENCES store.sample(id),
                ADD COLUMN dilution_factor double precision CHECK (dilution_factor > 1),
                ADD COLUMN concentration double precision CHECK (concentration > 0),
                ADD COLUMN concentration_unit text,
                ADD COLUMN diluent text,
                ADD COLUMN made_on text,
                ADD COLUMN made_by text
            """,
            """
            ALTER TABLE store.session
                ADD COLUMN temperature_c double precision CHECK (temperature_c BETWEEN -40 AND 60),
                ADD COLUMN humidity_pct double precision CHECK (humidity_pct BETWEEN 0 AND 100),
                ADD COLUMN conditions text
            """,
        ]
        + [("sample", "samples"), ("session", "sessions")].flatMap { table, view in
            [
                "DROP VIEW public.\(view)",
                "CREATE VIEW public.\(view) AS SELECT t.*, to_timestamp(t.wall_ns / 1e9) AS wall_time FROM store.\(table) t",
                "GRANT SELECT ON public.\(view) TO \(researcherRole)",
            ]
        }
        + [
            """
            CREATE OR REPLACE VIEW public.lab_samples AS
            SELECT s.id, s.label, s.kind, s.station_id, s.diagnosis, s.source, s.collection, s.processing,
                s.collected_on, s.max_uses, s.max_uses_per_dog,
                (SELECT count(*) FROM store.trial_station ts JOIN store.trial t ON t.id = ts.trial_id
                 WHERE ts.sample_id = s.id AND t.corrects IS NULL) AS uses,
                (SELECT count(DISTINCT t.station_id) FROM store.trial_station ts JOIN store.trial t ON t.id = ts.trial_id
                 WHERE ts.sample_id = s.id AND t.corrects IS NULL) AS stations_used,
                s.wall_ns, to_timestamp(s.wall_ns / 1e9) AS wall_time,
                s.stock_id, s.dilution_factor, s.concentration, s.concentration_unit, s.diluent, s.made_on, s.made_by
            FROM store.sample s
            """
        ]
}
