/// Each station writes only its own rows, enforced by PostgreSQL whatever the client sends
/// (issue 33: a station's login could write another station's progress, pre-claim its event
/// numbers, forge a session or a heartbeat in its name).
///
/// A station is tied to the login that first sent its row (`store.station_login`, claimed by
/// the trigger on `store.station`, who by the server's `session_user`); every other row a
/// station's login inserts must carry a station it owns (row-level security), and a row of a
/// session or trial must not hang under another station's session or trial. A station reads
/// only its own progress. The owner and the superuser are not bound (PostgreSQL exempts a
/// table's owner); researchers read every row, as before.
extension LabSchema {
    /// The tables a station's login may write rows into, each stamped with a station id.
    /// As v7 made them (a later table's policy is its own migration's).
    static let ownedTables = v1Tables.filter { $0 != "station" } + ["sync_progress", "station_heartbeat"]

    /// The parent check of each table with one: its rows must not hang under another
    /// station's session or trial. Absent parents are the foreign keys' business (events have
    /// none, as on the station).
    static let parentCheck: [String: String] = [
        "session_note": "store.session_not_others(session_id)",
        "session_end": "store.session_not_others(session_id)",
        "layout_commitment": "store.session_not_others(session_id)",
        "trial": "store.session_not_others(session_id)",
        "layout_opening": "store.session_not_others(session_id)",
        "handler_guess": "store.session_not_others(session_id)",
        "milestone": "store.session_not_others(session_id)",
        "event": "store.session_not_others(session_id)",
        "trial_station": "store.trial_not_others(trial_id)",
    ]

    private static let definer = "SECURITY DEFINER SET search_path = pg_catalog, pg_temp"

