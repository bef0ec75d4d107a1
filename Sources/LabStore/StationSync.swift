import Foundation
import GRDB
import PostgresNIO
import SessionLog

/// How far a sync got and how far behind the store still is.
public struct SyncReport: Sendable, Codable, Equatable {
    /// Rows sent this run, per store table (tables with none left out).
    public var sent: [String: Int] = [:]
    /// Whether everything the log held when the run started is now in the store.
    public var complete = false
    /// Rows in the log the store does not have yet (written after the run started, or left
    /// behind by a failure), and the wall time of the oldest of them; nil when the store did
    /// not answer, so what it has is unknown.
    public var behindRows: Int?
    public var oldestUnsyncedWallNs: Int64?
    /// Why the run stopped early, when it did.
    public var error: String?
    /// The running double-blind sessions whose rows the run held back (with every later row
    /// of the tables they are in), sent in the first run after each has ended; and how many
    /// rows waited for them.
    public var heldBackSessions: [String] = []
    public var heldBackRows = 0
    /// The store refused this login at start: no heartbeat goes with its name either.
    public var loginRefused = false

    public init() {}

    public var sentTotal: Int { sent.values.reduce(0, +) }

    enum CodingKeys: String, CodingKey {
        case sent, complete
        case behindRows = "behind_rows"
        case oldestUnsyncedWallNs = "oldest_unsynced_wall_ns"
        case error
        case heldBackSessions = "held_back_sessions"
        case heldBackRows = "held_back_rows"
    }
}

/// Pushes a station's log into the lab store: table by table, parents before children, in
/// batches that each commit with a row of `store.sync_progress` saying how far that table now
/// is. The store is the truth of what it has, so a run killed at any point resumes where the
/// last committed batch ended; rows go in by their primary key (the row's id, or a trial's and
/// station's number for trial_station) with `ON CONFLICT DO NOTHING`, so a batch whose
/// commit arrived but whose answer did not adds nothing when sent again.
public struct StationSync: Sendable {
    /// Opened with `SessionLog.openReader(path:everything: true)`: the sync reads tables by
    /// rowid, which the readings' views in front of them (LiveDoubleBlind) do not have. What
    /// those views withhold, the sync holds back too (`heldBack`), until the session ends.
    public let reader: LogReader
    public let store: LabStore
    public var batchSize: Int
    /// A test hook: in this batch (counted from 1 in the run), after its rows are inserted and
    /// before it commits, print a line and wait for one on stdin, so a test can kill the
    /// process or restart the server at exactly that point.
    public var holdInBatch: Int?

    public init(reader: LogReader, store: LabStore, batchSize: Int = 500, holdInBatch: Int? = nil) {
        self.reader = reader
        self.store = store
        self.batchSize = max(1, batchSize)
        self.holdInBatch = holdInBatch
    }

    /// Where a store table's rows come from in the log, and the log's order of them.
    struct Source {
        var table: String
        /// The log's table (`log_identity` for `station`).
        var logTable: String
        /// The columns that make a row unique in the store (its primary key). The insert names
        /// no conflict target: a target needs SELECT on its columns, and a station may not read.
        var key: [String]

        static func of(_ table: String) -> Source {
            switch table {
            case "station": Source(table: table, logTable: "log_identity", key: ["id"])
            case "trial_station": Source(table: table, logTable: "trial_station", key: ["trial_id", "station"])
            default: Source(table: table, logTable: table, key: ["id"])
            }
        }

        /// trial_station has no rowid: its rows follow their trial's, a trial's stations in
        /// one batch, so its cursor is the trial's rowid.
        var ordersByTrial: Bool { table == "trial_station" }
    }

    struct StoreColumn {
        var name: String
        var isText: Bool
        /// `double precision` (a dilution factor, a temperature): bound as a Double.
        var isReal = false
    }

