import Foundation
import GRDB
import LabStore
import LineupBench
import PostgresNIO
import SessionLog
import Testing

/// Issue 38's threshold tables in the store (migration v11): a sync into a store without them is
/// refused before anything is sent (the trials would go in without their procedure state and
/// dilution commitments, and the append-only store could never take those later); once
/// migrated, every row of `trial_procedure` and `dilution_commitment` is in the store as the
/// log holds it, and a station's login may write none in another station's name. The exports'
/// procedure columns from the store equal the merged logs' in `LabExportTests` (its station A
/// runs a staircase).
@Suite(.serialized, .ownThreads) struct LabProcedureSyncTests {
    @Test func aStoreWithoutTheProcedureTablesIsRefusedAndAMigratedOneMirrorsThem() async throws {
        guard let server = try await TestServer.startOrSkip("procedure sync") else { return }
        _ = try await server.makeLab()
        let admin = try await LabStore.connect(server.admin)
        try await admin.execute("CREATE DATABASE older OWNER lineup_owner")
        await admin.close()
        let ownerOld = server.connection(user: "lineup_owner", password: "owner-pw", database: "older")
        var owner = try await LabStore.connect(ownerOld)
        #expect(try await owner.migrate(through: "v10-dilutions-and-session-conditions").count == 10)
        await owner.close()

        let directory = NSTemporaryDirectory() + "procedure-sync-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = "\(directory)/station.db"
        var filler = LogFiller()
        filler.dogs = 2
        filler.sessionsPerDog = 2
        filler.trialsPerSession = 12
        filler.eventsPerTrial = 1
        filler.dilutedTargets = true
        filler.staircase = true
        try filler.fill(try SessionLog(path: path))
        let station = server.connection(user: "station_a", password: "station-pw", database: "older")

        func sync() async throws -> SyncReport {
            let store = try await LabStore.connect(station)
            do {
                let report = try await StationSync(
                    reader: try SessionLog.openReader(path: path, everything: true), store: store, batchSize: 7
                ).run()
                await store.close()
                return report
            } catch {
                await store.close()
                throw error
            }
        }
        do {
            _ = try await sync()
            Issue.record("a store without migration v11 took the sync")
        } catch {
            #expect("\(error)".contains("lacks migration v11"), "\(error)")
            #expect("\(error)".contains("store.trial_procedure and store.dilution_commitment"), "\(error)")
            #expect("\(error)".contains("lineup-sync --migrate"), "\(error)")
        }
        #expect(try await value("SELECT count(*)::text FROM store.station", as: ownerOld) == "0")

        owner = try await LabStore.connect(ownerOld)
        #expect(try await owner.migrate() == ["v11-threshold-procedure-and-dilution-commitments"])
        await owner.close()
        #expect(try await sync().complete)

        // Every column of every row, as text, as the log holds it.
        let procedureColumns = [
            "id", "session_id", "trial_id", "trial_number", "procedure", "rung", "sample_id", "catch_trial",
            "direction", "reversal", "reversals", "next_rung", "stopped", "dilution_salt", "mono_ns", "wall_ns",
        ]
        let commitmentColumns = ["id", "session_id", "trial_number", "digest", "mono_ns", "wall_ns"]
        for (table, columns) in [("trial_procedure", procedureColumns), ("dilution_commitment", commitmentColumns)] {
            let list = columns.map { "coalesce(\($0) || '', '-')" }.joined(separator: " || '|' || ")
            let inLog = try SessionLog.openReader(path: path).read { db in
                try String.fetchAll(db, sql: "SELECT \(list) FROM \(table)")
            }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            let storeList = columns.map { "coalesce(\($0)::text, '-')" }.joined(separator: " || '|' || ")
            let inStore = try await value(
                "SELECT string_agg(\(storeList), E'\\n' ORDER BY (\(storeList)) COLLATE \"C\") FROM public.\(LabSchema.viewNames[table]!)",
                as: ownerOld
            ).split(separator: "\n").map(String.init)
            #expect(inStore == inLog, "\(table)")
            #expect(inLog.count >= 12, "\(table): \(inLog.count) rows")
        }
        // Not an empty agreement: the staircase turned, stepped both ways and had a catch trial.
        let (reversals, catches, ups) = try SessionLog.openReader(path: path).read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM trial_procedure WHERE reversal = 1") ?? 0,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM trial_procedure WHERE catch_trial = 1") ?? 0,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM trial_procedure WHERE direction = 'up'") ?? 0
            )
        }
        #expect(reversals > 0 && catches > 0 && ups > 0, "\(reversals) reversals, \(catches) catch trials, \(ups) up")

        // A station's login writes neither table in another station's name, nor under another
        // station's session or trial (the store's owner makes the other station here, and owns it).
        let a = try await value("SELECT id FROM store.station", as: ownerOld)
        let aSession = try await value("SELECT min(session_id) FROM store.trial_procedure", as: ownerOld)
        let aTrial = try await value("SELECT min(trial_id) FROM store.trial_procedure", as: ownerOld)
        let adminOld = try await LabStore.connect(
            server.connection(user: "lineup_owner", password: "owner-pw", database: "older"))
        try await adminOld.execute("INSERT INTO store.station (id, mono_ns, wall_ns) VALUES ('other-station', 0, 0)")
        await adminOld.close()
        for statement in [
            """
            INSERT INTO store.trial_procedure (id, station_id, session_id, trial_id, trial_number, procedure, rung,
                catch_trial, direction, reversal, reversals, stopped, mono_ns, wall_ns)
            VALUES ('forged-1', 'other-station', '\(aSession)', '\(aTrial)', 99, 'staircase', 1, 0, 'none', 0, 0, 0, 0, 0)
            """,
            """
            INSERT INTO store.dilution_commitment (id, station_id, session_id, trial_number, digest, mono_ns, wall_ns)
            VALUES ('forged-2', 'other-station', '\(aSession)', 99, 'x', 0, 0)
            """,
        ] {
            let store = try await LabStore.connect(station)
            do {
                try await store.execute(PostgresQuery(unsafeSQL: statement))
                Issue.record("a station's login wrote another station's row: \(statement)")
            } catch {
                #expect("\(error)".contains("row-level security"), "\(error)")
            }
            await store.close()
        }
        #expect(!a.isEmpty)
        // A log's contradicting row is refused by the store's CHECK as by the log's.
        let store = try await LabStore.connect(ownerOld)
        do {
            try await store.execute(
                """
                INSERT INTO store.trial_procedure (id, station_id, session_id, trial_id, trial_number, procedure, rung,
                    catch_trial, direction, reversal, reversals, stopped, mono_ns, wall_ns)
                VALUES ('catch-with-rung', '\(a)', '\(aSession)', '\(aTrial)', 98, 'staircase', 1, 1, 'none', 0, 0, 0, 0, 0)
                """)
            Issue.record("a catch trial with a rung was stored")
        } catch {
            #expect("\(error)".contains("check constraint"), "\(error)")
        }
        await store.close()
    }
}