    static let ownership: [String] =
        [
            // Which login syncs each station; appended, never rewritten. The owner assigns
            // the stations a store held before this migration (docs/lab.md, "Upgrading").
            """
            CREATE TABLE store.station_login (
                station_id text PRIMARY KEY,
                login text NOT NULL,
                recorded_by text NOT NULL DEFAULT session_user,
                recorded_at timestamptz NOT NULL DEFAULT now())
            """,
            """
            CREATE TRIGGER station_login_append_only BEFORE UPDATE OR DELETE ON store.station_login
            FOR EACH ROW EXECUTE FUNCTION store.refuse_change()
            """,
            """
            CREATE TRIGGER station_login_no_truncate BEFORE TRUNCATE ON store.station_login
            FOR EACH STATEMENT EXECUTE FUNCTION store.refuse_change()
            """,
            "GRANT SELECT ON store.station_login TO \(researcherRole)",
            // Volatile, not stable: the claim a trigger wrote in this very statement counts.
            """
            CREATE FUNCTION store.own_station(wanted text) RETURNS boolean LANGUAGE sql VOLATILE \(definer) AS $$
                SELECT EXISTS (SELECT 1 FROM store.station_login l WHERE l.station_id = wanted AND l.login = session_user)
            $$
            """,
            """
            CREATE FUNCTION store.session_not_others(wanted text) RETURNS boolean LANGUAGE sql VOLATILE \(definer) AS $$
                SELECT wanted IS NULL OR NOT EXISTS (
                    SELECT 1 FROM store.session s WHERE s.id = wanted AND NOT store.own_station(s.station_id))
            $$
            """,
            """
            CREATE FUNCTION store.trial_not_others(wanted text) RETURNS boolean LANGUAGE sql VOLATILE \(definer) AS $$
                SELECT NOT EXISTS (SELECT 1 FROM store.trial t WHERE t.id = wanted AND NOT store.own_station(t.station_id))
            $$
            """,
            // The first login to send a station's row owns it; any other login sending it is
            // refused, even when the row is there already (a BEFORE trigger runs before
            // ON CONFLICT DO NOTHING decides).
            """
            CREATE FUNCTION store.claim_station() RETURNS trigger LANGUAGE plpgsql \(definer) AS $$
            DECLARE
                owner_login text;
            BEGIN
                SELECT login INTO owner_login FROM store.station_login WHERE station_id = NEW.id;
                IF FOUND THEN
                    IF owner_login <> session_user THEN
                        RAISE EXCEPTION 'station % is synced by another login, not by %', NEW.id, session_user;
                    END IF;
                    RETURN NEW;
                END IF;
                IF EXISTS (SELECT 1 FROM store.station WHERE id = NEW.id) THEN
                    RAISE EXCEPTION 'station % was synced before stations were tied to logins: the store''s owner assigns it (docs/lab.md, "Upgrading a store")', NEW.id;
                END IF;
                INSERT INTO store.station_login (station_id, login) VALUES (NEW.id, session_user);
                RETURN NEW;
            END $$
            """,
            """
            CREATE TRIGGER station_claimed BEFORE INSERT ON store.station
            FOR EACH ROW EXECUTE FUNCTION store.claim_station()
            """,
            // Why this login may not sync this station, or NULL: too many rights, too few, or
            // the station another login's. lineup-sync asks it before sending anything.
            """
            CREATE FUNCTION store.sync_refusal(wanted text) RETURNS text LANGUAGE plpgsql VOLATILE \(definer) AS $$
            DECLARE
                r record;
                other text;
                owner_login text;
            BEGIN
                SELECT rolsuper, rolbypassrls, rolcreaterole INTO r FROM pg_roles WHERE rolname = session_user;
                IF r.rolsuper THEN
                    RETURN format('the login %s is a superuser: a station syncs with a login of its own in role \(stationRole) only', session_user);
                END IF;
                IF r.rolbypassrls OR r.rolcreaterole THEN
                    RETURN format('the login %s may bypass row-level security or create roles: a station syncs with a login of its own in role \(stationRole) only', session_user);
                END IF;
                IF pg_has_role(session_user, (SELECT nspowner FROM pg_namespace WHERE nspname = 'store'), 'MEMBER') THEN
                    RETURN format('the login %s owns the store: a station syncs with a login of its own in role \(stationRole) only', session_user);
                END IF;
                IF NOT pg_has_role(session_user, '\(stationRole)', 'USAGE') THEN
                    RETURN format('the login %s is not in role \(stationRole): GRANT \(stationRole) TO %s', session_user, session_user);
                END IF;
                FOREACH other IN ARRAY ARRAY['\(researcherRole)', '\(registrarRole)'] LOOP
                    IF pg_has_role(session_user, other, 'MEMBER') THEN
                        RETURN format('the login %s is also in role %s: a station syncs with a login in role \(stationRole) only', session_user, other);
                    END IF;
                END LOOP;
                SELECT l.login INTO other FROM store.station_login l JOIN pg_roles g ON g.rolname = l.login
                    WHERE l.login <> session_user AND pg_has_role(session_user, g.oid, 'MEMBER') LIMIT 1;
                IF FOUND THEN
                    RETURN format('the login %s may act as %s, another station''s login: give each station a login of its own', session_user, other);
                END IF;
                SELECT login INTO owner_login FROM store.station_login WHERE station_id = wanted;
                IF FOUND AND owner_login <> session_user THEN
                    RETURN format('station %s is synced by another login, not by %s', wanted, session_user);
                END IF;
                IF NOT FOUND AND EXISTS (SELECT 1 FROM store.station s WHERE s.id = wanted) THEN
                    RETURN format('station %s was synced before stations were tied to logins: the store''s owner assigns it to this login (INSERT INTO store.station_login (station_id, login) VALUES (%L, %L); docs/lab.md, "Upgrading a store")', wanted, wanted, session_user);
                END IF;
                RETURN NULL;
            END $$
            """,
            "REVOKE ALL ON FUNCTION store.sync_refusal(text) FROM PUBLIC",
            "GRANT EXECUTE ON FUNCTION store.sync_refusal(text) TO \(stationRole)",
            "ALTER TABLE store.station ENABLE ROW LEVEL SECURITY",
            "CREATE POLICY station_claims ON store.station FOR INSERT TO \(stationRole) WITH CHECK (true)",
            "CREATE POLICY researcher_reads ON store.station FOR SELECT TO \(researcherRole) USING (true)",
            // A station reads its own progress only, where its next sync starts.
            """
            CREATE POLICY station_reads_own ON store.sync_progress FOR SELECT TO \(stationRole)
            USING (store.own_station(station_id))
            """,
        ]
        + ownedTables.flatMap { table in
            let check = ["store.own_station(station_id)"] + (parentCheck[table].map { [$0] } ?? [])
            return [
                "ALTER TABLE store.\(table) ENABLE ROW LEVEL SECURITY",
                """
                CREATE POLICY station_writes_own ON store.\(table) FOR INSERT TO \(stationRole)
                WITH CHECK (\(check.joined(separator: " AND ")))
                """,
                "CREATE POLICY researcher_reads ON store.\(table) FOR SELECT TO \(researcherRole) USING (true)",
            ]
        }
}
