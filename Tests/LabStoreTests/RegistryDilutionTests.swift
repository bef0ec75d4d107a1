import Foundation
import GRDB
import LabStore
import SessionLog
import StationControl
import Testing
import TrainingEngine

/// Issue 38's dilutions through the lab's registry: a stock and its dilutions made on station A
/// reach the store by A's sync (migration v10) and station B by its pull, each dilution with its
/// stock, factor, concentration and unit, diluent, and when and by whom it was made, as A's log
/// holds them; a dilution whose stock B cannot have is left out, saying why. A real lineupd on
/// B, a real PostgreSQL.
@Suite(.serialized, .ownThreads) struct RegistryDilutionTests {
    @Test func aPulledDilutionKeepsItsStockAndHowItWasMade() async throws {
        guard let server = try await TestServer.startOrSkip("registry: dilutions") else { return }
        let lineupd = try #require(builtProduct("lineupd"), "lineupd is not built: run `swift build` first")
        let lab = try await server.makeLab()

        // Station A: a stock labelled after its dilutions, so the registry (ordered by label)
        // lists the dilutions first; a dilution of a dilution; and a sample of B's own label
        // that B will not take, with a dilution of it B cannot take either.
        let directoryA = NSTemporaryDirectory() + "registry-dilution-a-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directoryA, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directoryA) }
        let pathA = "\(directoryA)/lineup.db"
        let stock = SampleRecord(label: "Z-stock", kind: .target, facts: SampleFacts(source: "lab A"))
        var tenth = SampleRecord(label: "A-1e1", kind: .target, maxUses: 12)
        tenth.dilution = SampleDilution(
            stockId: stock.id, factor: 10, diluent: "mineral oil", madeOn: "2026-11-20", madeBy: "R7")
        var thousandth = SampleRecord(label: "A-1e3", kind: .target)
        thousandth.dilution = SampleDilution(
            stockId: tenth.id, factor: 100, concentration: 2.5e-7, concentrationUnit: "ng/L", diluent: "mineral oil",
            madeOn: "2026-11-21", madeBy: "R7")
        let clash = SampleRecord(label: "C-1", kind: .target)
        var ofClash = SampleRecord(label: "C-1e2", kind: .target)
        ofClash.dilution = SampleDilution(stockId: clash.id, factor: 100)
        try SessionLog(path: pathA).append([stock, tenth, thousandth, clash, ofClash])
        let store = try await LabStore.connect(lab.station)
        let synced = try await StationSync(
            reader: try SessionLog.openReader(path: pathA, everything: true), store: store
        ).run()
        await store.close()
        #expect(synced.complete)

        // Station B: a real lineupd with a sample C-1 of its own.
        let directory = NSTemporaryDirectory() + "registry-dilution-b-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (socket, db) = ("\(directory)/control.sock", "\(directory)/lineup.db")
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: lineupd)
        daemon.arguments = ["--simulate", "--serve", "--socket", socket, "--db", db, "--speed", "30", "--no-realtime"]
        daemon.standardOutput = FileHandle.nullDevice
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()
        defer {
            daemon.terminate()
            daemon.waitUntilExit()
        }
        let client = ControlClient(path: socket, timeout: 5)
        // Bounded wait for the process to start serving (not a timing assumption of the test).
        let until = Date().addingTimeInterval(20)
        while (try? client.status()) == nil && Date() < until { usleep(20_000) }
        _ = try client.addSample(SampleEntry(label: "C-1", kind: .control))
        let file = try lab.stationFile(in: directory)

        let pulled = try runSync(["--pull-registry", "--log", db, "--connection", file, "--socket", socket, "--json"])
        #expect(pulled.status == 0, "\(pulled.stdout)\(pulled.stderr)")
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let report = try decoder.decode(PulledForTest.self, from: Data(pulled.stdout.utf8))
        let ids = [stock, tenth, thousandth].map { $0.id.uuidString.lowercased() }
        #expect(Set(report.samplesAdded) == Set(ids), "\(pulled.stdout)")
        let refused = Dictionary(report.refused.map { ($0.id, $0.reason) }, uniquingKeysWith: { a, _ in a })
        #expect(refused[clash.id.uuidString.lowercased()]?.contains("labelled C-1") == true, "\(refused)")
        #expect(
            refused[ofClash.id.uuidString.lowercased()]?.contains("a dilution of \(clash.id.uuidString.lowercased())")
                == true, "\(refused)")

        // Column for column as A's log holds them.
        let sql = """
            SELECT id || '|' || label || '|' || kind || '|' || coalesce(stock_id, '-') || '|'
                || coalesce(dilution_factor, '-') || '|' || coalesce(concentration, '-') || '|'
                || coalesce(concentration_unit, '-') || '|' || coalesce(diluent, '-') || '|'
                || coalesce(made_on, '-') || '|' || coalesce(made_by, '-') || '|' || coalesce(max_uses, '-')
                || '|' || coalesce(source, '-')
            FROM sample WHERE id IN (\(ids.map { "'\($0)'" }.joined(separator: ", "))) ORDER BY id
            """
        let inA = try SessionLog.openReader(path: pathA).read { db in try String.fetchAll(db, sql: sql) }
        let inB = try SessionLog.openReader(path: db).read { db in try String.fetchAll(db, sql: sql) }
        #expect(inB == inA)
        #expect(inA.count == 3 && inA.contains { $0.contains("|2.5e-07|ng/L|mineral oil|2026-11-21|R7|") }, "\(inA)")

        // The store lists them as A synced them (migration v10), which is what B pulled.
        #expect(
            try await value("SELECT count(*)::text FROM public.lab_samples WHERE stock_id IS NOT NULL", as: lab.owner)
                == "3")
    }
}
