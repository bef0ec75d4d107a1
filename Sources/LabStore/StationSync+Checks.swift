import Foundation
import GRDB
import PostgresNIO
import SessionLog
import TrainingEngine

// The checks around a sync run: the login may run it, what a running double-blind session
// holds back, and the proof that a run said complete is.
extension StationSync {
    /// A store older than migration v10 has no column for a sample's dilution or a session's
    /// conditions: the sync would insert the rows without them, and the append-only store could
    /// never take them later. Refused before anything is sent, naming what is missing.
    func refuseWithoutDilutions(_ storeColumns: [String: [StoreColumn]], logColumns: [String: Set<String>]) throws {
        let missing = LabSchema.dilutionColumns.filter { table, column in
            (logColumns[table] ?? []).contains(column) && !(storeColumns[table] ?? []).contains { $0.name == column }
        }
        guard let first = missing.first else { return }
        throw LabStoreError.loginRefused(
            store: store.display,
            reason:
                "it lacks migration v10 (store.\(first.table).\(first.column) and \(missing.count - 1) more columns: "
                + "samples' dilutions and sessions' conditions), so they would be lost: "
                + "run `lineup-sync --migrate` as the store's owner")
    }

    /// A store older than migration v11 has no tables for threshold trials' procedure state
    /// and dilution commitments: a log that holds them is refused before anything is sent, as
    /// for v10 (skipping them would lose them for good, the trials being in the store already).
    func refuseWithoutProcedureTables(logTables: Set<String>) async throws {
        let missing = try await procedureTablesMissing(logTables: logTables).map { "store.\($0)" }
        guard !missing.isEmpty else { return }
        throw LabStoreError.loginRefused(
            store: store.display,
            reason:
                "it lacks migration v11 (\(missing.joined(separator: " and ")): threshold trials' procedure state "
                + "and dilution commitments), so they would be lost: run `lineup-sync --migrate` as the store's owner")
    }

    /// The threshold tables the log has and the store lacks (to_regclass needs no privilege on
    /// the table, so any login learns it is missing).
    func procedureTablesMissing(logTables: Set<String>) async throws -> [String] {
        var missing: [String] = []
        for table in LabSchema.procedureTables where logTables.contains(table) {
            let present = try await store.rows("SELECT to_regclass('store.\(unescaped: table)') IS NOT NULL").first?
                .decode(Bool.self)
            if present != true { missing.append(table) }
        }
        return missing
    }

    /// What the store says of this login and this station before anything is sent: a login
    /// with too many rights or too few, or another login's station, is refused in one line;
    /// so is a table this login may not write (issue 33: such a sync skipped the table and
    /// said it was complete).
    func mayRun(station: String, logTables: Set<String>) async throws {
        // In this order, each asked only when the one before holds (CASE stops at the first).
        let state = try await store.rows(
            """
            SELECT session_user::text, CASE
                WHEN to_regnamespace('store') IS NULL THEN 'no store'
                WHEN NOT has_schema_privilege('store', 'USAGE') THEN 'no role'
                WHEN to_regprocedure('store.sync_refusal(text)') IS NULL OR to_regclass('store.station_rows') IS NULL
                    THEN 'old store'
                WHEN NOT has_function_privilege('store.sync_refusal(text)', 'EXECUTE') THEN 'no role'
                ELSE 'ok' END
            """)
        guard let answer = try state.first?.decode((String, String).self) else { return }
        let (login, found) = answer
        switch found {
        case "no store":
            throw LabStoreError.refused(
                store: store.display,
                message: "it has no lineup tables (run `lineup-sync --migrate` as the store's owner)")
        case "no role":
            throw LabStoreError.loginRefused(
                store: store.display,
                reason:
                    "the login \(login) is not in role \(LabSchema.stationRole): GRANT \(LabSchema.stationRole) TO \(login)"
            )
        case "old store":
            throw LabStoreError.loginRefused(
                store: store.display,
                reason: "it lacks migrations v7 and v8 (each station writes only its own rows, counted by the store): "
                    + "run `lineup-sync --migrate` as the store's owner")
        default: break
        }
        if let reason = try await store.rows("SELECT store.sync_refusal(\(station))").first?.decode(String?.self) {
            throw LabStoreError.loginRefused(store: store.display, reason: reason)
        }
        // The tables this log has (an older log has no threshold tables, nor needs their grants);
        // one the store lacks altogether is refused after, naming its migration (`run`).
        let absent = Set(try await procedureTablesMissing(logTables: logTables))
        let needed =
            LabSchema.dataTables.filter { logTables.contains($0) && !absent.contains($0) }.map {
                ("store.\($0)", "INSERT")
            } + [
                ("store.sync_progress", "INSERT"), ("store.sync_progress", "SELECT"), ("store.station_rows", "SELECT"),
            ]
        for (table, privilege) in needed {
            let granted = try await store.rows("SELECT has_table_privilege(\(table), \(privilege))")
            if try granted.first?.decode(Bool.self) != true {
                throw LabStoreError.loginRefused(
                    store: store.display,
                    reason: "this login may not \(privilege) \(privilege == "INSERT" ? "into" : "from") \(table) "
                        + "(its grant is missing): the store's owner runs `lineup-sync --migrate`, and this login is in role "
                        + LabSchema.stationRole)
            }
        }
    }

