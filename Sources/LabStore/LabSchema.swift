/// The lab store's schema: versioned migrations, each a list of single statements (the
/// extended protocol runs one statement per query), applied in order in one transaction.
///
/// The data tables live in schema `store` and mirror the station log's tables; every row keeps
/// its UUID (`id`), the station it came from (`station_id`, the log's identity) and its
/// monotonic and wall times. Plain views named for their rows (`trials`, `dogs`, ...) sit in
/// `public` for R, pandas and DuckDB.
public enum LabSchema {
    public struct Migration: Sendable {
        public let version: String
        public let statements: [String]
    }

    /// The roles PostgreSQL enforces: a station may only insert, a researcher only read.
    public static let stationRole = "lineup_station"
    public static let researcherRole = "lineup_researcher"

    /// The data tables in the order a sync sends them: parents before children.
    public static let dataTables = v1Tables + procedureTables

    /// The tables migration v1 made, as it made them: v1, v7 and v8 loop over these, so a
    /// table added later is set up by its own migration (`procedureTables`, v11).
    static let v1Tables = [
        "station", "dog", "handler", "sample", "program", "sample_note", "dog_note", "session",
        "session_note", "session_end", "layout_commitment", "trial", "trial_station", "layout_opening",
        "handler_guess", "milestone", "event",
    ]

    /// The plain view over each data table.
    public static let viewNames: [String: String] = [
        "station": "stations", "dog": "dogs", "handler": "handlers", "sample": "samples",
        "program": "programs", "sample_note": "sample_notes", "dog_note": "dog_notes",
        "session": "sessions", "session_note": "session_notes", "session_end": "session_ends",
        "layout_commitment": "layout_commitments", "trial": "trials", "trial_station": "trial_stations",
        "layout_opening": "layout_openings", "handler_guess": "handler_guesses", "milestone": "milestones",
        "event": "events", "trial_procedure": "trial_procedures", "dilution_commitment": "dilution_commitments",
    ]

    public static let migrations: [Migration] = [
        Migration(version: "v1-station-log-mirror", statements: v1),
        Migration(version: "v2-trial-current-view", statements: reading),
        Migration(version: "v3-registry-dog-merges-and-lab-counts", statements: registry),
        Migration(version: "v4-station-heartbeat", statements: stationHeartbeat),
        Migration(version: "v5-sample-uses-by-station-and-dog", statements: sampleUses),
        Migration(version: "v6-trial-current-corrections-in-one-hash", statements: speed),
        Migration(version: "v7-each-station-writes-only-its-own-rows", statements: ownership),
        Migration(version: "v8-station-row-counts", statements: rowCounts),
        Migration(version: "v9-rows-the-readers-can-read", statements: checks),
        Migration(version: "v10-dilutions-and-session-conditions", statements: dilutions),
        Migration(version: "v11-threshold-procedure-and-dilution-commitments", statements: procedure),
    ]

    /// Kinds and outcomes as the station log checks them.
    private static let kinds = "('target', 'control', 'blank', 'distractor')"

