/// The lab's registry: dogs and samples keep the UUID they were made with on their station
/// (lab-wide already), and the store never matches them by name or label. That two dogs are
/// one is a recorded fact, a row of `store.dog_merge`, and undoing it is another row,
/// `store.dog_merge_undone`; neither is ever rewritten. Views resolve each dog to the dog it
/// currently counts as, and count each sample's uses over every station's trials.
extension LabSchema {
    /// The project's role for recording merges and their undoing (INSERT on those two tables
    /// only, and reading the registry's views); stations and researchers may not record them.
    public static let registrarRole = "lineup_registrar"

    /// Views of the registry, readable by researchers and registrars; a station reads
    /// `lab_dogs` and `lab_samples` to pull the dogs and samples made on other stations.
    public static let registryViews = ["dog_merges", "dog_identity", "lab_dogs", "lab_samples", "lab_programs"]

    /// The wall time, in nanoseconds since the epoch, as the server's clock says it.
    private static let serverWallNs = "(extract(epoch FROM clock_timestamp()) * 1000000000)::bigint"

    /// Merges not undone: each dog is merged into at most one other at a time (the trigger
    /// refuses a second), so following them from a dog is a chain, never a tree or a cycle.
    private static let activeMerges =
        "SELECT m.* FROM store.dog_merge m WHERE NOT EXISTS (SELECT FROM store.dog_merge_undone u WHERE u.merge_id = m.id)"

