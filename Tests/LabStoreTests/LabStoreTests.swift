import Foundation
import Glibc
import LabStore
import LineupBench
import PostgresNIO
import SessionLog
import StationControl
import Testing

/// The lab store on a real PostgreSQL server of the test's own (TestServer), and lineup-sync
/// run as a process against it.
@Suite(.serialized, .timeLimit(.minutes(5)), .ownThreads) struct LabStoreTests {
    /// A filled station log in a fresh directory: (directory, log path).
    func stationLog(seed: UInt64 = 7) throws -> (String, String) {
        let directory = NSTemporaryDirectory() + "lab-store-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = "\(directory)/lineup.db"
        var filler = LogFiller()
        filler.dogs = 2
        filler.sessionsPerDog = 2
        filler.trialsPerSession = 12
        filler.eventsPerTrial = 6
        filler.seed = seed
        let log = try SessionLog(path: path)
        try filler.fill(log)
        return (directory, path)
    }

    /// Rows per table in the log, counted as the store counts them.
    func logCounts(_ path: String) throws -> [String: Int] {
        let reader = try SessionLog.openReader(path: path)
        return try reader.read { db in
            var counts: [String: Int] = [:]
            for table in LabSchema.dataTables {
                let logTable = table == "station" ? "log_identity" : table
                counts[table] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(logTable)") ?? 0
            }
            return counts
        }
    }

    func storeCounts(_ lab: TestServer.Lab) async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for table in LabSchema.dataTables {
            counts[table] = Int(try await value("SELECT count(*)::text FROM store.\(table)", as: lab.owner))
        }
        return counts
    }

    @Test func rolesLetAStationOnlyInsertAndAResearcherOnlyRead() async throws {
        guard let server = try await TestServer.startOrSkip("roles") else { return }
        let lab = try await server.makeLab()
        // Migrating again applies nothing.
        let owner = try await LabStore.connect(lab.owner)
        #expect(try await owner.migrate() == [])
        #expect(try await owner.appliedMigrations() == LabSchema.migrations.map(\.version))
        await owner.close()

        let station = try await LabStore.connect(lab.station)
        try await station.execute("INSERT INTO store.station (id, mono_ns, wall_ns) VALUES ('s1', 1, 2)")
        try await station.execute(
            "INSERT INTO store.dog (id, station_id, name, mono_ns, wall_ns) VALUES ('d1', 's1', 'Rex', 1, 2)")
        for statement in [
            "UPDATE store.dog SET name = 'Max' WHERE id = 'd1'", "DELETE FROM store.dog WHERE id = 'd1'",
            "TRUNCATE store.dog", "SELECT name FROM store.dog",
        ] {
            await #expect {
                try await station.execute(PostgresQuery(unsafeSQL: statement))
            } throws: { error in
                "\(error)".contains("permission denied")
            }
        }
        await station.close()

        let researcher = try await LabStore.connect(lab.researcher)
        #expect(try await value("SELECT name FROM public.dogs", as: lab.researcher) == "Rex")
        #expect(try await value("SELECT wall_time::text FROM public.dogs", as: lab.researcher).hasPrefix("1970-01-01"))
        for statement in [
            "INSERT INTO store.dog (id, station_id, name, mono_ns, wall_ns) VALUES ('d2', 's1', 'Max', 1, 2)",
            "UPDATE store.dog SET name = 'Max'",
        ] {
            await #expect {
                try await researcher.execute(PostgresQuery(unsafeSQL: statement))
            } throws: { error in
                "\(error)".contains("permission denied")
            }
        }
        await researcher.close()

        // The owner holds every privilege, and the triggers still refuse a rewrite.
        let ownerAgain = try await LabStore.connect(lab.owner)
        for statement in ["UPDATE store.dog SET name = 'Max'", "DELETE FROM store.dog", "TRUNCATE store.dog CASCADE"] {
            await #expect {
                try await ownerAgain.execute(PostgresQuery(unsafeSQL: statement))
            } throws: { error in
                "\(error)".contains("append-only")
            }
        }
        await ownerAgain.close()
        #expect(try await value("SELECT count(*)::text FROM store.dog", as: lab.owner) == "1")
    }

    @Test func aStationLogIsSyncedRowForRowAndASecondSyncAddsNothing() async throws {
        guard let server = try await TestServer.startOrSkip("row for row") else { return }
        let lab = try await server.makeLab()
        let (directory, log) = try stationLog()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = try lab.stationFile(in: directory)

        let first = try runSync(["--log", log, "--connection", file, "--once", "--batch", "40", "--json"])
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        let counts = try logCounts(log)
        #expect(counts["trial"]! == 48 && counts["event"]! > 0 && counts["trial_station"]! > 0)
        #expect(try await storeCounts(lab) == counts)
        let report = try JSONDecoder().decode(SyncReport.self, from: Data(first.stdout.utf8))
        #expect(report.sentTotal == counts.values.reduce(0, +))
        #expect(report.behindRows == 0 && report.complete)

        // Every trial and event by id, with its station and times.
        let reader = try SessionLog.openReader(path: log)
        for table in ["trial", "event"] {
            let inLog = try reader.read { db in
                try String.fetchAll(
                    db, sql: "SELECT id || ':' || mono_ns || ':' || wall_ns FROM \(table) ORDER BY id")
            }
            let inStore = try await value(
                "SELECT string_agg(id || ':' || mono_ns || ':' || wall_ns, ',' ORDER BY id) FROM store.\(table)",
                as: lab.owner)
            #expect(inStore == inLog.joined(separator: ","))
        }
        let identity = try reader.read { db in try String.fetchOne(db, sql: "SELECT id FROM log_identity")! }
        #expect(
            try await value("SELECT string_agg(DISTINCT station_id, ',') FROM store.event", as: lab.owner) == identity)

        let second = try runSync(["--log", log, "--connection", file, "--once"])
        #expect(second.status == 0)
        #expect(second.stdout.contains("sent 0 rows; behind: 0 rows"), "\(second.stdout)")
        #expect(try await storeCounts(lab) == counts)
    }

    @Test func killedInTheMiddleOfABatchThenRerunEveryRowIsThereOnce() async throws {
        guard let server = try await TestServer.startOrSkip("kill -9") else { return }
        let lab = try await server.makeLab()
        let (directory, log) = try stationLog(seed: 11)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = try lab.stationFile(in: directory)
        let counts = try logCounts(log)

        // Batches of 10: the 8th batch is inside `sample` or later; hold there, inserted but
        // not committed, and kill -9.
        let held = try HeldSync(
            ["--log", log, "--connection", file, "--once", "--batch", "10"], holdInBatch: 8)
        let line = try held.waitForHold()
        let before = try await storeCounts(lab)
        held.kill(SIGKILL)
        #expect(try held.wait() == 128 + SIGKILL)
        // The killed batch left nothing: the store holds only whole batches.
        let after = try await storeCounts(lab)
        #expect(after == before, "\(line)")
        #expect(after.values.reduce(0, +) < counts.values.reduce(0, +))

        let rerun = try runSync(["--log", log, "--connection", file, "--once", "--batch", "10"])
        #expect(rerun.status == 0, "\(rerun.stdout)\(rerun.stderr)")
        #expect(try await storeCounts(lab) == counts)
        // Each batch's progress row once: the resumed run started where the store said.
        let progress = try await value("SELECT sum(rows)::text FROM store.sync_progress", as: lab.owner)
        #expect(Int(progress) == counts.values.reduce(0, +))
    }

    @Test func theServerRestartedMidSyncIsSaidAndTheNextRunCompletes() async throws {
        guard let server = try await TestServer.startOrSkip("server restart") else { return }
        let lab = try await server.makeLab()
        let (directory, log) = try stationLog(seed: 13)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = try lab.stationFile(in: directory)
        let counts = try logCounts(log)

        let held = try HeldSync(["--log", log, "--connection", file, "--once", "--batch", "10"], holdInBatch: 5)
        _ = try held.waitForHold()
        try server.restart()
        held.release()
        let status = try held.wait()
        #expect(status == 1)
        #expect(held.output().contains("was lost during a batch of"), "\(held.output())")

        let rerun = try runSync(["--log", log, "--connection", file, "--once", "--batch", "10"])
        #expect(rerun.status == 0, "\(rerun.stdout)\(rerun.stderr)")
        #expect(try await storeCounts(lab) == counts)
    }

    @Test func aConnectionFileOthersCanReadIsRefusedInOneLine() async throws {
        let (directory, log) = try stationLog()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = "\(directory)/open.conf"
        FileManager.default.createFile(
            atPath: path, contents: Data("host = /tmp\ndatabase = lab\nuser = s\npassword = secret-pw\n".utf8),
            attributes: [.posixPermissions: 0o644])
        let run = try runSync(["--log", log, "--connection", path, "--once"])
        #expect(run.status == 2)
        #expect(
            run.stderr
                == "lineup-sync: connection file \(path): readable by its group or others (mode 644) and it holds the lab store's password: chmod 600 \(path)\n"
        )
        #expect(!run.stderr.contains("secret-pw") && !run.stdout.contains("secret-pw"))
        // An unreachable store: exit 1, said in one line, the password in neither stream.
        chmod(path, 0o600)
        let unreachable = try runSync(["--log", log, "--connection", path, "--once"])
        #expect(unreachable.status == 1)
        #expect(unreachable.stdout.contains("cannot be reached") && unreachable.stdout.contains("behind: unknown"))
        #expect(!unreachable.stderr.contains("secret-pw") && !unreachable.stdout.contains("secret-pw"))
    }

    /// After each run lineup-sync tells the running lineupd (`sync-report`), whose status then
    /// shows how far behind the store is; with no lineupd running it syncs all the same and
    /// says it could not report.
    @Test func theSyncTellsTheRunningStationAndSyncsWithoutOne() async throws {
        guard let server = try await TestServer.startOrSkip("sync report") else { return }
        guard let lineupd = builtProduct("lineupd") else {
            Issue.record("lineupd is not built: run `swift build` before `swift test`")
            return
        }
        let lab = try await server.makeLab()
        let directory = NSTemporaryDirectory() + "sync-report-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socket = "\(directory)/control.sock"
        let log = "\(directory)/lineup.db"
        let station = try Child(
            [lineupd, "--simulate", "--serve", "--socket", socket, "--db", log, "--speed", "30", "--no-realtime"],
            unset: ["NOTIFY_SOCKET", "LINEUP_DB", "LINEUP_SOCKET"])
        let client = ControlClient(path: socket, timeout: 5)
        try await waitUntil(.seconds(30), for: "lineupd to answer on \(socket)") { (try? client.status()) != nil }
        #expect(try client.status().labSync == LabSyncStatus(reporting: false))
        _ = try client.addDog(DogEntry(name: "Rex"))

        let file = try lab.stationFile(in: directory)
        let first = try runSync(["--log", log, "--connection", file, "--once", "--socket", socket])
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        #expect(first.stderr.isEmpty, "\(first.stderr)")
        let synced = try #require(try client.status().labSync)
        #expect(synced.reporting && synced.behindRows == 0 && synced.lastError == nil, "\(synced)")
        let success = try #require(synced.lastSuccess)

        // The store unreachable: the station hears of it, and keeps the last success.
        let away = "\(directory)/away.conf"
        FileManager.default.createFile(
            atPath: away,
            contents: Data("host = \(directory)/no-server\ndatabase = lab\nuser = station_a\npassword = x\n".utf8),
            attributes: [.posixPermissions: 0o600])
        let failed = try runSync(["--log", log, "--connection", away, "--once", "--socket", socket])
        #expect(failed.status == 1)
        let reported = try #require(try client.status().labSync)
        #expect(reported.behindRows == nil && reported.lastSuccess == success, "\(reported)")
        #expect(reported.lastError?.contains("cannot be reached") == true, "\(reported)")

        station.kill(SIGTERM)
        #expect(try station.wait(within: .seconds(30), for: "lineupd to stop") == 0, "\(station.stderr())")
        let alone = try runSync(["--log", log, "--connection", file, "--once", "--socket", socket])
        #expect(alone.status == 0, "\(alone.stdout)\(alone.stderr)")
        #expect(alone.stdout.contains("behind: 0 rows"), "\(alone.stdout)")
        #expect(
            alone.stderr.hasPrefix("lineup-sync: could not report to lineupd at \(socket) ")
                && alone.stderr.hasSuffix("; the sync itself went on\n"), "\(alone.stderr)")
    }

    /// lineupd keeps no network: the PostgreSQL client (and NIO and its TLS under it) must not
    /// be linked into it; lineup-sync, which does link them, shows the check can see them.
    @Test func lineupdDoesNotLinkThePostgreSQLClient() throws {
        guard let lineupd = builtProduct("lineupd"), let sync = builtProduct("lineup-sync") else {
            Issue.record("lineupd and lineup-sync are not built: run `swift build` before `swift test`")
            return
        }
        let daemon = try Data(contentsOf: URL(fileURLWithPath: lineupd))
        let client = try Data(contentsOf: URL(fileURLWithPath: sync))
        for marker in ["PostgresNIO", "NIOPosix", "NIOSSL"] {
            #expect(client.range(of: Data(marker.utf8)) != nil, "lineup-sync should contain \(marker)")
            #expect(daemon.range(of: Data(marker.utf8)) == nil, "lineupd contains \(marker)")
        }
    }
}

/// lineup-sync held inside a batch by its test hook, for a kill or a server restart there.
final class HeldSync: @unchecked Sendable {
    let child: Child

    init(_ arguments: [String], holdInBatch: Int, environment: [String: String] = [:]) throws {
        guard let path = lineupSyncPath() else {
            throw TestServerError(message: "lineup-sync is not built: run `swift build` before `swift test`")
        }
        child = try Child(
            [path] + arguments,
            environment: environment.merging(["LINEUP_SYNC_HOLD_IN_BATCH": "\(holdInBatch)"]) { $1 }, withInput: true)
    }

    /// The hold line; the process blocks there until released, so this cannot race.
    func waitForHold() throws -> String {
        try child.waitForLine(
            containing: "holding in batch", within: .seconds(60), for: "lineup-sync holding in batch")
    }

    func kill(_ signal: Int32) { child.kill(signal) }

    func release() { child.writeLine() }

    func wait() throws -> Int32 { try child.wait(within: .seconds(60), for: "held lineup-sync to end") }

    func output() -> String { child.stdout() + child.stderr() }
}