    public func run() async throws -> SyncReport {
        var report = SyncReport()
        let (identity, logBounds, logColumns) = try snapshot()
        try await mayRun(station: identity, logTables: Set(logBounds.keys))
        // After the snapshot: a session that starts later is past its bounds already.
        let held = try heldBack(bounds: logBounds, columns: logColumns)
        var bounds = logBounds
        for (table, first) in held.firstOrder { bounds[table] = min(bounds[table] ?? 0, first - 1) }
        report.heldBackSessions = held.sessions
        let storeColumns = try await columnsInStore()
        // The oldest migration missing first: v10's columns, then v11's tables.
        try refuseWithoutDilutions(storeColumns, logColumns: logColumns)
        try await refuseWithoutProcedureTables(logTables: Set(logBounds.keys))
        var cursors = try await cursorsInStore(station: identity)
        var batchNumber = 0
        for table in LabSchema.dataTables {
            let source = Source.of(table)
            guard let bound = bounds[table] else { continue }
            guard let columns = storeColumns[table] else {
                throw LabStoreError.loginRefused(
                    store: store.display, reason: "this login may not write store.\(table) (its grant is missing)")
            }
            let copied = columns.filter { $0.name != "station_id" && (logColumns[table] ?? []).contains($0.name) }
            let stamped = columns.contains { $0.name == "station_id" }
            while (cursors[table] ?? 0) < bound {
                let rows = try batch(source, after: cursors[table] ?? 0, through: bound, columns: copied)
                guard let last = rows.last?.order else { break }
                batchNumber += 1
                try await send(
                    rows, source: source, columns: copied, stamped: stamped, identity: identity, lastOrder: last,
                    hold: holdInBatch == batchNumber)
                cursors[table] = last
                report.sent[table, default: 0] += rows.count
            }
        }
        try await prove(station: identity, cursors: cursors)
        report.complete = true
        try behind(report: &report, cursors: cursors)
        report.heldBackRows = try rowsPast(bounds, logBounds)
        return report
    }

    /// How far behind the store is, from the cursors it has (for a run that could not sync).
    public func behindOnly() async throws -> SyncReport {
        var report = SyncReport()
        let (identity, _, _) = try snapshot()
        try behind(report: &report, cursors: try await cursorsInStore(station: identity))
        return report
    }

    /// The log's identity, each table's last row (by the log's order) and columns, read in one
    /// transaction: a snapshot in which every child's parent is present, so sending up to
    /// these bounds never sends a child before its parent.
    func snapshot() throws -> (String, [String: Int64], [String: Set<String>]) {
        do {
            return try reader.read { db in
                guard let identity = try String.fetchOne(db, sql: "SELECT id FROM log_identity ORDER BY rowid LIMIT 1")
                else {
                    throw LabStoreError.stationLog(
                        path: reader.path, problem: "it has no identity (log_identity is empty)")
                }
                var bounds: [String: Int64] = [:]
                var columns: [String: Set<String>] = [:]
                // A log older than schema v13 has no threshold tables: nothing of them to send.
                for table in LabSchema.dataTables where try db.tableExists(Source.of(table).logTable) {
                    let source = Source.of(table)
                    let orderTable = source.ordersByTrial ? "trial" : source.logTable
                    bounds[table] =
                        try Int64.fetchOne(db, sql: "SELECT coalesce(max(rowid), 0) FROM \(orderTable)") ?? 0
                    columns[table] = Set(try db.columns(in: source.logTable).map(\.name))
                }
                return (identity, bounds, columns)
            }
        } catch let error as LabStoreError {
            throw error
        } catch {
            throw LabStoreError.stationLog(path: reader.path, problem: "\(error)")
        }
    }

    func columnsInStore() async throws -> [String: [StoreColumn]] {
        var result: [String: [StoreColumn]] = [:]
        let rows = try await store.rows(
            """
            SELECT table_name::text, column_name::text, data_type::text FROM information_schema.columns
            WHERE table_schema = 'store' ORDER BY table_name, ordinal_position
            """)
        for row in rows {
            let (table, column, type) = try row.decode((String, String, String).self)
            result[table, default: []].append(
                StoreColumn(name: column, isText: type == "text", isReal: type == "double precision"))
        }
        if result.isEmpty {
            throw LabStoreError.refused(
                store: store.display,
                message:
                    "it has no lineup tables this user may write (run `lineup-sync --migrate` as the store's owner, "
                    + "and grant this user lineup_station)")
        }
        return result
    }

