import Foundation
import Glibc
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LabStore
import LabWeb
import NIOCore
import SessionLog
import StationControl
import Synchronization
import Testing
import WebAccounts

/// A real `lineupd --simulate --serve` for the heartbeat: its socket and log in a fresh directory.
final class HeartbeatStation: @unchecked Sendable {
    let process = Process()
    let directory: String
    let socket: String
    let db: String

    init?() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let binary = root.appendingPathComponent(".build/debug/lineupd").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            Issue.record("lineupd is not built: run `swift build` before `swift test`")
            return nil
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("lab-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        socket = directory + "/control.sock"
        db = directory + "/lineup.db"
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [
            "--simulate", "--serve", "--socket", socket, "--db", db, "--speed", "1", "--no-realtime", "--device",
            "null",
        ]
        var environment = ProcessInfo.processInfo.environment
        for key in ["NOTIFY_SOCKET", "LINEUP_SOCKET", "LINEUP_DB"] { environment[key] = nil }
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    var client: ControlClient { ControlClient(path: socket, timeout: 5) }

    /// Bounded wait for lineupd's first answer (it sleeps as a task, blocking no thread).
    func waitReady() async -> Bool {
        for _ in 0..<300 {
            if (try? client.status()) != nil { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    func terminate() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }
}

/// The newest heartbeat of the only station, as JSON text, read with the researcher's login.
func newestHeartbeat(_ lab: TestServer.Lab) async throws -> [String: Any] {
    let text = try await value(
        "SELECT row_to_json(h)::text FROM public.station_latest h", as: lab.researcher)
    return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
}

/// An empty station log (it has its identity) in a fresh directory.
func emptyStationLog() throws -> (directory: String, log: String) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lab-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let log = directory + "/lineup.db"
    _ = try SessionLog(path: log)
    return (directory, log)
}

@Suite(.serialized, .ownThreads) struct LabPageTests {
    /// The blind rule on lineupd's own status type: no dog, no "holding", no station named in a
    /// fault. The same status outside the blind keeps all three, so the check can fail.
    @Test func aDoubleBlindHeartbeatLeavesOutWhatCouldUnblind() {
        var status = StationStatus(
            state: .holding, session: "s-1", dog: "Rex", mode: .doubleBlind, trial: 3, trials: 20, audio: "null",
            gpio: "simulated")
        status.flaggedStations = [FlaggedStation(station: "3", fault: .chatter)]
        let blind = StationHeartbeat(
            stationID: "st", stationName: "bench", wallNs: 0, monoNs: 0, syncIntervalSeconds: 60,
            status: .success(status), freeMegabytes: 100, sync: SyncReport())
        #expect(blind.dog == nil)
        #expect(blind.state == "searching")
        #expect(blind.faults == ["sensor chatter at 1 station"])
        #expect(blind.session == "s-1" && blind.trial == 3 && blind.withholdsForBlind)
        status.mode = .automated
        let open = StationHeartbeat(
            stationID: "st", stationName: "bench", wallNs: 0, monoNs: 0, syncIntervalSeconds: 60,
            status: .success(status), freeMegabytes: 100, sync: SyncReport())
        #expect(open.dog == "Rex")
        #expect(open.state == "holding")
        #expect(open.faults == ["sensor chatter at station 3"])
    }

    /// A served simulated station: lineup-sync asks the real lineupd over its socket and the
    /// store holds how the station is.
    @Test func aServedStationsHeartbeatReachesTheStore() async throws {
        guard let server = try await TestServer.startOrSkip("aServedStationsHeartbeatReachesTheStore") else { return }
        let lab = try await server.makeLab()
        guard let station = try HeartbeatStation() else { return }
        defer { station.terminate() }
        #expect(await station.waitReady())
        let control = station.client
        _ = try? control.addDog(DogEntry(name: "Rex"))
        let labels = ["T-7", "C-1", "C-2", "C-3", "C-4", "C-5"]
        for label in labels {
            _ = try control.addSample(SampleEntry(label: label, kind: label.hasPrefix("T") ? .target : .control))
        }
        let connection = try lab.stationFile(in: station.directory)
        let sync = ["--once", "--log", station.db, "--connection", connection, "--socket", station.socket]

        let trainerLed = try control.startSession(
            SessionRequest(dog: "Rex", program: "study", step: "indicate/1", mode: .trainerLed))
        let run = try runSync(sync + ["--name", "bench-a"])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(!run.stderr.contains("heartbeat"), "\(run.stderr)")
        let beat = try await newestHeartbeat(lab)
        #expect(beat["station_name"] as? String == "bench-a")
        #expect(beat["lineupd_reachable"] as? Bool == true)
        #expect(beat["session_id"] as? String == trainerLed)
        #expect(beat["dog"] as? String == "Rex")
        #expect(beat["mode"] as? String == "trainer-led")
        #expect((beat["free_megabytes"] as? Int ?? 0) > 0)
        #expect(beat["behind_rows"] as? Int == 0)
        #expect(beat["sync_interval_seconds"] as? Double == 60)
        let identity = try SessionLog.openReader(path: station.db).read { db in
            try String.fetchOne(db, sql: "SELECT id FROM log_identity")
        }
        #expect(beat["station_id"] as? String == identity)
        try control.endSession(suggestions: nil)
        // A double-blind block's heartbeat, in the store and on lineup-lab's page:
        // BlindSurfacesTests, against the rule's table.
    }

    /// A station whose lineupd does not answer: the heartbeat still arrives and says so.
    @Test func aStationWhoseDaemonIsDownSaysSo() async throws {
        guard let server = try await TestServer.startOrSkip("aStationWhoseDaemonIsDownSaysSo") else { return }
        let lab = try await server.makeLab()
        let (directory, log) = try emptyStationLog()
        let run = try runSync([
            "--once", "--log", log, "--connection", try lab.stationFile(in: directory), "--socket",
            directory + "/no-lineupd.sock",
        ])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let beat = try await newestHeartbeat(lab)
        #expect(beat["lineupd_reachable"] as? Bool == false)
        #expect((beat["lineupd_problem"] as? String)?.contains("lineupd is not running") == true, "\(beat)")
        #expect(beat["session_id"] is NSNull)
        // Without --name the station is named by its host name.
        var host = [CChar](repeating: 0, count: 256)
        #expect(gethostname(&host, 255) == 0)
        #expect(beat["station_name"] as? String == String(cString: host))
        // Append-only as the rest of the store: a station inserts, it neither reads nor rewrites.
        let station = try await LabStore.connect(lab.station)
        await #expect(throws: LabStoreError.self) {
            try await station.execute("SELECT count(*) FROM store.station_heartbeat")
        }
        await #expect(throws: LabStoreError.self) {
            try await station.execute("UPDATE store.station_heartbeat SET station_name = 'x'")
        }
        await station.close()
    }

