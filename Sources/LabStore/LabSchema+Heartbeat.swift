extension LabSchema {
    /// Each station's heartbeat: how it is, pushed by `lineup-sync` after each run. Appended,
    /// never updated, as the rest of the store; the lab's page reads the newest per station.
    static let stationHeartbeat: [String] = [
        // `received_at` is the store's clock: a board without a clock cannot make itself look
        // fresh or stale; `wall_ns` is the station's own, kept beside it.
        """
        CREATE TABLE store.station_heartbeat (
            id text PRIMARY KEY,
            station_id text NOT NULL,
            station_name text NOT NULL,
            wall_ns bigint NOT NULL,
            mono_ns bigint NOT NULL,
            received_at timestamptz NOT NULL DEFAULT now(),
            sync_interval_seconds double precision NOT NULL,
            lineupd_reachable boolean NOT NULL,
            lineupd_problem text,
            session_id text,
            dog text,
            mode text,
            state text,
            trial integer,
            trials integer,
            faults text[] NOT NULL DEFAULT '{}',
            free_megabytes bigint,
            behind_rows bigint,
            oldest_unsynced_wall_ns bigint,
            sync_error text)
        """,
        "CREATE INDEX station_heartbeat_newest ON store.station_heartbeat(station_id, received_at DESC)",
        """
        CREATE TRIGGER station_heartbeat_append_only BEFORE UPDATE OR DELETE ON store.station_heartbeat
        FOR EACH ROW EXECUTE FUNCTION store.refuse_change()
        """,
        """
        CREATE TRIGGER station_heartbeat_no_truncate BEFORE TRUNCATE ON store.station_heartbeat
        FOR EACH STATEMENT EXECUTE FUNCTION store.refuse_change()
        """,
        "GRANT INSERT ON store.station_heartbeat TO \(stationRole)",
        "GRANT SELECT ON store.station_heartbeat TO \(researcherRole)",
        "CREATE VIEW public.station_heartbeats AS SELECT h.* FROM store.station_heartbeat h",
        "GRANT SELECT ON public.station_heartbeats TO \(researcherRole)",
        // The newest heartbeat of each station: what the lab's page shows.
        """
        CREATE VIEW public.station_latest AS
        SELECT DISTINCT ON (station_id) h.* FROM store.station_heartbeat h
        ORDER BY station_id, received_at DESC, id
        """,
        "GRANT SELECT ON public.station_latest TO \(researcherRole)",
    ]
}