    /// The running double-blind sessions as the station's own reading tools see them: the
    /// definition is SessionLog's (LiveDoubleBlind: mode double-blind, not ended, a lineupd
    /// holding the log), read through a reader opened as theirs are, never a copy of it. Each
    /// table's first row of one of them (trial_station: its first trial); the run sends only
    /// the rows before it, so its cursor never passes a row held back.
    func heldBack(bounds: [String: Int64], columns: [String: Set<String>]) throws -> (
        sessions: [String], firstOrder: [String: Int64]
    ) {
        // The lab store's readers see no fact of a running double-blind session (the one rule,
        // `Visibility`), so the run holds back its every row until it has ended.
        guard !Visibility.withheld(from: .labReader).isEmpty else { return ([], [:]) }
        let blind = try SessionLog.openReader(path: reader.path)
        let sessions = try blind.read { db -> [String] in
            let live = try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_temp_master WHERE name = 'live_double_blind')")
            guard live == true else { return [] }
            return try String.fetchAll(db, sql: "SELECT id FROM temp.live_double_blind ORDER BY id")
        }
        guard !sessions.isEmpty else { return ([], [:]) }
        var first: [String: Int64] = [:]
        try reader.read { db in
            let list = "(" + sessions.map { _ in "?" }.joined(separator: ", ") + ")"
            let arguments = StatementArguments(sessions)
            for table in LabSchema.dataTables {
                let source = Source.of(table)
                let sql: String
                if table == "session" {
                    sql = "SELECT min(rowid) FROM session WHERE id IN \(list)"
                } else if source.ordersByTrial {
                    sql = "SELECT min(rowid) FROM trial WHERE session_id IN \(list)"
                } else if columns[table]?.contains("session_id") == true {
                    sql = "SELECT min(rowid) FROM \(source.logTable) WHERE session_id IN \(list)"
                } else {
                    continue
                }
                if let order = try Int64.fetchOne(db, sql: sql, arguments: arguments), order <= (bounds[table] ?? 0) {
                    first[table] = order
                }
            }
        }
        return (sessions, first)
    }

    /// The log's rows between the bounds sent and the snapshot's (those held back).
    func rowsPast(_ sent: [String: Int64], _ logBounds: [String: Int64]) throws -> Int {
        try reader.read { db in
            var rows = 0
            for table in LabSchema.dataTables {
                let source = Source.of(table)
                let from = sent[table] ?? 0
                let to = logBounds[table] ?? 0
                guard to > from else { continue }
                let sql =
                    source.ordersByTrial
                    ? "SELECT count(*) FROM trial_station x JOIN trial t ON t.id = x.trial_id WHERE t.rowid > ? AND t.rowid <= ?"
                    : "SELECT count(*) FROM \(source.logTable) WHERE rowid > ? AND rowid <= ?"
                rows += try Int.fetchOne(db, sql: sql, arguments: [from, to]) ?? 0
            }
            return rows
        }
    }

    /// The proof a run is complete: per table, the rows the store counted in of this station
    /// (`store.station_rows`, counted by the server from what each statement really inserted)
    /// equal the log's rows of this station up to where the store's progress says the sync
    /// has sent. Anything else names the table and both counts.
    func prove(station: String, cursors: [String: Int64]) async throws {
        var inStore: [String: Int] = [:]
        for row in try await store.rows(
            """
            SELECT table_name, sum(rows)::bigint FROM store.station_rows WHERE station_id = \(station)
            GROUP BY table_name
            """)
        {
            let (table, count) = try row.decode((String, Int64).self)
            inStore[table] = Int(count)
        }
        let inLog = try reader.read { db in
            var counts: [String: Int] = [:]
            for table in LabSchema.dataTables where try db.tableExists(Source.of(table).logTable) {
                let source = Source.of(table)
                let upTo = cursors[table] ?? 0
                let stamped = try db.columns(in: source.logTable).contains { $0.name == "station_id" }
                let sql: String
                if table == "station" {
                    sql = "SELECT count(*) FROM log_identity WHERE rowid <= ?1 AND id = ?2"
                } else if source.ordersByTrial {
                    sql =
                        "SELECT count(*) FROM trial_station x JOIN trial t ON t.id = x.trial_id WHERE t.rowid <= ?1 AND ?2 IS NOT NULL"
                } else if stamped {
                    sql = "SELECT count(*) FROM \(source.logTable) WHERE rowid <= ?1 AND coalesce(station_id, ?2) = ?2"
                } else {
                    sql = "SELECT count(*) FROM \(source.logTable) WHERE rowid <= ?1 AND ?2 IS NOT NULL"
                }
                counts[table] = try Int.fetchOne(db, sql: sql, arguments: [upTo, station]) ?? 0
            }
            return counts
        }
        // A dog or sample pulled from the lab's registry keeps its lab id and is in the store
        // already, as another station's: counted as there when its id is, whichever station's.
        for (table, view) in [("dog", "public.lab_dogs"), ("sample", "public.lab_samples")] {
            let ids = try reader.read { db in
                try String.fetchAll(
                    db, sql: "SELECT id FROM \(table) WHERE rowid <= ?", arguments: [cursors[table] ?? 0])
            }
            let found = try await store.rows(
                PostgresQuery(
                    unsafeSQL: "SELECT count(*) FROM \(view) WHERE id = ANY($1)",
                    binds: {
                        var b = PostgresBindings()
                        b.append(ids)
                        return b
                    }()))
            inStore[table] = Int(try found.first?.decode(Int64.self) ?? 0)
        }
        for table in LabSchema.dataTables where (inStore[table] ?? 0) != (inLog[table] ?? 0) {
            throw LabStoreError.incomplete(
                store: store.display, table: table, inStore: inStore[table] ?? 0, inLog: inLog[table] ?? 0)
        }
    }
}