    func cursorsInStore(station: String) async throws -> [String: Int64] {
        var result: [String: Int64] = [:]
        let rows = try await store.rows(
            """
            SELECT table_name, max(last_order) FROM store.sync_progress WHERE station_id = \(station)
            GROUP BY table_name
            """)
        for row in rows {
            let (table, last) = try row.decode((String, Int64).self)
            result[table] = last
        }
        return result
    }

    struct LogRow {
        var order: Int64
        var values: [DatabaseValue]
        var stationId: String?
    }

    func batch(_ source: Source, after: Int64, through bound: Int64, columns: [StoreColumn]) throws -> [LogRow] {
        let list = columns.map { "x.\($0.name)" }.joined(separator: ", ")
        let hasStationId = try reader.read { db in
            try db.columns(in: source.logTable).contains { $0.name == "station_id" }
        }
        let stationId = hasStationId ? "x.station_id" : "NULL"
        let sql: String
        if source.ordersByTrial {
            // Whole trials only (about five stations each), so a cursor never splits a trial.
            sql = """
                SELECT t.rowid AS _order, \(stationId) AS _station_id, \(list)
                FROM trial_station x JOIN trial t ON t.id = x.trial_id
                WHERE t.rowid IN (SELECT rowid FROM trial WHERE rowid > ? AND rowid <= ? ORDER BY rowid LIMIT \(max(1, batchSize / 8)))
                ORDER BY t.rowid, x.station
                """
        } else {
            sql = """
                SELECT x.rowid AS _order, \(stationId) AS _station_id, \(list) FROM \(source.logTable) x
                WHERE x.rowid > ? AND x.rowid <= ? ORDER BY x.rowid LIMIT \(batchSize)
                """
        }
        return try reader.read { db in
            try Row.fetchAll(db, sql: sql, arguments: [after, bound]).map { row in
                LogRow(
                    order: row["_order"], values: columns.map { row[$0.name] as DatabaseValue },
                    stationId: row["_station_id"])
            }
        }
    }

    /// One batch in one transaction: its rows, then the progress row that records them.
    func send(
        _ rows: [LogRow], source: Source, columns: [StoreColumn], stamped: Bool, identity: String, lastOrder: Int64,
        hold: Bool
    ) async throws {
        let insert = try insertQuery(rows, source: source, columns: columns, stamped: stamped, identity: identity)
        do {
            try await store.execute("BEGIN")
            try await store.execute(insert)
            if hold {
                StandardOutput.write(
                    Data(
                        "lineup-sync: holding in batch of \(rows.count) \(source.table) rows before its commit (test hook)\n"
                            .utf8), program: "lineup-sync")
                _ = readLine()
            }
            try await store.execute(
                """
                INSERT INTO store.sync_progress (station_id, table_name, last_order, rows)
                VALUES (\(identity), \(source.table), \(lastOrder), \(Int64(rows.count)))
                """)
            try await store.execute("COMMIT")
        } catch {
            if LabStore.isConnectionLoss(error) {
                throw LabStoreError.connectionLost(store: store.display, table: source.table, rows: rows.count)
            }
            _ = try? await store.execute("ROLLBACK")
            // A row the store's checks refuse: the server names no row to a login that may
            // not read the table, so the sync finds it, one row at a time, and names it.
            if case .refused(_, let message) = error as? LabStoreError, message.contains("(SQLSTATE 23") {
                if let named = try? await refusedRow(
                    rows, source: source, columns: columns, stamped: stamped, identity: identity)
                {
                    throw LabStoreError.refused(store: store.display, message: named)
                }
            }
            throw error
        }
    }