    /// lineup-lab's API over HTTP: login required, any role reads, and a station gone silent
    /// for more than 3 × its interval is shown as last seen (virtual time on the page's side).
    @Test func theLabPageListsStationsBehindALogin() async throws {
        guard let server = try await TestServer.startOrSkip("theLabPageListsStationsBehindALogin") else { return }
        let lab = try await server.makeLab()
        let (directory, log) = try emptyStationLog()
        let run = try runSync([
            "--once", "--log", log, "--connection", try lab.stationFile(in: directory), "--socket",
            directory + "/no-lineupd.sock", "--name", "bench-c", "--interval", "60",
        ])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let received = try #require(
            Double(
                try await value(
                    "SELECT extract(epoch FROM received_at)::text FROM station_heartbeats", as: lab.researcher)))

        let users = try UserStore(path: directory + "/users.db", create: true, cost: 4)
        try users.add(name: "reader", role: .researcher, password: "reader-password")
        try users.add(name: "helper", role: .assistant, password: "helper-password")
        let clock = Mutex<Double>(received + 10)
        let state = LabState(users: users, connection: lab.researcher, wallClock: { clock.withLock { $0 } })
        let app = Application(router: LabPage.router(state: state))
        try await app.test(.router) { client in
            let refused = try await client.execute(uri: "/api/stations", method: .get)
            #expect(refused.status == .unauthorized)
            let page = try await client.execute(uri: "/", method: .get)
            #expect(page.status == .seeOther && page.headers[.location] == "/login")
            let wrong = try await labLogin(client, "reader", "not-the-password")
            #expect(wrong.status == .unauthorized && wrong.cookie == nil)

            for (name, password) in [("reader", "reader-password"), ("helper", "helper-password")] {
                let login = try await labLogin(client, name, password)
                let cookie = try #require(login.cookie, "\(name) could not log in")
                clock.withLock { $0 = received + 10 }
                var reply = try await stations(client, cookie: cookie)
                var row = try #require(reply.stations.first)
                #expect(reply.stations.count == 1)
                #expect(row.name == "bench-c" && row.reachable && row.lineupdReachable == false)
                #expect(row.behindRows == 0)
                // 3 × 60 s is the limit: inside it still reachable, past it last seen.
                clock.withLock { $0 = received + 179 }
                #expect(try await stations(client, cookie: cookie).stations.first?.reachable == true)
                clock.withLock { $0 = received + 181 }
                reply = try await stations(client, cookie: cookie)
                row = try #require(reply.stations.first)
                #expect(!row.reachable)
                #expect(row.lastSeen == ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: received)))
                #expect(abs((row.secondsSinceSeen ?? 0) - 181) < 0.001)
                #expect(reply.rule.contains("the project's rule"))
            }
            // A station whose log reached the store but that never sent a heartbeat: never seen.
            let station = try await LabStore.connect(lab.station)
            try await station.execute("INSERT INTO store.station (id, mono_ns, wall_ns) VALUES ('lone', 0, 0)")
            await station.close()
            let reader = try #require(try await labLogin(client, "reader", "reader-password").cookie)
            let both = try await stations(client, cookie: reader).stations
            #expect(both.map(\.id).last == "lone" && both.count == 2)
            #expect(both.last?.name == nil && both.last?.reachable == false && both.last?.lastSeen == nil)
            // The page and its script come from the binary, under the station page's CSP.
            let login = try #require(try await labLogin(client, "reader", "reader-password").cookie)
            let html = try await client.execute(uri: "/", method: .get, headers: [.cookie: login])
            #expect(html.status == .ok && String(buffer: html.body).contains("/static/lab.js"))
            #expect(html.headers[.contentSecurityPolicy]?.contains("default-src 'self'") == true)
        }
    }

    /// Bad input to lineup-lab: one line naming what is wrong and where, exit 1, no server.
    @Test func lineupLabRefusesBadInputInOneLine() throws {
        let binary = try #require(builtProduct("lineup-lab"), "lineup-lab is not built: run `swift build`")
        let (directory, _) = try emptyStationLog()
        let missing = try runTool(binary, ["--connection", directory + "/none.conf", "--port", "1"])
        #expect(missing.status == 1)
        #expect(missing.stderr == "lineup-lab: connection file \(directory)/none.conf: No such file or directory\n")
        let conf = directory + "/page.conf"
        FileManager.default.createFile(
            atPath: conf, contents: Data("host = /tmp\ndatabase = lab\nuser = u\npassword = pw-secret\n".utf8),
            attributes: [.posixPermissions: 0o644])
        let open = try runTool(binary, ["--connection", conf, "--port", "1"])
        #expect(open.status == 1 && open.stderr.contains("chmod 600 \(conf)") && !open.stderr.contains("pw-secret"))
        chmod(conf, 0o600)
        let noUsers = try runTool(binary, ["--connection", conf, "--users", directory + "/users.db", "--port", "1"])
        #expect(noUsers.status == 1 && noUsers.stdout.isEmpty)
        #expect(
            noUsers.stderr.hasSuffix("for the lab's page, with --users \(directory)/users.db\n"), "\(noUsers.stderr)")
        #expect(noUsers.stderr.split(separator: "\n").count == 1)
    }

    /// systemd/lineup-lab.service as systemd reads it, pointed at this build's lineup-lab.
    @Test func theLabPagesUnitVerifiesAndIsHardened() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") else {
            Issue.record("systemd-analyze is missing: install Debian's systemd package (.ci/run does)")
            return
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let binary = try #require(builtProduct("lineup-lab"), "lineup-lab is not built: run `swift build`")
        let text = try String(
            contentsOf: root.appendingPathComponent("systemd/lineup-lab.service"), encoding: .utf8)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("unit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let unit = directory.appendingPathComponent("lineup-lab.service").path
        try text.replacingOccurrences(of: "/usr/local/bin/lineup-lab", with: binary)
            .write(toFile: unit, atomically: true, encoding: .utf8)
        let verify = try runTool("/usr/bin/systemd-analyze", ["verify", unit])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        let security = try runTool("/usr/bin/systemd-analyze", ["security", "--offline=true", unit])
        let line = (security.stdout + security.stderr).split(separator: "\n").first {
            $0.contains("Overall exposure level")
        }
        let figure = line.flatMap { $0.split(separator: ":").last?.split(separator: " ").first }.flatMap {
            Double($0)
        }
        let exposure = try #require(figure, "no exposure figure in: \(security.stdout)")
        #expect(exposure <= 1.5, "\(security.stdout)")
        #expect(text.contains("LoadCredential=lab-page.conf:/etc/lineup/lab-page.conf"))
        #expect(!text.contains("password"))
    }
}

/// Runs a program to its end, its output read whole.
func runTool(_ path: String, _ arguments: [String]) throws -> SyncRun {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return SyncRun(
        status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errData, as: UTF8.self))
}

struct LabLogin {
    var status: HTTPResponse.Status
    var cookie: String?
}

func labLogin(_ client: some TestClientProtocol, _ name: String, _ password: String) async throws -> LabLogin {
    let response = try await client.execute(
        uri: "/api/login", method: .post, headers: [.origin: "http://localhost", .contentType: "application/json"],
        body: ByteBuffer(string: #"{"name":"\#(name)","password":"\#(password)"}"#))
    let cookie = response.headers[.setCookie].map { String($0.split(separator: ";")[0]) }
    return LabLogin(status: response.status, cookie: response.status == .ok ? cookie : nil)
}

func stations(_ client: some TestClientProtocol, cookie: String) async throws -> LabStationsReply {
    let response = try await client.execute(uri: "/api/stations", method: .get, headers: [.cookie: cookie])
    #expect(response.status == .ok, "\(String(buffer: response.body))")
    return try JSONDecoder().decode(LabStationsReply.self, from: Data(String(buffer: response.body).utf8))
}
