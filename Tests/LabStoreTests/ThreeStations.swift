import Foundation
import Glibc
import LabStore
import LineupBench
import PostgresNIO
import SessionLog
import Testing

/// Three stations synced into one store at once, through every trouble issue 22 names: the
/// fixture a later test reuses (`stats` on the store against `stats` on the logs combined).
///
/// - Station A: a real block, `lineupd --simulate --fast --trials 60` (trials, trial_station,
///   sessions; a fast block logs no sensor events). Its first sync is killed (`kill -9`) while
///   holding inside a batch, inserted but not committed.
/// - Station B: LogFiller's log (2 dogs, 2 sessions each, 12 trials, 6 events a trial): no
///   block is needed, and it brings the events. Its first sync holds inside a batch while the
///   server is restarted (`pg_ctl restart`) and loses its connection there.
/// - Station C: offline for a whole block: its sync loops (`--interval 1`) against a socket
///   directory that is not there while a real block (`--trials 60`) runs and logs, then the
///   directory comes back (a symlink to the server's: the station's "network") and the loop
///   sends everything.
///
/// The reruns of A and B and C's return run at once, three lineup-sync processes into one
/// server. Each station has its own login (lineup_station's INSERT only). No network
/// namespaces: the server listens on a Unix socket only, and C's network is that symlink.
struct ThreeStationLab {
    struct Station {
        let name: String
        let log: String
        let identity: String
        /// Its lineup-sync's connection file (mode 0600).
        let connectionFile: String
    }

    let server: TestServer
    let lab: TestServer.Lab
    let directory: String
    let stations: [Station]

    /// The whole scenario, or nil when PostgreSQL is not installed (said by startOrSkip).
    static func synced(_ test: String) async throws -> ThreeStationLab? {
        guard let server = try await TestServer.startOrSkip(test) else { return nil }
        guard let lineupd = builtProduct("lineupd") else {
            throw TestServerError(message: "lineupd is not built: run `swift build` before `swift test`")
        }
        let lab = try await server.makeLab()
        let directory = NSTemporaryDirectory() + "three-stations-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let owner = try await LabStore.connect(lab.owner)
        for name in ["a", "b", "c"] {
            try await owner.execute(
                PostgresQuery(
                    unsafeSQL: "CREATE ROLE station_\(name)3 LOGIN PASSWORD 'pw-\(name)' IN ROLE lineup_station"))
        }
        await owner.close()
        // C reaches the server through this link only; while it is missing, C is offline.
        let network = "\(directory)/network-c"
        func file(_ name: String, host: String) throws -> String {
            let path = "\(directory)/\(name).conf"
            let text =
                "host = \(host)\nport = \(server.port)\ndatabase = lab\nuser = station_\(name)3\npassword = pw-\(name)\n"
            guard
                FileManager.default.createFile(
                    atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
            else { throw TestServerError(message: "cannot write \(path)") }
            return path
        }

        // A's block, and B's filled log.
        let logA = "\(directory)/a.db"
        let blockA = try Child([lineupd, "--simulate", "--fast", "--trials", "60", "--seed", "21", "--db", logA])
        #expect(try blockA.wait(within: .seconds(120), for: "station A's block") == 0, "\(blockA.stderr())")
        let logB = "\(directory)/b.db"
        var filler = LogFiller()
        filler.dogs = 2
        filler.sessionsPerDog = 2
        filler.trialsPerSession = 12
        filler.eventsPerTrial = 6
        filler.seed = 5
        try filler.fill(try SessionLog(path: logB))

        // C: offline for its whole block. Its first run fails before the block starts, and a
        // later one after it ended, so no run could reach the store while the block logged.
        let logC = "\(directory)/c.db"
        let fileC = try file("c", host: network)
        let seedC = try Child([lineupd, "--simulate", "--fast", "--trials", "1", "--seed", "22", "--db", logC])
        #expect(try seedC.wait(within: .seconds(60), for: "station C's first trial") == 0, "\(seedC.stderr())")
        let loopC = try Child(
            [try syncBinary(), "--log", logC, "--connection", fileC, "--interval", "1", "--batch", "10"],
            environment: ["LINEUP_SOCKET": "\(directory)/no-lineupd.sock"])
        let unreachable = "cannot be reached"
        try await waitUntil(.seconds(60), for: "C's sync to fail offline") { loopC.count(of: unreachable) >= 1 }
        let blockC = try Child([lineupd, "--simulate", "--fast", "--trials", "60", "--seed", "23", "--db", logC])
        #expect(try blockC.wait(within: .seconds(120), for: "station C's block") == 0, "\(blockC.stderr())")
        let failedBefore = loopC.count(of: unreachable)
        try await waitUntil(.seconds(60), for: "C's sync to fail after its block") {
            loopC.count(of: unreachable) > failedBefore
        }
        #expect(loopC.stdout().contains("sent 0 rows") && !loopC.stdout().contains("behind: 0 rows"))

        // A killed inside a batch, B's server restarted inside one.
        let fileA = try file("a", host: server.directory)
        let fileB = try file("b", host: server.directory)
        let noStation = ["LINEUP_SOCKET": "\(directory)/no-lineupd.sock"]
        let heldA = try HeldSync(
            ["--log", logA, "--connection", fileA, "--once", "--batch", "10"], holdInBatch: 8, environment: noStation)
        let heldB = try HeldSync(
            ["--log", logB, "--connection", fileB, "--once", "--batch", "10"], holdInBatch: 5, environment: noStation)
        _ = try heldA.waitForHold()
        _ = try heldB.waitForHold()
        heldA.kill(SIGKILL)
        #expect(try heldA.wait() == 128 + SIGKILL)
        try server.restart()
        heldB.release()
        #expect(try heldB.wait() == 1)
        #expect(heldB.output().contains("was lost during a batch of"), "\(heldB.output())")

        // Back: C's network returns while A and B sync again, all three at once.
        try FileManager.default.createSymbolicLink(atPath: network, withDestinationPath: server.directory)
        let rerunA = try Child(
            [try syncBinary(), "--log", logA, "--connection", fileA, "--once", "--batch", "10"], environment: noStation)
        let rerunB = try Child(
            [try syncBinary(), "--log", logB, "--connection", fileB, "--once", "--batch", "10"], environment: noStation)
        #expect(try rerunA.wait(within: .seconds(120), for: "A's rerun") == 0, "\(rerunA.stdout())\(rerunA.stderr())")
        #expect(try rerunB.wait(within: .seconds(120), for: "B's rerun") == 0, "\(rerunB.stdout())\(rerunB.stderr())")
        try await waitUntil(.seconds(120), for: "C's sync to send its whole block once back") {
            loopC.stdout().split(separator: "\n").last?.hasSuffix("behind: 0 rows") == true
        }
        loopC.kill(SIGTERM)
        _ = try loopC.wait(within: .seconds(30), for: "C's sync loop to stop")

        var stations: [Station] = []
        for (name, log, file) in [("A", logA, fileA), ("B", logB, fileB), ("C", logC, fileC)] {
            let identity = try SessionLog.openReader(path: log).read { db in
                try String.fetchOne(db, sql: "SELECT id FROM log_identity")!
            }
            stations.append(Station(name: name, log: log, identity: identity, connectionFile: file))
        }
        return ThreeStationLab(server: server, lab: lab, directory: directory, stations: stations)
    }

    static func syncBinary() throws -> String {
        guard let path = lineupSyncPath() else {
            throw TestServerError(message: "lineup-sync is not built: run `swift build` before `swift test`")
        }
        return path
    }

    /// The key (id, or trial and station number) of every row of `table` in a log, sorted.
    static func keysInLog(_ log: String, table: String) throws -> [String] {
        let sql =
            switch table {
            case "station": "SELECT id FROM log_identity"
            case "trial_station": "SELECT trial_id || '/' || station FROM trial_station"
            default: "SELECT id FROM \(table)"
            }
        return try SessionLog.openReader(path: log).read { db in try String.fetchAll(db, sql: sql) }.sorted()
    }

    /// The same keys in the store, of one station's rows, sorted (duplicates kept, so a row
    /// stored twice would show).
    func keysInStore(table: String, station: String) async throws -> [String] {
        let key = table == "trial_station" ? "trial_id || '/' || station" : "id"
        let owned = table == "station" ? "id" : "station_id"
        let store = try await LabStore.connect(lab.owner)
        defer { Task { await store.close() } }
        let rows = try await store.rows(
            PostgresQuery(unsafeSQL: "SELECT \(key) FROM store.\(table) WHERE \(owned) = $1", binds: binds(station)))
        return try rows.map { try $0.decode(String.self) }.sorted()
    }

    private func binds(_ value: String) -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(value)
        return binds
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }
}