    static let registry: [String] =
        [
            """
            CREATE TABLE store.dog_merge (
                id text PRIMARY KEY,
                kept_dog_id text NOT NULL REFERENCES store.dog(id),
                merged_dog_id text NOT NULL REFERENCES store.dog(id),
                recorded_by text NOT NULL,
                why text NOT NULL,
                wall_ns bigint NOT NULL)
            """,
            """
            CREATE TABLE store.dog_merge_undone (
                id text PRIMARY KEY,
                merge_id text NOT NULL UNIQUE REFERENCES store.dog_merge(id),
                recorded_by text NOT NULL,
                why text NOT NULL,
                wall_ns bigint NOT NULL)
            """,
            // Who and when are the server's (the login, its clock), so nobody records a merge in
            // another's name. SECURITY DEFINER: a registrar may insert but not read these
            // tables, and the checks must read them. One advisory lock for both tables, so two
            // registrars cannot make a cycle between them.
            """
            CREATE FUNCTION store.check_dog_merge() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
            SET search_path = pg_catalog, pg_temp AS $$
            DECLARE
                kept_name text;
                merged_name text;
                earlier text;
                earlier_kept text;
                at text;
                next text;
            BEGIN
                PERFORM pg_advisory_xact_lock(1818848870);
                NEW.recorded_by := session_user;
                NEW.wall_ns := \(serverWallNs);
                IF length(btrim(coalesce(NEW.why, ''))) = 0 THEN
                    RAISE EXCEPTION 'a dog merge needs a reason (--why)';
                END IF;
                SELECT name INTO kept_name FROM store.dog WHERE id = NEW.kept_dog_id;
                IF NOT FOUND THEN
                    RAISE EXCEPTION 'no dog % in the lab''s registry', NEW.kept_dog_id;
                END IF;
                SELECT name INTO merged_name FROM store.dog WHERE id = NEW.merged_dog_id;
                IF NOT FOUND THEN
                    RAISE EXCEPTION 'no dog % in the lab''s registry', NEW.merged_dog_id;
                END IF;
                IF NEW.kept_dog_id = NEW.merged_dog_id THEN
                    RAISE EXCEPTION 'dog % (%) cannot be merged into itself', NEW.kept_dog_id, kept_name;
                END IF;
                SELECT m.id, m.kept_dog_id INTO earlier, earlier_kept FROM (\(activeMerges)) m
                    WHERE m.merged_dog_id = NEW.merged_dog_id;
                IF FOUND THEN
                    RAISE EXCEPTION 'dog % (%) is merged into dog % already (merge %): undo that merge first',
                        NEW.merged_dog_id, merged_name, earlier_kept, earlier;
                END IF;
                at := NEW.kept_dog_id;
                LOOP
                    IF at = NEW.merged_dog_id THEN
                        RAISE EXCEPTION 'merging dog % (%) into dog % (%) would make a cycle: dog % counts as dog % already',
                            NEW.merged_dog_id, merged_name, NEW.kept_dog_id, kept_name, NEW.kept_dog_id,
                            NEW.merged_dog_id;
                    END IF;
                    SELECT m.kept_dog_id INTO next FROM (\(activeMerges)) m WHERE m.merged_dog_id = at;
                    EXIT WHEN NOT FOUND;
                    at := next;
                END LOOP;
                RETURN NEW;
            END $$
            """,
            """
            CREATE FUNCTION store.check_dog_merge_undone() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
            SET search_path = pg_catalog, pg_temp AS $$
            DECLARE
                earlier text;
            BEGIN
                PERFORM pg_advisory_xact_lock(1818848870);
                NEW.recorded_by := session_user;
                NEW.wall_ns := \(serverWallNs);
                IF length(btrim(coalesce(NEW.why, ''))) = 0 THEN
                    RAISE EXCEPTION 'undoing a dog merge needs a reason (--why)';
                END IF;
                IF NOT EXISTS (SELECT FROM store.dog_merge WHERE id = NEW.merge_id) THEN
                    RAISE EXCEPTION 'no dog merge % in the lab''s registry', NEW.merge_id;
                END IF;
                SELECT id INTO earlier FROM store.dog_merge_undone WHERE merge_id = NEW.merge_id;
                IF FOUND THEN
                    RAISE EXCEPTION 'merge % was undone already (undo %)', NEW.merge_id, earlier;
                END IF;
                RETURN NEW;
            END $$
            """,
            """
            CREATE TRIGGER dog_merge_checked BEFORE INSERT ON store.dog_merge
            FOR EACH ROW EXECUTE FUNCTION store.check_dog_merge()
            """,
            """
            CREATE TRIGGER dog_merge_undone_checked BEFORE INSERT ON store.dog_merge_undone
            FOR EACH ROW EXECUTE FUNCTION store.check_dog_merge_undone()
            """,
            """
            DO $$ BEGIN
                IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '\(registrarRole)') THEN
                    CREATE ROLE \(registrarRole) NOLOGIN;
                END IF;
            END $$
            """,
            "GRANT USAGE ON SCHEMA store TO \(registrarRole)",
            // Each merge with its undoing, if any.
            """
            CREATE VIEW public.dog_merges AS
            SELECT m.id, m.kept_dog_id, m.merged_dog_id, m.recorded_by, m.why, m.wall_ns,
                to_timestamp(m.wall_ns / 1e9) AS wall_time,
                u.id AS undo_id, u.recorded_by AS undone_by, u.why AS undone_why, u.wall_ns AS undone_wall_ns,
                to_timestamp(u.wall_ns / 1e9) AS undone_wall_time
            FROM store.dog_merge m LEFT JOIN store.dog_merge_undone u ON u.merge_id = m.id
            """,
            // Each dog and the dog it currently counts as (itself when no merge applies),
            // following merges not undone to the end of their chain.
            """
            CREATE VIEW public.dog_identity AS
            WITH RECURSIVE active AS (\(activeMerges)),
            chain (dog_id, counts_as, depth) AS (
                SELECT d.id, d.id, 0 FROM store.dog d
                UNION ALL
                SELECT c.dog_id, a.kept_dog_id, c.depth + 1 FROM chain c JOIN active a ON a.merged_dog_id = c.counts_as
                WHERE c.depth < 10000)
            SELECT DISTINCT ON (dog_id) dog_id, counts_as FROM chain ORDER BY dog_id, depth DESC
            """,
            """
            CREATE VIEW public.lab_dogs AS
            SELECT d.id, d.name, d.station_id, d.born, a.kept_dog_id AS merged_into, a.id AS merge_id,
                i.counts_as, c.name AS counts_as_name, d.wall_ns, to_timestamp(d.wall_ns / 1e9) AS wall_time
            FROM store.dog d
            JOIN public.dog_identity i ON i.dog_id = d.id
            JOIN store.dog c ON c.id = i.counts_as
            LEFT JOIN (\(activeMerges)) a ON a.merged_dog_id = d.id
            """,
            // The lab's count for a sample's `max_uses`: as the station's sample_usage counts
            // (a correction repeats its trial's layout, so it is not counted), over every
            // station's trials.
            """
            CREATE VIEW public.lab_samples AS
            SELECT s.id, s.label, s.kind, s.station_id, s.diagnosis, s.source, s.collection, s.processing,
                s.collected_on, s.max_uses, s.max_uses_per_dog,
                (SELECT count(*) FROM store.trial_station ts JOIN store.trial t ON t.id = ts.trial_id
                 WHERE ts.sample_id = s.id AND t.corrects IS NULL) AS uses,
                (SELECT count(DISTINCT t.station_id) FROM store.trial_station ts JOIN store.trial t ON t.id = ts.trial_id
                 WHERE ts.sample_id = s.id AND t.corrects IS NULL) AS stations_used,
                s.wall_ns, to_timestamp(s.wall_ns / 1e9) AS wall_time
            FROM store.sample s
            """,
            // A program is its text: stations log it under ids of their own, so the lab knows
            // it by its SHA-256.
            """
            CREATE VIEW public.lab_programs AS
            SELECT p.sha256, min(p.name) AS name, count(DISTINCT p.station_id) AS stations,
                min(p.wall_ns) AS first_wall_ns, (array_agg(p.content ORDER BY p.wall_ns, p.id))[1] AS content
            FROM store.program p GROUP BY p.sha256
            """,
        ]
        + ["dog_merge", "dog_merge_undone"].flatMap { table in
            [
                """
                CREATE TRIGGER \(table)_append_only BEFORE UPDATE OR DELETE ON store.\(table)
                FOR EACH ROW EXECUTE FUNCTION store.refuse_change()
                """,
                """
                CREATE TRIGGER \(table)_no_truncate BEFORE TRUNCATE ON store.\(table)
                FOR EACH STATEMENT EXECUTE FUNCTION store.refuse_change()
                """,
                "GRANT INSERT ON store.\(table) TO \(registrarRole)",
                "GRANT SELECT ON store.\(table) TO \(researcherRole)",
            ]
        }
        + registryViews.map { "GRANT SELECT ON public.\($0) TO \(researcherRole), \(registrarRole)" }
        // What a station pulls (lineup-sync --pull-registry): the lab's dogs and samples.
        + ["GRANT SELECT ON public.lab_dogs, public.lab_samples TO \(stationRole)"]
}
