import SessionLog

/// What the store's readers rely on, checked as each row goes in (issue 33: one synced row
/// naming station 300000000 made `export --lab` fail for every station, and the append-only
/// store cannot remove it). A row that fails is refused with its batch: the sync names it and
/// stops there, and nothing of it is stored. `NOT VALID`: a store upgraded to this keeps the
/// rows it has (the readers leave such a row out and name it: `LabDamage`), and takes no new one.
extension LabSchema {
    static var checks: [String] {
        let low = LogLimits.stations.lowerBound
        let high = LogLimits.stations.upperBound
        // A layout as the figures parse it (SessionLog's parseLayout): at most `high` entries
        // `station:kind:sample`, each station a number in the board's range, `;` between.
        let station = "0*([1-9]|1[0-6])"
        precondition(low == 1 && high == 16, "the layout's pattern spells the stations 1 to 16")
        return [
            """
            ALTER TABLE store.trial_station ADD CONSTRAINT trial_station_on_the_board
            CHECK (station BETWEEN \(low) AND \(high)) NOT VALID
            """,
            """
            ALTER TABLE store.trial ADD CONSTRAINT trial_layout_is_stations
            CHECK (layout ~ '^(\(station):[^:]*:[^;]*(;|$)){0,\(high)}$') NOT VALID
            """,
        ]
    }
}