extension Child {
    /// Lines of its stdout holding `text`.
    func count(of text: String) -> Int {
        stdout().split(separator: "\n").filter { $0.contains(text) }.count
    }
}

@Suite(.serialized, .timeLimit(.minutes(5)), .ownThreads) struct ThreeStationsTests {
    @Test func threeStationsAtOnceThroughAKillARestartAndAnOfflineBlockEachRowOnce() async throws {
        guard let fixture = try await ThreeStationLab.synced("three stations") else { return }
        defer { fixture.remove() }
        var total = 0
        for station in fixture.stations {
            for table in LabSchema.dataTables {
                let inLog = try ThreeStationLab.keysInLog(station.log, table: table)
                let inStore = try await fixture.keysInStore(table: table, station: station.identity)
                #expect(inStore == inLog, "station \(station.name), table \(table)")
                total += inLog.count
            }
        }
        // Each store row belongs to one of the three, and the station logs were not small.
        let rows = try await value(
            "SELECT (" + LabSchema.dataTables.map { "(SELECT count(*) FROM store.\($0))" }.joined(separator: " + ")
                + ")::text", as: fixture.lab.owner)
        #expect(Int(rows) == total)
        for station in fixture.stations {
            let trials = try ThreeStationLab.keysInLog(station.log, table: "trial").count
            #expect(trials >= 48, "station \(station.name) has \(trials) trials")
        }
        #expect(try ThreeStationLab.keysInLog(fixture.stations[1].log, table: "event").count > 0)
        // Every committed batch recorded once: the progress rows add up to the rows.
        let progress = try await value("SELECT sum(rows)::text FROM store.sync_progress", as: fixture.lab.owner)
        #expect(Int(progress) == total)
    }
}
