import Foundation
import GRDB
import Glibc
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LabStore
import LabWeb
import SessionLog
import StationControl
import StationWeb
import Synchronization
import Testing
import TrainingEngine
import WebAccounts

/// Issue 34, "one visibility rule", across every surface: a real lineupd runs a double-blind
/// block; while it runs, every surface is read on the station and on the lab store, each as the
/// viewer it serves (`Surface.viewer`), and none may hold a fact the rule (`Visibility`) withholds
/// from that viewer. The probes for each fact come from the log itself (the seed, the trial and
/// event ids, a guess, a note) and from the shapes a layout, an outcome or a station's level
/// take in text and JSON. Built from the rule's table: every viewer has a surface, every fact a
/// probe (an exhaustive switch), so a new fact or viewer cannot be left out. Once the session
/// has ended the same probes find its facts (so each check could fail).
///
/// The per-surface suites check more of each surface's words (LiveDoubleBlindReadingTests: every
/// `lineupctl` command, its exit status and its sentence; BlindRoutesTests: every page route for
/// every role; BlindingTests: a predictor on the handler's bytes; LabOwnershipTests: the rows
/// lineup-sync holds back); this one checks each surface's bytes against the rule.
@Suite(.serialized, .ownThreads) struct BlindSurfacesTests {
    /// Where a surface's bytes come from.
    enum Surface: String, CaseIterable {
        /// `lineupctl watch` (lineup-web's live stream and lineup-alerts read the same lines).
        case watch
        /// `lineupctl status`, its JSON, `ready`'s answers, the handler's `layout`.
        case handlerCommands
        /// The page's live routes for a handler's account (`/api/status`, `/api/layout`).
        case handlerPage
        /// `lineupctl layout --assistant`.
        case assistantLayout
        /// The station's readings of its log (`lineupctl` on `--db`).
        case stationReadings
        /// The page's routes that read the log, for every role.
        case stationPage
        /// The lab store's readings (`lineupctl ... --lab`).
        case labReadings
        /// The heartbeat in the store, and lineup-lab's `/api/stations` that shows it.
        case heartbeat

        var viewer: Viewer {
            switch self {
            case .watch, .handlerCommands, .handlerPage: .handler
            case .assistantLayout: .assistant
            case .stationReadings, .stationPage: .researcher
            case .labReadings: .labReader
            case .heartbeat: .heartbeat
            }
        }
    }

    /// What the log holds of the running session, read from the file (as any member of the
    /// station's group could).
    struct Secrets {
        var session: String
        var seed: UInt64
        var trialIds: [String]
        var eventIds: [String]
        var guessIds: [String]
        var note: String