    /// The first row of a refused batch the store refuses alone, named by its key, with the
    /// store's reason; nothing is kept (the whole search is rolled back).
    func refusedRow(_ rows: [LogRow], source: Source, columns: [StoreColumn], stamped: Bool, identity: String)
        async throws -> String?
    {
        var found: String?
        do {
            try await store.execute("BEGIN")
            for row in rows where found == nil {
                try await store.execute("SAVEPOINT one_row")
                do {
                    try await store.execute(
                        try insertQuery([row], source: source, columns: columns, stamped: stamped, identity: identity))
                    try await store.execute("RELEASE SAVEPOINT one_row")
                } catch let error as LabStoreError {
                    guard case .refused(_, let message) = error else { throw error }
                    let key = source.key.compactMap { name -> String? in
                        guard let at = columns.firstIndex(where: { $0.name == name }) else { return nil }
                        return switch row.values[at].storage {
                        case .string(let text): "\(name) \(text)"
                        case .int64(let number): "\(name) \(number)"
                        default: "\(name) \(row.values[at].description)"
                        }
                    }.joined(separator: ", ")
                    found =
                        "\(source.table) row (\(key)) from the station's log: \(message); nothing of its batch was stored"
                }
            }
        } catch {
            _ = try? await store.execute("ROLLBACK")
            throw error
        }
        _ = try? await store.execute("ROLLBACK")
        return found
    }

    func insertQuery(_ rows: [LogRow], source: Source, columns: [StoreColumn], stamped: Bool, identity: String)
        throws -> PostgresQuery
    {
        let names = columns.map(\.name) + (stamped ? ["station_id"] : [])
        var binds = PostgresBindings(capacity: rows.count * names.count)
        var tuples: [String] = []
        var index = 0
        for row in rows {
            var placeholders: [String] = []
            for (column, value) in zip(columns, row.values) {
                try bind(value, as: column, table: source.table, into: &binds)
                index += 1
                placeholders.append("$\(index)")
            }
            if stamped {
                binds.append(row.stationId ?? identity)
                index += 1
                placeholders.append("$\(index)")
            }
            tuples.append("(" + placeholders.joined(separator: ", ") + ")")
        }
        return PostgresQuery(
            unsafeSQL: """
                INSERT INTO store.\(source.table) (\(names.joined(separator: ", "))) VALUES \(tuples.joined(separator: ", "))
                ON CONFLICT DO NOTHING
                """, binds: binds)
    }

    func bind(_ value: DatabaseValue, as column: StoreColumn, table: String, into binds: inout PostgresBindings) throws
    {
        switch value.storage {
        case .null: binds.appendNull()
        case .int64(let number):
            if column.isText {
                binds.append(String(number))
            } else if column.isReal {
                binds.append(Double(number))
            } else {
                binds.append(number)
            }
        case .double(let number):
            if column.isReal {
                binds.append(number)
            } else if column.isText {
                binds.append(String(number))
            } else if let whole = Int64(exactly: number) {
                binds.append(whole)
            } else {
                throw LabStoreError.stationLog(
                    path: reader.path, problem: "\(table).\(column.name) holds \(number), not a whole number")
            }
        case .string(let text):
            if column.isText {
                binds.append(text)
            } else if column.isReal, let number = Double(text), number.isFinite {
                binds.append(number)
            } else if !column.isReal, let number = Int64(text) {
                binds.append(number)
            } else {
                throw LabStoreError.stationLog(
                    path: reader.path, problem: "\(table).\(column.name) holds `\(text)`, not a number")
            }
        case .blob:
            throw LabStoreError.stationLog(path: reader.path, problem: "\(table).\(column.name) holds binary data")
        }
    }

    /// Rows past the store's cursors, and the oldest wall time among them.
    func behind(report: inout SyncReport, cursors: [String: Int64]) throws {
        try reader.read { db in
            var rows = 0
            var oldest: Int64?
            for table in LabSchema.dataTables where try db.tableExists(Source.of(table).logTable) {
                let source = Source.of(table)
                let after = cursors[table] ?? 0
                let sql =
                    source.ordersByTrial
                    ? "SELECT count(*), min(t.wall_ns) FROM trial_station x JOIN trial t ON t.id = x.trial_id WHERE t.rowid > ?"
                    : "SELECT count(*), min(wall_ns) FROM \(source.logTable) WHERE rowid > ?"
                guard let row = try Row.fetchOne(db, sql: sql, arguments: [after]) else { continue }
                rows += row[0] as Int
                if let wall = row[1] as Int64? { oldest = min(oldest ?? wall, wall) }
            }
            report.behindRows = rows
            report.oldestUnsyncedWallNs = oldest
        }
    }
}
