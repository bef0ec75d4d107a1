/// How many rows the store holds of each station, per table, counted by the server as they go
/// in: what a sync compares with its log to prove it complete (issue 33: rows dropped by
/// `ON CONFLICT DO NOTHING`, or a table never written, were taken as sent). Appended per
/// statement, from the rows the statement really inserted (its transition table), so a row
/// sent again and skipped is not counted twice; the station cannot write it, only read its own.
extension LabSchema {
    static let rowCounts: [String] =
        [
            """
            CREATE TABLE store.station_rows (
                station_id text NOT NULL,
                table_name text NOT NULL,
                rows bigint NOT NULL,
                counted_at timestamptz NOT NULL DEFAULT now())
            """,
            "CREATE INDEX station_rows_by_station ON store.station_rows(station_id, table_name)",
            """
            CREATE TRIGGER station_rows_append_only BEFORE UPDATE OR DELETE ON store.station_rows
            FOR EACH ROW EXECUTE FUNCTION store.refuse_change()
            """,
            """
            CREATE TRIGGER station_rows_no_truncate BEFORE TRUNCATE ON store.station_rows
            FOR EACH STATEMENT EXECUTE FUNCTION store.refuse_change()
            """,
            """
            CREATE FUNCTION store.count_station_rows() RETURNS trigger LANGUAGE plpgsql
            SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
            BEGIN
                INSERT INTO store.station_rows (station_id, table_name, rows)
                    SELECT id, TG_TABLE_NAME, count(*) FROM added GROUP BY id;
                RETURN NULL;
            END $$
            """,
            """
            CREATE FUNCTION store.count_rows() RETURNS trigger LANGUAGE plpgsql
            SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
            BEGIN
                INSERT INTO store.station_rows (station_id, table_name, rows)
                    SELECT station_id, TG_TABLE_NAME, count(*) FROM added GROUP BY station_id;
                RETURN NULL;
            END $$
            """,
            "ALTER TABLE store.station_rows ENABLE ROW LEVEL SECURITY",
            "GRANT SELECT ON store.station_rows TO \(stationRole), \(researcherRole)",
            """
            CREATE POLICY station_reads_own ON store.station_rows FOR SELECT TO \(stationRole)
            USING (store.own_station(station_id))
            """,
            "CREATE POLICY researcher_reads ON store.station_rows FOR SELECT TO \(researcherRole) USING (true)",
            // What a store upgraded to this migration holds already.
            "INSERT INTO store.station_rows (station_id, table_name, rows) SELECT id, 'station', count(*) FROM store.station GROUP BY id",
        ]
        + v1Tables.filter { $0 != "station" }.map { table in
            "INSERT INTO store.station_rows (station_id, table_name, rows) SELECT station_id, '\(table)', count(*) FROM store.\(table) GROUP BY station_id"
        }
        + v1Tables.map { table in
            """
            CREATE TRIGGER \(table)_counted AFTER INSERT ON store.\(table) REFERENCING NEW TABLE AS added
            FOR EACH STATEMENT EXECUTE FUNCTION store.\(table == "station" ? "count_station_rows" : "count_rows")()
            """
        }
}