        /// Whether `bytes` hold `fact` of the session; each probe is named.
        func found(_ fact: SessionFact, in bytes: String) -> [String] {
            func matches(_ pattern: String) -> Bool {
                bytes.range(of: pattern, options: .regularExpression) != nil
            }
            var probes: [(String, Bool)]
            switch fact {
            case .layout:
                probes = [
                    (
                        "a layout as STATION:KIND",
                        matches(#"\b[0-9A-E]:(target|control|blank|distractor|T-7|C-[0-9])\b"#)
                    ),
                    ("a JSON layout", matches(#""layout"\s*:\s*\[\s*\{"#)),
                ]
            case .outcome:
                probes = [
                    ("a trial id", trialIds.contains { bytes.contains($0) }),
                    ("an outcome in JSON", matches(#""outcome"\s*:\s*"(hit|miss|false-alert|correct-rejection)""#)),
                    (
                        "a trial line's outcome",
                        matches(#"indication: [^ ]+ .*(hit|miss|false-alert|correct-rejection)"#)
                    ),
                ]
            case .seed: probes = [("the seed", bytes.contains("\(seed)"))]
            case .searchEvent:
                probes = [
                    ("an event id", eventIds.contains { bytes.contains($0) }),
                    (
                        "a watch line's station or detail",
                        Self.watchLines(bytes).contains(where: Self.namesWhereTheNoseWent)
                    ),
                ]
            case .faultStation: probes = [("a sensor fault's station", matches(#"sensor [a-z-]+ at station"#))]
            case .holdingNow: probes = [("the state holding", matches(#""state"\s*:\s*"holding""#))]
            case .guess: probes = [("a guess id", guessIds.contains { bytes.contains($0) })]
            case .stationInputLevel: probes = [("a station's input level", matches(#""isStation"\s*:\s*true"#))]
            case .sampleUse: probes = [("a sample's uses", matches(#""uses"\s*:\s*[1-9]|used in [1-9]"#))]
            case .note: probes = [("the session's note", bytes.contains(note))]
            case .dog: probes = [("the session's dog", matches(#""dog"\s*:\s*"Rex""#))]
            case .session: probes = [("the session's id", bytes.contains(session))]
            case .progress:
                probes = [("a trial's number", matches(#"trial [0-9]+ of [0-9]+|"trialsDone"\s*:\s*[0-9]"#))]
            }
            return probes.filter(\.1).map(\.0)
        }

        static func watchLines(_ bytes: String) -> [WatchEvent] {
            bytes.split(separator: "\n").compactMap { try? WatchEvent(line: String($0)) }
        }

        /// A station event other than a fault or a cue with its station or detail.
        static func namesWhereTheNoseWent(_ event: WatchEvent) -> Bool {
            guard case .station(let e) = event, e.kind != .fault, e.kind != .cue else { return false }
            return e.station != nil || e.detail != nil
        }
    }

    /// The readings run on both stores, with the option that picks the store after them.
    static let readings: [[String]] =
        [
            ["stats", "--by", "station"], ["stats", "--by", "session"], ["stats", "--by", "sample"],
            ["stats", "--json"],
            ["stats", "--guesses"], ["report"],
        ]
        + ["trials", "events", "sessions", "samples", "milestones", "dogs", "guesses"].map { ["export", "--what", $0] }
    /// Readings of the station's log only (no `--lab`).
    static let stationOnly: [[String]] = [
        ["sessions", "--json"], ["trials", "--json"], ["events", "--json"], ["samples", "--json"], ["dogs", "--json"],
        ["progress", "--dog", "Rex", "--json"], ["verify-scoring", "--json"],
    ]

    @Test func everyViewerHasASurface() {
        #expect(Set(Surface.allCases.map(\.viewer)) == Set(Viewer.allCases))
        // Every fact is withheld from someone while the session runs, or it needs no probe.
        for fact in SessionFact.allCases
        where Viewer.allCases.allSatisfy({ Visibility.shows(fact, to: $0, in: .doubleBlindRunning) }) {
            Issue.record("\(fact) is shown to every viewer: a fact the rule need not list")
        }
    }

    @Test func noSurfaceShowsWhatTheRuleWithholdsOfARunningDoubleBlindSession() async throws {
        guard let server = try await TestServer.startOrSkip("blind surfaces") else { return }
        guard let lineupd = builtProduct("lineupd") else {
            Issue.record("lineupd is not built: run `swift build` before `swift test`")
            return
        }
        let lab = try await server.makeLab()
        let directory = NSTemporaryDirectory() + "blind-surfaces-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socket = "\(directory)/control.sock"
        let log = "\(directory)/lineup.db"
        let station = try Child(
            [lineupd, "--simulate", "--serve", "--socket", socket, "--db", log, "--speed", "30", "--no-realtime"],
            unset: ["NOTIFY_SOCKET", "LINEUP_DB", "LINEUP_SOCKET"])
        defer { station.kill(SIGTERM) }
        let client = ControlClient(path: socket, timeout: 5)
        try await waitUntil(.seconds(30), for: "lineupd to answer on \(socket)") { (try? client.status()) != nil }
        _ = try client.addDog(DogEntry(name: "Rex"))
        let labels = ["T-7", "C-1", "C-2", "C-3", "C-4", "C-5"]
        for label in labels {
            _ = try client.addSample(SampleEntry(label: label, kind: label.hasPrefix("T") ? .target : .control))
        }
        let environment = ["LINEUP_DB": log, "LINEUP_SOCKET": socket]
        var bytes: [Surface: String] = [:]
        func add(_ surface: Surface, _ text: String) { bytes[surface, default: ""] += text + "\n" }
        func run(_ surface: Surface, _ arguments: [String]) throws {
            let result = try lineupctl(arguments, environment: environment)
            add(surface, "$ lineupctl \(arguments.joined(separator: " "))\n\(result.stdout)\(result.stderr)")
        }

        // The watch stream, from before the session starts to its end.
        let watched = Mutex<[String]>([])
        let watching = Thread {
            try? ControlClient(path: socket, timeout: 5).watch { line in
                watched.withLock { $0.append(line) }
                return !line.contains(#""kind":"session-end""#)
            }
        }
        watching.start()
        try await Task.sleep(for: .milliseconds(300))

        let seed: UInt64 = 8_675_309_123
        let start = try lineupctl(
            [
                "session", "start", "--dog", "Rex", "--program", "research-5-station", "--step", "phase-3/1",
                "--trials",
                "10", "--seed", "\(seed)",
            ] + labels.flatMap { ["--sample", $0] }, environment: environment)
        #expect(start.status == 0, "\(start.stderr)")
        let session = try #require(try client.status().session)
        let note = "note-\(UUID().uuidString.prefix(8))"
        _ = try client.noteSession(SessionNoteEntry(session: session, text: note))
        let everything = try SessionLog.openReader(path: log, everything: true)
        func logged(_ sql: String) throws -> [String] {
            try everything.read { db in try String.fetchAll(db, sql: sql, arguments: [session]) }
        }
        for trial in 1...3 {
            // The handler's guess, before the trial (its reply is the handler's too).
            if let guessed = try? client.send(GuessEntry(station: "B")) {
                add(.handlerCommands, String(decoding: try JSONEncoder().encode(guessed), as: UTF8.self))
            }
            try run(.handlerCommands, ["ready"])
            try await waitUntil(.seconds(60), for: "trial \(trial) to be logged") {
                try logged("SELECT id FROM trial WHERE session_id = ?").count >= trial
            }
        }
        try run(.handlerCommands, ["status"])
        try run(.handlerCommands, ["status", "--json"])
        try run(.handlerCommands, ["layout"])
        try run(.assistantLayout, ["layout", "--assistant", "--json"])
        for reading in Self.readings + Self.stationOnly { try run(.stationReadings, reading + ["--db", log]) }
        let conf = LabReadingTests().researcherFile(lab, in: directory)
        let sync = try runSync([
            "--log", log, "--connection", try lab.stationFile(in: directory), "--once", "--socket", socket,
        ])
        #expect(sync.status == 0, "\(sync.stdout)\(sync.stderr)")
        for reading in Self.readings { try run(.labReadings, reading + ["--lab", conf]) }
        add(.heartbeat, try await value("SELECT row_to_json(h)::text FROM public.station_latest h", as: lab.researcher))
        for (surface, text) in try await pages(
            log: log, socket: socket, session: session, directory: directory, lab: lab)
        {
            add(surface, text)
        }

        let secrets = Secrets(
            session: session, seed: seed, trialIds: try logged("SELECT id FROM trial WHERE session_id = ?"),
            eventIds: try logged("SELECT id FROM event WHERE session_id = ? LIMIT 200"),
            guessIds: try logged("SELECT id FROM handler_guess WHERE session_id = ?"), note: note)
        #expect(secrets.trialIds.count >= 3 && !secrets.eventIds.isEmpty && !secrets.guessIds.isEmpty)
        add(.watch, watched.withLock { $0.joined(separator: "\n") })
        // Each surface read what it should: the station's and the page's readings say what they
        // withhold, the lab's answered, the handler's side saw the trials go by.
        for surface in [Surface.stationReadings, .stationPage] {
            #expect(bytes[surface]?.contains("withheld until it ends") == true, "\(bytes[surface] ?? "")")
        }
        #expect(bytes[.labReadings]?.contains("session_id") == true, "\(bytes[.labReadings] ?? "")")
        #expect(bytes[.watch]?.contains(#""kind":"trial""#) == true && bytes[.heartbeat]?.contains(session) == true)
        #expect(bytes[.assistantLayout]?.contains("T-7") == true, "\(bytes[.assistantLayout] ?? "")")
        // The heartbeat names neither the dog nor a sample anywhere (its station's name included).
        for word in ["Rex", "T-7"] { #expect(bytes[.heartbeat]?.contains(word) == false, "\(bytes[.heartbeat] ?? "")") }
        for surface in Surface.allCases {
            let text = try #require(bytes[surface], "\(surface) was not read")
            for fact in Visibility.withheld(from: surface.viewer) {
                let found = secrets.found(fact, in: text)
                #expect(found.isEmpty, "\(surface) (\(surface.viewer)) showed \(fact) mid-session: \(found)")
            }
        }

        // Ended: the probes find the session on the readings (so the checks above could fail).
        try client.endSession(suggestions: nil)
        var ended = ""
        for reading in [
            ["export", "--what", "trials"], ["export", "--what", "events"], ["trials"], ["stats", "--json"],
            ["export", "--what", "sessions"], ["export", "--what", "guesses"], ["samples", "--json"],
            ["session", "show", session, "--json"], ["samples", "show", "T-7", "--json"],
        ] {
            let result = try lineupctl(reading + ["--db", log], environment: environment)
            #expect(result.status == 0, "\(reading): \(result.stderr)")
            ended += result.stdout
        }
        ended += watched.withLock { $0.joined(separator: "\n") }
        for fact in [SessionFact.layout, .outcome, .seed, .guess, .sampleUse, .note, .session] {
            #expect(
                !secrets.found(fact, in: ended).isEmpty,
                "no probe of \(fact) finds it once the session has ended")
        }
    }

    /// The page's routes in process, against the real lineupd and its log: the log routes for
    /// every role (`stationPage`), the live routes for the handler (`handlerPage`); lineup-lab's
    /// `/api/stations` (`heartbeat`).
    func pages(
        log: String, socket: String, session: String, directory: String, lab: TestServer.Lab
    ) async throws -> [(Surface, String)] {
        let read = Mutex<[(Surface, String)]>([])
        @Sendable func add(_ surface: Surface, _ text: String) { read.withLock { $0.append((surface, text)) } }
        let users = try UserStore(path: directory + "/users.db", create: true, cost: 4)
        let roles: [WebRole] = [.handler, .trainer, .assistant, .researcher, .admin]
        for role in roles {
            try users.add(name: role.rawValue + "1", role: role, password: "password-\(role.rawValue)")
        }
        let state = WebState(users: users, link: SocketLink(path: socket), logPath: log)
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/StationWeb")
        var found: [String] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: sources.path) where name.hasSuffix(".swift") {
            let text = try String(contentsOf: sources.appendingPathComponent(name), encoding: .utf8)
            for part in text.components(separatedBy: "router.get(\"").dropFirst() {
                found.append(String(part.prefix { $0 != "\"" }))
            }
        }
        // The live stream is the watch lines (`watch`); the rest is the binary's own files.
        let live: Set = ["/api/status", "/api/layout", "/api/me", "/api/health", "/api/programs"]
        let routes = found.filter { $0.hasPrefix("/api/") && $0 != "/api/events" }
        try await Application(router: WebApp.router(state: state)).test(.router) { client in
            for role in roles {
                let login = try await labLogin(client, role.rawValue + "1", "password-\(role.rawValue)")
                let cookie = try #require(login.cookie, "\(role) could not log in")
                for route in routes.sorted() {
                    var path = route.replacingOccurrences(of: "{dog}", with: "Rex")
                        .replacingOccurrences(of: "{sample}", with: "T-7").replacingOccurrences(
                            of: "{session}", with: session)
                    if path == "/api/stats" { path += "?by=station" }
                    if path == "/api/export" { path += "?what=trials" }
                    if path == "/api/session/name" { path += "?id=" + session }
                    let response = try await client.execute(uri: path, method: .get, headers: [.cookie: cookie])
                    let text = "GET \(path) as \(role)\n" + String(buffer: response.body)
                    if !live.contains(route) {
                        add(.stationPage, text)
                    } else if role == .assistant && route == "/api/layout" {
                        continue  // the assistant's view: `assistantLayout`
                    } else {
                        add(.handlerPage, text)
                    }
                }
            }
        }
        let labState = LabState(users: users, connection: lab.researcher)
        try await Application(router: LabPage.router(state: labState)).test(.router) { client in
            let cookie = try #require(try await labLogin(client, "handler1", "password-handler").cookie)
            let response = try await client.execute(uri: "/api/stations", method: .get, headers: [.cookie: cookie])
            add(.heartbeat, String(buffer: response.body))
        }
        return read.withLock { $0 }
    }
}
