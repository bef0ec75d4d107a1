/// Issue 38's threshold tables of the station log (schema v13), mirrored: each threshold trial's
/// procedure state (`trial_procedure`: the rung presented and its dilution, or a catch trial;
/// the step, reversals, next rung and stop after the answer; the salt that opens the trial's
/// dilution commitment) and a double-blind threshold trial's dilution commitment
/// (`dilution_commitment`). The log's CHECKs, its one row per session and trial number, and
/// everything v1, v7 and v8 give a data table: append-only, a station inserts only its own rows
/// and none under another station's session or trial, researchers read all, counted as they go
/// in, a plain view for each.
extension LabSchema {
    /// The tables this migration adds, in the order a sync sends them (after their parents).
    static let procedureTables = ["trial_procedure", "dilution_commitment"]

    /// What a station's row of each must not hang under (besides being its own).
    private static let procedureParents: [String: String] = [
        "trial_procedure": "store.session_not_others(session_id) AND store.trial_not_others(trial_id)",
        "dilution_commitment": "store.session_not_others(session_id)",
    ]

    static let procedure: [String] =
        [
            """
            CREATE TABLE store.trial_procedure (
                id text PRIMARY KEY,
                station_id text NOT NULL REFERENCES store.station(id),
                session_id text NOT NULL REFERENCES store.session(id),
                trial_id text NOT NULL REFERENCES store.trial(id),
                trial_number bigint NOT NULL CHECK (trial_number >= 1),
                procedure text NOT NULL CHECK (procedure IN ('staircase', 'constant-stimuli')),
                rung bigint CHECK (rung >= 0),
                sample_id text REFERENCES store.sample(id),
                catch_trial bigint NOT NULL CHECK (catch_trial IN (0, 1)),
                direction text NOT NULL CHECK (direction IN ('down', 'up', 'none')),
                reversal bigint NOT NULL CHECK (reversal IN (0, 1)),
                reversals bigint NOT NULL CHECK (reversals >= 0),
                next_rung bigint CHECK (next_rung >= 0),
                stopped bigint NOT NULL CHECK (stopped IN (0, 1)),
                dilution_salt text,
                mono_ns bigint NOT NULL,
                wall_ns bigint NOT NULL,
                CHECK ((catch_trial = 1) = (rung IS NULL)),
                CHECK (catch_trial = 0 OR sample_id IS NULL),
                UNIQUE (session_id, trial_number))
            """,
            """
            CREATE TABLE store.dilution_commitment (
                id text PRIMARY KEY,
                station_id text NOT NULL REFERENCES store.station(id),
                session_id text NOT NULL REFERENCES store.session(id),
                trial_number bigint NOT NULL CHECK (trial_number >= 1),
                digest text NOT NULL,
                mono_ns bigint NOT NULL,
                wall_ns bigint NOT NULL,
                UNIQUE (session_id, trial_number))
            """,
        ]
        + procedureTables.flatMap { table in
            let view = viewNames[table]!
            return [
                """
                CREATE TRIGGER \(table)_append_only BEFORE UPDATE OR DELETE ON store.\(table)
                FOR EACH ROW EXECUTE FUNCTION store.refuse_change()
                """,
                """
                CREATE TRIGGER \(table)_no_truncate BEFORE TRUNCATE ON store.\(table)
                FOR EACH STATEMENT EXECUTE FUNCTION store.refuse_change()
                """,
                "GRANT SELECT ON store.\(table) TO \(researcherRole)",
                "GRANT INSERT ON store.\(table) TO \(stationRole)",
                "CREATE VIEW public.\(view) AS SELECT t.*, to_timestamp(t.wall_ns / 1e9) AS wall_time FROM store.\(table) t",
                "GRANT SELECT ON public.\(view) TO \(researcherRole)",
                "ALTER TABLE store.\(table) ENABLE ROW LEVEL SECURITY",
                """
                CREATE POLICY station_writes_own ON store.\(table) FOR INSERT TO \(stationRole)
                WITH CHECK (store.own_station(station_id) AND \(procedureParents[table]!))
                """,
                "CREATE POLICY researcher_reads ON store.\(table) FOR SELECT TO \(researcherRole) USING (true)",
                """
                CREATE TRIGGER \(table)_counted AFTER INSERT ON store.\(table) REFERENCING NEW TABLE AS added
                FOR EACH STATEMENT EXECUTE FUNCTION store.count_rows()
                """,
            ]
        }
}
