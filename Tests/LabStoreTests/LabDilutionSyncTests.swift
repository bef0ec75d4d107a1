import Foundation
import GRDB
import LabStore
import LineupBench
import SessionLog
import Testing

/// Issue 38's columns in the store: a sync into a store without migration v10 is refused before
/// anything is sent (it would drop the samples' dilutions and the sessions' conditions, and the
/// append-only store could never take them later); once migrated, every sample's dilution and
/// every session's conditions are in the store as the log holds them, and the plain views and
/// the registry's `lab_samples` show them.
@Suite(.serialized, .ownThreads) struct LabDilutionSyncTests {
    @Test func aStoreWithoutTheDilutionColumnsIsRefusedAndAMigratedOneMirrorsThem() async throws {
        guard let server = try await TestServer.startOrSkip("dilution sync") else { return }
        _ = try await server.makeLab()
        let admin = try await LabStore.connect(server.admin)
        try await admin.execute("CREATE DATABASE older OWNER lineup_owner")
        await admin.close()
        let ownerOld = server.connection(user: "lineup_owner", password: "owner-pw", database: "older")
        var owner = try await LabStore.connect(ownerOld)
        #expect(try await owner.migrate(through: "v9-rows-the-readers-can-read").count == 9)
        await owner.close()

        let directory = NSTemporaryDirectory() + "dilution-sync-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = "\(directory)/station.db"
        var filler = LogFiller()
        filler.dogs = 1
        filler.sessionsPerDog = 2
        filler.trialsPerSession = 4
        filler.eventsPerTrial = 1
        filler.dilutedTargets = true
        try filler.fill(try SessionLog(path: path))
        let station = server.connection(user: "station_a", password: "station-pw", database: "older")

        func sync() async throws -> SyncReport {
            let store = try await LabStore.connect(station)
            do {
                let report = try await StationSync(
                    reader: try SessionLog.openReader(path: path, everything: true), store: store, batchSize: 50
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
            Issue.record("a store without migration v10 took the sync")
        } catch {
            #expect("\(error)".contains("lacks migration v10"), "\(error)")
            #expect("\(error)".contains("lineup-sync --migrate"), "\(error)")
        }
        #expect(try await value("SELECT count(*)::text FROM store.sample", as: ownerOld) == "0")

        owner = try await LabStore.connect(ownerOld)
        #expect(
            try await owner.migrate() == [
                "v10-dilutions-and-session-conditions", "v11-threshold-procedure-and-dilution-commitments",
            ])
        await owner.close()
        #expect(try await sync().complete)
        // As the log holds them, column for column (numbers compared as numbers).
        struct Sample: Equatable {
            var label: String, stock: String?, factor: Double?, concentration: Double?, unit: String?
            var diluent: String?, madeOn: String?, madeBy: String?
        }
        struct Room: Equatable {
            var id: String, temperature: Double?, humidity: Double?, text: String?
        }
        let log = try SessionLog.openReader(path: path)
        let (samplesInLog, roomsInLog) = try log.read { db in
            (
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT s.label, st.label, s.dilution_factor, s.concentration, s.concentration_unit, s.diluent,
                            s.made_on, s.made_by
                        FROM sample s LEFT JOIN sample st ON st.id = s.stock_id ORDER BY s.label
                        """
                ).map {
                    Sample(
                        label: $0[0], stock: $0[1], factor: $0[2], concentration: $0[3], unit: $0[4], diluent: $0[5],
                        madeOn: $0[6], madeBy: $0[7])
                },
                try Row.fetchAll(db, sql: "SELECT id, temperature_c, humidity_pct, conditions FROM session ORDER BY id")
                    .map { Room(id: $0[0], temperature: $0[1], humidity: $0[2], text: $0[3]) }
            )
        }
        let store = try await LabStore.connect(ownerOld)
        let samplesInStore = try await store.rows(
            """
            SELECT s.label, st.label, s.dilution_factor, s.concentration, s.concentration_unit, s.diluent, s.made_on,
                s.made_by
            FROM public.samples s LEFT JOIN store.sample st ON st.id = s.stock_id ORDER BY s.label COLLATE "C"
            """
        ).map { row in
            let (label, stock, factor, concentration, unit, diluent, madeOn, madeBy) = try row.decode(
                (String, String?, Double?, Double?, String?, String?, String?, String?).self)
            return Sample(
                label: label, stock: stock, factor: factor, concentration: concentration, unit: unit, diluent: diluent,
                madeOn: madeOn, madeBy: madeBy)
        }
        let roomsInStore = try await store.rows(
            "SELECT id, temperature_c, humidity_pct, conditions FROM public.sessions ORDER BY id COLLATE \"C\""
        ).map { row in
            let (id, temperature, humidity, text) = try row.decode((String, Double?, Double?, String?).self)
            return Room(id: id, temperature: temperature, humidity: humidity, text: text)
        }
        await store.close()
        #expect(samplesInStore == samplesInLog)
        #expect(roomsInStore == roomsInLog)
        #expect(samplesInLog.contains { $0.label == "T-004" && $0.factor == 1000 && $0.concentration == 2.5 })
        #expect(roomsInLog.count == 2 && roomsInLog.allSatisfy { $0.temperature != nil && $0.humidity != nil })
        #expect(
            try await value("SELECT count(*)::text FROM public.lab_samples WHERE stock_id IS NOT NULL", as: ownerOld)
                == "3")
    }
}
