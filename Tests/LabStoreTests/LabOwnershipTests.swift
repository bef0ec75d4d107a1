import Foundation
import Glibc
import LabStore
import LineupBench
import PostgresNIO
import SessionLog
import StationControl
import Testing

/// Issue 33's attacks on the lab store, each tried with a real login against a real
/// PostgreSQL: a station's login writing in another station's name, a login with too many
/// rights or too few, a grant missing, a store upgraded from before stations were tied to
/// logins. One server for all of them (a server's start costs seconds): the attacks in the
/// database `lab`, the upgrade in a database of its own.
@Suite(.serialized, .timeLimit(.minutes(5)), .ownThreads) struct LabOwnershipTests {
    /// A filled log in `directory`.
    func filledLog(_ directory: String, name: String, seed: UInt64, prefix: String) throws -> String {
        let path = "\(directory)/\(name).db"
        var filler = LogFiller()
        filler.dogs = 1
        filler.sessionsPerDog = 2
        filler.trialsPerSession = 6
        filler.eventsPerTrial = 3
        filler.seed = seed
        filler.namePrefix = prefix
        _ = try filler.fill(try SessionLog(path: path))
        return path
    }

    func identity(_ log: String) throws -> String {
        try SessionLog.openReader(path: log).read { db in try String.fetchOne(db, sql: "SELECT id FROM log_identity")! }
    }

    /// A connection file for `user` with `password`, mode 0600; `extra` lines appended.
    func file(_ server: TestServer, _ directory: String, user: String, password: String, extra: String = "") -> String {
        let path = "\(directory)/\(user).conf"
        let text =
            "host = \(server.directory)\nport = \(server.port)\ndatabase = lab\nuser = \(user)\npassword = \(password)\n"
            + extra
        FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        return path
    }

    func login(_ server: TestServer, _ user: String, database: String = "lab") -> LabConnection {
        server.connection(user: user, password: "pw-\(user)", database: database)
    }

    /// Runs `statement` as `connection`, expecting the server to refuse it with `saying`.
    func refused(_ statement: String, as connection: LabConnection, saying: String, _ what: String) async throws {
        let store = try await LabStore.connect(connection)
        do {
            try await store.execute(PostgresQuery(unsafeSQL: statement))
            Issue.record("\(what): the store took it")
        } catch {
            #expect("\(error)".contains(saying), "\(what): \(error)")
        }
        await store.close()
    }

    /// Every row of every table of one station in the store equals its log's, key by key.
    func expectStoreEqualsLog(_ log: String, _ lab: TestServer.Lab) async throws {
        let station = try identity(log)
        for table in LabSchema.dataTables {
            let inLog = try ThreeStationLab.keysInLog(log, table: table)
            let key = table == "trial_station" ? "trial_id || '/' || station" : "id"
            let owned = table == "station" ? "id" : "station_id"
            let inStore = try await value(
                "SELECT coalesce(string_agg(\(key), ',' ORDER BY (\(key)) COLLATE \"C\"), '') FROM store.\(table) WHERE \(owned) = '\(station)'",
                as: lab.owner)
            #expect(
                inStore == inLog.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.joined(separator: ","),
                "table \(table)")
        }
    }

    /// Issue 33: the last of two `user` lines was taken in silence.
    @Test func aKeyGivenTwiceInTheConnectionFileIsRefusedInOneLine() throws {
        let directory = NSTemporaryDirectory() + "lab-twice-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = try filledLog(directory, name: "a", seed: 45, prefix: "")
        let twice = "\(directory)/twice.conf"
        FileManager.default.createFile(
            atPath: twice,
            contents: Data("host = /nonexistent\nport = 5432\ndatabase = lab\nuser = a\npassword = x\nuser = b\n".utf8),
            attributes: [.posixPermissions: 0o600])
        let run = try runSync(["--log", log, "--connection", twice, "--once"])
        #expect(run.status == 2)
        #expect(
            run.stderr == "lineup-sync: connection file \(twice): line 6: `user` is given twice (first on line 4)\n",
            "\(run.stderr)")
        #expect(run.stdout.isEmpty)
    }

    @Test func aStationsLoginCanWriteNothingInAnotherStationsName() async throws {
        guard let server = try await TestServer.startOrSkip("ownership") else { return }
        let lab = try await server.makeLab()
        let owner = try await LabStore.connect(lab.owner)
        for statement in [
            "CREATE ROLE station_b LOGIN PASSWORD 'pw-station_b' IN ROLE lineup_station",
            // Too many rights: a station's login that is also a researcher, or may act as B.
            "CREATE ROLE station_r LOGIN PASSWORD 'pw-station_r' IN ROLE lineup_station, lineup_researcher",
            "CREATE ROLE station_c LOGIN PASSWORD 'pw-station_c' IN ROLE lineup_station, station_b",
            // Too many rights: a station's login that may make logins (and so act as any).
            "CREATE ROLE station_k LOGIN CREATEROLE PASSWORD 'pw-station_k' IN ROLE lineup_station",
        ] {
            try await owner.execute(PostgresQuery(unsafeSQL: statement))
        }
        await owner.close()
        let directory = NSTemporaryDirectory() + "lab-ownership-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let logA = try filledLog(directory, name: "a", seed: 41, prefix: "A-")
        let logB = try filledLog(directory, name: "b", seed: 42, prefix: "B-")
        let fileA = try lab.stationFile(in: directory)
        let fileB = file(server, directory, user: "station_b", password: "pw-station_b")
        let noStation = ["LINEUP_SOCKET": "\(directory)/no-lineupd.sock"]
        for (log, file) in [(logA, fileA), (logB, fileB)] {
            let run = try runSync(["--log", log, "--connection", file, "--once"], environment: noStation)
            #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        }
        let a = try identity(logA)
        let b = try identity(logB)
        let aSession = try await value("SELECT min(id) FROM store.session WHERE station_id = '\(a)'", as: lab.owner)
        let aDog = try await value("SELECT min(id) FROM store.dog WHERE station_id = '\(a)'", as: lab.owner)
        let nextSeq =
            Int(try await value("SELECT max(seq)::text FROM store.event WHERE station_id = '\(a)'", as: lab.owner))! + 1
        let stationB = login(server, "station_b")
        let rls = "row-level security"

        // Each attack of issue 33, as station B's login, refused by the server itself.
        try await refused(
            "INSERT INTO store.sync_progress (station_id, table_name, last_order, rows) VALUES ('\(a)', 'trial', 9000000000000000000, 0)",
            as: stationB, saying: rls, "B's poisoned progress for A")
        for seq in nextSeq..<(nextSeq + 3) {
            try await refused(
                "INSERT INTO store.event (id, station_id, seq, kind, mono_ns, wall_ns) VALUES ('pre-claimed-\(seq)', '\(a)', \(seq), 'note', 0, 0)",
                as: stationB, saying: rls, "B pre-claiming A's event seq \(seq)")
        }
        try await refused(
            "INSERT INTO store.session (id, station_id, dog_id, mode, mono_ns, wall_ns) VALUES ('forged-session', '\(a)', '\(aDog)', 'automated', 0, 0)",
            as: stationB, saying: rls, "B forging a session of A's")
        try await refused(
            """
            INSERT INTO store.trial (id, station_id, session_id, number, outcome, started_mono_ns, started_wall_ns, mono_ns, wall_ns)
            VALUES ('forged-trial', '\(b)', '\(aSession)', 99, 'hit', 0, 0, 0, 0)
            """, as: stationB, saying: rls, "B's own trial put into A's session")
        try await refused(
            """
            INSERT INTO store.station_heartbeat (id, station_id, station_name, wall_ns, mono_ns, sync_interval_seconds,
                lineupd_reachable) VALUES ('forged-beat', '\(a)', 'bench-a', 0, 0, 60, true)
            """, as: stationB, saying: rls, "B forging A's heartbeat")
        try await refused(
            "INSERT INTO store.station (id, mono_ns, wall_ns) VALUES ('\(a)', 0, 0) ON CONFLICT DO NOTHING",
            as: stationB, saying: "synced by another login", "B sending A's station row")
        // B reads its own progress, not A's.
        #expect(
            try await value("SELECT count(*)::text FROM store.sync_progress WHERE station_id = '\(a)'", as: stationB)
                == "0")
        #expect(
            try await value(
                "SELECT (count(*) > 0)::text FROM store.sync_progress WHERE station_id = '\(b)'", as: stationB)
                == "true")

        // A's log grows; its next sync sends all of it, and the store equals the log.
        try SessionLog(path: logA).append([DogRecord(name: "A-Late"), SampleRecord(label: "A-T-late", kind: .target)])
        let again = try runSync(["--log", logA, "--connection", fileA, "--once", "--json"], environment: noStation)
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        let report = try JSONDecoder().decode(SyncReport.self, from: Data(again.stdout.utf8))
        #expect(report.complete && report.sent == ["dog": 1, "sample": 1] && report.behindRows == 0, "\(report)")
        try await expectStoreEqualsLog(logA, lab)
        try await expectStoreEqualsLog(logB, lab)

        // Logins with too many rights or too few are refused at start, in one line, exit 1.
        let admin = file(server, directory, user: "lineup_admin", password: TestServer.adminPassword)
        let beats = try await value(
            "SELECT count(*)::text FROM store.station_heartbeat WHERE station_id = '\(a)'", as: lab.owner)
        let tooMany = [
            (admin, "is a superuser"),
            (file(server, directory, user: "reader_r", password: "reader-pw"), "is not in role lineup_station"),
            (file(server, directory, user: "station_r", password: "pw-station_r"), "is also in role lineup_researcher"),
            (file(server, directory, user: "station_c", password: "pw-station_c"), "may act as station_b"),
            (
                file(server, directory, user: "station_k", password: "pw-station_k"),
                "may bypass row-level security or create roles"
            ),
            (fileB, "station \(a) is synced by another login"),
        ]
        for (file, saying) in tooMany {
            let run = try runSync(["--log", logA, "--connection", file, "--once"], environment: noStation)
            #expect(run.status == 1, "\(saying): \(run.stdout)\(run.stderr)")
            let first = run.stdout.split(separator: "\n").first.map(String.init) ?? ""
            #expect(first.contains("refused this sync: ") && first.contains(saying), "\(run.stdout)")
        }
        #expect(
            try await value(
                "SELECT count(*)::text FROM store.station_heartbeat WHERE station_id = '\(a)'", as: lab.owner)
                == beats, "a refused login sends no heartbeat")

        // A table's grant missing: refused at start naming the table, nothing sent, exit 1.
        try await refusedGrant(lab, log: logA, file: fileA, environment: noStation)

        // A hostile row in a log B's login syncs (station 300000000): refused at sync with its
        // batch, named, never stored; every reading of the store still works.
        let logC = try filledLog(directory, name: "c", seed: 46, prefix: "C-")
        let hostileTrial = try sqlite(logC, "SELECT id FROM trial ORDER BY rowid DESC LIMIT 1")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        _ = try sqlite(
            logC, "INSERT INTO trial_station (trial_id, station, kind) VALUES ('\(hostileTrial)', 300000000, 'blank')")
        let hostile = try runSync(["--log", logC, "--connection", fileB, "--once"], environment: noStation)
        #expect(hostile.status == 1, "\(hostile.stdout)\(hostile.stderr)")
        #expect(
            hostile.stdout.contains("trial_station_on_the_board")
                && hostile.stdout.contains("trial_station row (trial_id \(hostileTrial), station 300000000)"),
            "\(hostile.stdout)")
        #expect(
            try await value("SELECT count(*)::text FROM store.trial_station WHERE station > 16", as: lab.owner) == "0")
        let researcher = LabReadingTests().researcherFile(lab, in: directory)
        for what in ["trials", "sessions", "events"] {
            let export = try lineupctl(["export", "--what", what, "--lab", researcher])
            #expect(export.status == 0 && export.stdout.count > 100, "export --what \(what): \(export.stderr)")
        }

        // merge refuses the log export would refuse, in one line, and writes no lab log.
        let merged = "\(directory)/merged.db"
        let merge = try lineupctl(["merge", logA, logC, "--into", merged])
        #expect(merge.status == 1, "\(merge.stdout)\(merge.stderr)")
        #expect(
            merge.stderr.split(separator: "\n").count == 1 && merge.stderr.contains("\(logC) is not merged")
                && merge.stderr.contains("station 300000000"), "\(merge.stderr)")
        #expect(!FileManager.default.fileExists(atPath: merged))

        // A row of A's the log does not have (put in by the owner, whom nothing binds): the
        // sync does not say complete, and names the table and both counts.
        let owner2 = try await LabStore.connect(lab.owner)
        try await owner2.execute(
            PostgresQuery(
                unsafeSQL:
                    "INSERT INTO store.handler (id, station_id, code, mono_ns, wall_ns) VALUES ('not-in-the-log', '\(a)', 'GHOST', 0, 0)"
            ))
        await owner2.close()
        let handlers = try ThreeStationLab.keysInLog(logA, table: "handler").count
        let proof = try runSync(["--log", logA, "--connection", fileA, "--once"], environment: noStation)
        #expect(proof.status == 1, "\(proof.stdout)\(proof.stderr)")
        #expect(
            proof.stdout.contains(
                "holds \(handlers + 1) handler rows of this station where its log holds \(handlers) up to what the sync has sent"
            ),
            "\(proof.stdout)")

        try await anUpgradedStoreHasItsStationsAssignedByTheOwner(server)
    }

    func refusedGrant(_ lab: TestServer.Lab, log: String, file: String, environment: [String: String]) async throws {
        let owner = try await LabStore.connect(lab.owner)
        try await owner.execute("REVOKE INSERT ON store.milestone FROM lineup_station")
        await owner.close()
        try SessionLog(path: log).append([DogRecord(name: "A-Later")])
        let run = try runSync(["--log", log, "--connection", file, "--once", "--json"], environment: environment)
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        let report = try JSONDecoder().decode(SyncReport.self, from: Data(run.stdout.utf8))
        #expect(!report.complete && report.sentTotal == 0, "\(report)")
        #expect(
            report.error?.contains("may not INSERT into store.milestone (its grant is missing)") == true, "\(report)")
        let back = try await LabStore.connect(lab.owner)
        try await back.execute("GRANT INSERT ON store.milestone TO lineup_station")
        await back.close()
        let rerun = try runSync(["--log", log, "--connection", file, "--once"], environment: environment)
        #expect(rerun.status == 0, "\(rerun.stdout)\(rerun.stderr)")
        try await expectStoreEqualsLog(log, lab)
    }

    /// A store a lineup-sync before v7 filled: its stations belong to no login until the
    /// owner says whose each is; until then no login writes for them, and the rows already
    /// there are counted by v8.
    func anUpgradedStoreHasItsStationsAssignedByTheOwner(_ server: TestServer) async throws {
        let admin = try await LabStore.connect(server.admin)
        try await admin.execute("CREATE DATABASE old OWNER lineup_owner")
        await admin.close()
        let ownerOld = server.connection(user: "lineup_owner", password: "owner-pw", database: "old")
        var owner = try await LabStore.connect(ownerOld)
        #expect(try await owner.migrate(through: "v6-trial-current-corrections-in-one-hash").count == 6)
        await owner.close()
        let a = server.connection(user: "station_a", password: "station-pw", database: "old")
        let b = login(server, "station_b", database: "old")
        let before = try await LabStore.connect(a)
        try await before.execute("INSERT INTO store.station (id, mono_ns, wall_ns) VALUES ('old-a', 0, 0)")
        try await before.execute(
            "INSERT INTO store.dog (id, station_id, name, mono_ns, wall_ns) VALUES ('old-dog', 'old-a', 'Rex', 0, 0)")
        await before.close()
        owner = try await LabStore.connect(ownerOld)
        #expect(try await owner.migrate() == LabSchema.migrations.dropFirst(6).map(\.version))
        await owner.close()
        #expect(try await value("SELECT store.sync_refusal('old-a')", as: a).contains("the store's owner assigns it"))
        try await refused(
            "INSERT INTO store.dog (id, station_id, name, mono_ns, wall_ns) VALUES ('old-dog-2', 'old-a', 'Max', 0, 0)",
            as: a, saying: "row-level security", "a dog for an unassigned station")
        try await refused(
            "INSERT INTO store.station (id, mono_ns, wall_ns) VALUES ('old-a', 0, 0) ON CONFLICT DO NOTHING", as: b,
            saying: "synced before stations were tied to logins", "claiming an old station")
        owner = try await LabStore.connect(ownerOld)
        try await owner.execute("INSERT INTO store.station_login (station_id, login) VALUES ('old-a', 'station_a')")
        await owner.close()
        #expect(try await value("SELECT store.sync_refusal('old-a')", as: a) == "")
        let after = try await LabStore.connect(a)
        try await after.execute(
            "INSERT INTO store.dog (id, station_id, name, mono_ns, wall_ns) VALUES ('old-dog-2', 'old-a', 'Max', 0, 0)")
        await after.close()
        try await refused(
            "INSERT INTO store.dog (id, station_id, name, mono_ns, wall_ns) VALUES ('old-dog-3', 'old-a', 'Max', 0, 0)",
            as: b, saying: "row-level security", "B writing for A's assigned station")
        // v8 counted the dog the store had, and the trigger the one added since.
        #expect(
            try await value(
                "SELECT sum(rows)::text FROM store.station_rows WHERE station_id = 'old-a' AND table_name = 'dog'",
                as: ownerOld) == "2")
    }

    /// Issue 32: nothing of a running double-blind session reaches the store's readers. A real
    /// lineupd runs a double-blind block; synced after its first trial and again after its
    /// second, the store holds no row of the session (so no reading on it can show a layout, an
    /// outcome or the seed), and the sync says what it held back; once the session has ended, the
    /// next sync sends it all and the store equals the log.
    @Test func aRunningDoubleBlindSessionReachesTheStoreOnlyOnceEnded() async throws {
        guard let server = try await TestServer.startOrSkip("held back double-blind") else { return }
        guard let lineupd = builtProduct("lineupd") else {
            Issue.record("lineupd is not built: run `swift build` before `swift test`")
            return
        }
        let lab = try await server.makeLab()
        let directory = NSTemporaryDirectory() + "lab-blind-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socket = "\(directory)/control.sock"
        let log = "\(directory)/lineup.db"
        let station = try Child(
            [lineupd, "--simulate", "--serve", "--socket", socket, "--db", log, "--speed", "30", "--no-realtime"],
            unset: ["NOTIFY_SOCKET", "LINEUP_DB", "LINEUP_SOCKET"])
        let client = ControlClient(path: socket, timeout: 5)
        try await waitUntil(.seconds(30), for: "lineupd to answer on \(socket)") { (try? client.status()) != nil }
        _ = try client.addDog(DogEntry(name: "Rex"))
        let labels = ["T-7", "C-1", "C-2", "C-3", "C-4", "C-5"]
        for label in labels {
            _ = try client.addSample(SampleEntry(label: label, kind: label.hasPrefix("T") ? .target : .control))
        }
        let session = try client.startSession(
            SessionRequest(dog: "Rex", program: "research-5-station", step: "phase-3/1", trials: 4, samples: labels))
        let file = try lab.stationFile(in: directory)
        let conf = LabReadingTests().researcherFile(lab, in: directory)
        let everything = try SessionLog.openReader(path: log, everything: true)
        func trialsLogged() throws -> Int {
            try everything.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM trial WHERE session_id = ?", arguments: [session]) ?? 0
            }
        }
        let sync = ["--log", log, "--connection", file, "--once", "--json", "--socket", socket]
        for trial in 1...2 {
            _ = try client.ready()
            try await waitUntil(.seconds(60), for: "trial \(trial) of the block to be logged") {
                try trialsLogged() >= trial
            }
            let run = try runSync(sync)
            #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
            let report = try JSONDecoder().decode(SyncReport.self, from: Data(run.stdout.utf8))
            #expect(report.complete && report.heldBackSessions == [session] && report.heldBackRows > 0, "\(report)")
            // Not a row of the session in any table: no reading on the store can show it.
            let trialIds = try everything.read { db in
                try String.fetchAll(db, sql: "SELECT id FROM trial WHERE session_id = ?", arguments: [session])
            }
            #expect(trialIds.count >= trial)
            let quoted = trialIds.map { "'\($0)'" }.joined(separator: ", ")
            var tables = ["session": "id = '\(session)'", "trial_station": "trial_id IN (\(quoted))"]
            for table in LabSchema.dataTables
            where [
                "session_note", "session_end", "layout_commitment", "trial", "layout_opening", "handler_guess",
                "milestone", "event", "trial_procedure", "dilution_commitment",
            ].contains(table) {
                tables[table] = "session_id = '\(session)'"
            }
            for (table, condition) in tables.sorted(by: { $0.key < $1.key }) {
                #expect(
                    try await value("SELECT count(*)::text FROM store.\(table) WHERE \(condition)", as: lab.owner)
                        == "0",
                    "trial \(trial): store.\(table) holds rows of the running double-blind session")
            }
            #expect(try await value("SELECT count(*)::text FROM store.sample", as: lab.owner) == "6")
            // The issue's reading: the running session's trials through the researcher's export.
            let export = try lineupctl(["export", "--what", "trials", "--lab", conf, "--session", session])
            #expect(
                !export.stdout.contains(session) && export.stdout.split(whereSeparator: \.isNewline).count <= 1,
                "\(export.stdout)\(export.stderr)")
        }

        try client.endSession(suggestions: nil)
        let ended = try runSync(sync)
        #expect(ended.status == 0, "\(ended.stdout)\(ended.stderr)")
        let report = try JSONDecoder().decode(SyncReport.self, from: Data(ended.stdout.utf8))
        #expect(report.complete && report.heldBackSessions.isEmpty && report.behindRows == 0, "\(report)")
        try await expectStoreEqualsLog(log, lab)
        let onStore = try lineupctl(["export", "--what", "trials", "--lab", conf, "--session", session])
        let onLog = try lineupctl(["export", "--what", "trials", "--db", log, "--session", session])
        #expect(
            onStore.status == 0 && onStore.stdout == onLog.stdout, "\(onStore.stdout)\(onStore.stderr)\n\(onLog.stdout)"
        )
        #expect(onStore.stdout.split(whereSeparator: \.isNewline).count >= 3)
        station.kill(SIGTERM)
        _ = try station.wait(within: .seconds(30), for: "lineupd to stop")
    }
}