    private static let v1: [String] =
        [
            "CREATE SCHEMA store",
            // A station is its log's identity (log_identity on the station).
            """
            CREATE TABLE store.station (
                id text PRIMARY KEY,
                mono_ns bigint NOT NULL,
                wall_ns bigint NOT NULL)
            """,
            """
            CREATE TABLE store.dog (
                id text PRIMARY KEY,
                station_id text NOT NULL REFERENCES store.station(id),
                name text NOT NULL,
                born text,
                notes text,
                mono_ns bigint NOT NULL,
                wall_ns bigint NOT NULL)
            """,
            // Codes and labels are unique on one station, not across the lab (the registry
            // that makes them lab-wide comes later).
            """
            CREATE TABLE store.handler (
                id text PRIMARY KEY,
                station_id text NOT NULL REFERENCES store.station(id),
                code text NOT NULL,
                mono_ns bigint NOT NULL,
                wall_ns bigint NOT NULL)
            """,
            """
            CREATE TABLE store.sample (
                id text PRIMARY KEY,
                station_id text NOT NULL REFERENCES store.station(id),
                label text NOT NULL,
                kind text NOT NULL CHECK (kind IN \(kinds)),
                diagnosis text,
                source text,
                collection text,
                processing text,
                collected_on text,
                max_uses bigint,
                max_uses_per_dog bigint,
                mono_ns bigint NOT NULL,
                wall_ns bigint NOT NULL)
            """,
            """
            CREATE TABLE store.program (
                id text PRIMARY KEY,
                station_id text NOT NULL REFERENCES store.station(id),
                name text NOT NULL,
                content text NOT NULL,
                sha256 text NOT NULL,
                mono_ns bigint NOT NULL,
                wall_ns bigint NOT NULL)
            """,
            """
            CREATE TABLE store.sample_note (
                id text PRIMARY KEY,
                station_id text NOT NULL REFERENCES store.station(id),
                sample_id text NOT NULL REFERENCES store.sample(id),
                text text NOT NULL,
                mono_ns bigint NOT NULL,
                wall_ns bigint NOT NULL)
            """,
            """
            CREATE TABLE store.dog_note (
                id text PRIMARY KEY,
                station_id text NOT NULL REFERENCES store.station(id),
                dog_id text NOT NULL REFERENCES store.dog(id),
                text text NOT NULL,
                mono_ns bigint NOT NULL,
                wall_ns bigint NOT NULL)
            """,
            // `station` is the station's name as the session recorded it.
            """
            CREATE TABLE store.session (
                id text PRIMARY KEY,
                station_id text NOT NULL REFERENCES store.station(id),
                dog_id text NOT NULL REFERENCES store.dog(id),
                handler_id text REFERENCES store.handler(id),
                program_id text REFERENCES store.program(id),
                phase text,
                phase_steps bigint,
                step text,
                exercise text,
                mode text NOT NULL CHECK (mode IN ('trainer-led', 'automated', 'double-blind')),
                settings text NOT NULL DEFAULT '{}',
                station text,
                boot_id text,
                mono_ns bigint NOT NULL,
                wall_ns bigint NOT NULL)
            """,
            """
            CREATE TABLE store.session_note (
                id text PRIMARY KEY,
                station_id text NOT NULL REFERENCES store.station(id),
                session_id text NOT NULL REFERENCES store.session(id),
                kind text NOT NULL CHECK (kind IN ('improvement', 'comment')),
                text text NOT NULL,
                mono_ns bigint NOT NULL,
                wall_ns bigint NOT NULL)
            """,
            """
            CREATE TABLE store.session_end (
                id text PRIMARY KEY,
                station_id text NOT NULL REFERENCES store.station(id),
                session_id text NOT NULL REFERENCES store.session(id),
                how text NOT NULL CHECK (how IN ('ended', 'stopped', 'interrupted', 'unknown')),
                detail text,
                mono_ns bigint NOT NULL,
                wall_ns bigint NOT NULL)
            """,
            """
            CREATE TABLE store.layout_commitment (
                id text PRIMARY KEY,
                station_id text NOT NULL REFERENCES store.station(id),
                session_id text NOT NULL REFERENCES store.session(id),
                trial_number bigint NOT NULL,
                digest text NOT NULL,
                mono_ns bigint NOT NULL,
                wall_ns bigint NOT NULL)
            """,
            // A correction is a trial whose `corrects` names the trial it corrects.
            """
            CREATE TABLE store.trial (
                id text PRIMARY KEY,
                station_id text NOT NULL REFERENCES store.station(id),
                session_id text NOT NULL REFERENCES store.session(id),
                number bigint NOT NULL,
                seed bigint,
                outcome text NOT NULL
                    CHECK (outcome IN ('hit', 'false-alert', 'miss', 'correct-rejection', 'aborted')),
                indicated_station bigint,
                latency_ns bigint,
                search_ns bigint,
                started_mono_ns bigint NOT NULL,
                started_wall_ns bigint NOT NULL,
                corrects text REFERENCES store.trial(id),
                reason text,
                layout text NOT NULL DEFAULT '',
                seen text,
                mono_ns bigint NOT NULL,
                wall_ns bigint NOT NULL)
            """,
            // What stood in each station of a trial; its times are its trial's.
            """
            CREATE TABLE store.trial_station (
                trial_id text NOT NULL REFERENCES store.trial(id),
                station bigint NOT NULL,
                station_id text NOT NULL REFERENCES store.station(id),
                sample_id text REFERENCES store.sample(id),
                kind text NOT NULL CHECK (kind IN \(kinds)),
                visited bigint,
                indicated bigint,
                first_indication_ns bigint,
                sniffs bigint,
                dwell_ns bigint,
                novel bigint,
                PRIMARY KEY (trial_id, station))
            """,
            """
            CREATE TABLE store.layout_opening (
                id text PRIMARY KEY,
                station_id text NOT NULL REFERENCES store.station(id),
                session_id text NOT NULL REFERENCES store.session(id),
                trial_number bigint NOT NULL,
                trial_id text NOT NULL,
                salt text NOT NULL,
                mono_ns bigint NOT NULL,
                wall_ns bigint NOT NULL)
            """,
            """
            CREATE TABLE store.handler_guess (
                id text PRIMARY KEY,
                station_id text NOT NULL REFERENCES store.station(id),
                session_id text NOT NULL REFERENCES store.session(id),
                trial_id text NOT NULL,
                trial_number bigint NOT NULL,
                station bigint NOT NULL,
                mono_ns bigint NOT NULL,
                wall_ns bigint NOT NULL)
            """,
            """
            CREATE TABLE store.milestone (
                id text PRIMARY KEY,
                station_id text NOT NULL REFERENCES store.station(id),
                dog_id text NOT NULL REFERENCES store.dog(id),
                session_id text REFERENCES store.session(id),
                phase text NOT NULL,
                step text,
                criterion text,
                mono_ns bigint NOT NULL,
                wall_ns bigint NOT NULL)
            """,
            // `seq` is the station's order of its events; no foreign keys, as on the station.
            """
            CREATE TABLE store.event (
                id text PRIMARY KEY,
                station_id text NOT NULL REFERENCES store.station(id),
                seq bigint NOT NULL,
                session_id text,
                trial_id text,
                kind text NOT NULL,
                station bigint,
                mono_ns bigint NOT NULL,
                wall_ns bigint NOT NULL,
                kernel_ns bigint,
                value bigint,
                duration_ns bigint,
                click_edge_ns bigint,
                click_handed_ns bigint,
                click_trigger_ns bigint,
                click_delay_frames bigint,
                click_onset_latency_ns bigint,
                detail text,
                UNIQUE (station_id, seq))
            """,
            "CREATE INDEX trial_by_session ON store.trial(session_id, number)",
            "CREATE INDEX event_by_session ON store.event(session_id, seq)",
            // What the store has of each station, per table: one row per committed batch,
            // written in the batch's own transaction. Appended, never updated, so a station
            // needs no UPDATE; the newest `last_order` is where the next sync starts.
            """
            CREATE TABLE store.sync_progress (
                station_id text NOT NULL REFERENCES store.station(id),
                table_name text NOT NULL,
                last_order bigint NOT NULL,
                rows bigint NOT NULL,
                synced_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (station_id, table_name, last_order))
            """,
            // Defence in depth beside the grants: not even the owner rewrites the record.
            """
            CREATE FUNCTION store.refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                RAISE EXCEPTION 'the lab store is append-only: % on %.% refused', TG_OP, TG_TABLE_SCHEMA, TG_TABLE_NAME;
            END $$
            """,
            """
            DO $$ BEGIN
                IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '\(stationRole)') THEN
                    CREATE ROLE \(stationRole) NOLOGIN;
                END IF;
                IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '\(researcherRole)') THEN
                    CREATE ROLE \(researcherRole) NOLOGIN;
                END IF;
            END $$
            """,
            "REVOKE ALL ON SCHEMA store FROM PUBLIC",
            "GRANT USAGE ON SCHEMA store TO \(stationRole), \(researcherRole)",
            "GRANT SELECT, INSERT ON store.sync_progress TO \(stationRole)",
        ]
        + (v1Tables + ["sync_progress"]).flatMap { table in
            [
                """
                CREATE TRIGGER \(table)_append_only BEFORE UPDATE OR DELETE ON store.\(table)
                FOR EACH ROW EXECUTE FUNCTION store.refuse_change()
                """,
                """
                CREATE TRIGGER \(table)_no_truncate BEFORE TRUNCATE ON store.\(table)
                FOR EACH STATEMENT EXECUTE FUNCTION store.refuse_change()
                """,
                "GRANT SELECT ON store.\(table) TO \(researcherRole)",
            ]
        }
        + v1Tables.flatMap { table in
            let view = viewNames[table]!
            // Wall times as timestamps too, so a reader needs no arithmetic on nanoseconds.
            let extra =
                table == "trial_station"
                ? "" : ", to_timestamp(t.wall_ns / 1e9) AS wall_time"
            return [
                "GRANT INSERT ON store.\(table) TO \(stationRole)",
                "CREATE VIEW public.\(view) AS SELECT t.*\(extra) FROM store.\(table) t",
                "GRANT SELECT ON public.\(view) TO \(researcherRole)",
            ]
        }
}
