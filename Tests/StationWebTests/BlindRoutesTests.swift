import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import SessionLog
import StationControl
import StationWeb
import Testing
import TrainingEngine
import WebAccounts

/// Issue 32: while a double-blind session runs under a lineupd (its lock held), every route of
/// the page that reads the log says so for every role, naming the session and when it is
/// readable, and none sends its seed, its trials or a sample of its layouts. The routes are
/// taken from StationWeb's sources, so a new route must be placed in one of the lists below.
@Suite struct BlindRoutesTests {
    /// Every `router.get("...")` path StationWeb serves.
    static func getRoutes() throws -> [String] {
        let directory = packageRoot.appendingPathComponent("Sources/StationWeb")
        var routes: [String] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasSuffix(".swift") {
            let text = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
            for part in text.components(separatedBy: "router.get(\"").dropFirst() {
                routes.append(String(part.prefix { $0 != "\"" }))
            }
        }
        return routes.sorted()
    }

    /// Routes answered by lineupd (its own blinding: BlindPageTests) or from the binary.
    static let notTheLog: Set = [
        "/", "/login", "/static/app.js", "/static/login.js", "/static/app.css", "/static/screens.js",
        "/static/screens.css", "/api/me", "/api/status", "/api/layout", "/api/events", "/api/programs", "/api/health",
        "/manifest.webmanifest", "/sw.js", "/offline.html", "/static/icon.svg", "/static/field.js", "/static/field.css",
    ]
    /// Routes that answer with the rest and say in a field what is withheld.
    static let answeredWithWhy: Set = ["/api/dogs", "/api/samples", "/api/day"]
    /// Routes that read nothing of the log while it runs (the sitting's queue: its dogs' next
    /// steps are left out then) and hold nothing of a layout for any role.
    static let queueOnly: Set = ["/api/queue"]
    /// Routes that name a session (its dog, step and start, which every refusal names too) and
    /// nothing of its trials: answered while it runs, asked with its id.
    static let namesOnly: Set = ["/api/session/name"]

    @Test func everyLogRouteSaysARunningDoubleBlindSessionIsWithheld() async throws {
        let log = try ScreensTests.filledLog()
        let reader = log.reader
        let dog = try reader.resolveDog("Aino")
        let ended = try #require(try reader.sessions().first).id
        let samples = try reader.samples()
        let label = try #require(samples.first).label
        let seed: UInt64 = 8_675_309_771
        let running = SessionRecord(
            dogId: UUID(uuidString: dog)!, phase: "phase-3", step: "1", mode: .doubleBlind,
            settings: #"{"seed":"\#(seed)","samples":"\#(label)"}"#)
        let now = LogTime.now()
        let trial = TrialRecord(
            sessionId: running.id, number: 1, seed: seed,
            layout: samples.prefix(2).enumerated().map { i, s in
                StationSlot(station: i + 1, sampleId: UUID(uuidString: s.id), kind: i == 0 ? .target : .control)
            }, outcome: .hit, indicatedStation: 1, started: now, ended: now)
        let lock = try LogLock(logPath: log.path)
        try log.append([running, trial])
        let short = String(running.id.uuidString.lowercased().prefix(8))

        let fill: [String: String] = ["{dog}": "Aino", "{sample}": label, "{session}": ended]
        let routes = try Self.getRoutes()
        #expect(routes.contains("/api/trials") && routes.contains("/api/sessions/{session}"), "\(routes)")
        let state = WebState(users: try makeUsers(), link: AddingLink(), logPath: log.path)
        // A dog queued for later with the running session's sample: no role but the trainer's
        // and admin's is sent the queue's samples; nobody its next step while the session runs.
        _ = try state.users.enqueue(
            QueuedEntry(
                id: "q-1", entry: #"{"dog":"Aino","program":"study","samples":["\#(label)"]}"#, by: "trainer1",
                added: 0))
        try await Application(router: WebApp.router(state: state)).test(.router) { client in
            var pages: [Page] = []
            for name in ["trainer1", "admin1", "researcher1", "assistant1", "handler1"] {
                pages.append(try #require(try await client.login(name).1))
            }
            for route in routes where Self.queueOnly.contains(route) {
                for (n, page) in pages.enumerated() {
                    let response = try await client.execute(uri: route, method: .get, headers: page.getHeaders)
                    let body = text(response.body)
                    #expect(response.status == .ok && body.contains(#""dog":"Aino""#), "\(route): \(body.prefix(200))")
                    #expect(
                        !body.contains(#""next""#) && body.contains("chosen from its progress when it starts"),
                        "\(body)")
                    for secret in ["\(seed)", trial.id.uuidString.lowercased()] + (n < 2 ? [] : [label]) {
                        #expect(!body.contains(secret), "\(route) sent \(secret) to \(n)")
                    }
                }
            }
            for route in routes where Self.namesOnly.contains(route) {
                for page in pages {
                    let path = route + "?id=" + running.id.uuidString.lowercased()
                    let response = try await client.execute(uri: path, method: .get, headers: page.getHeaders)
                    let body = text(response.body)
                    #expect(response.status == .ok && body.contains(#""dog":"Aino""#), "\(path): \(body.prefix(200))")
                    for secret in ["\(seed)", trial.id.uuidString.lowercased(), label] {
                        #expect(!body.contains(secret), "\(path) sent \(secret)")
                    }
                }
            }
            for route in routes
            where !Self.notTheLog.contains(route) && !Self.namesOnly.contains(route) && !Self.queueOnly.contains(route)
            {
                var path = route
                for (key, value) in fill { path = path.replacingOccurrences(of: key, with: value) }
                if path == "/api/stats" { path += "?by=station" }
                if path == "/api/export" { path += "?what=sessions" }
                for page in pages {
                    let response = try await client.execute(uri: path, method: .get, headers: page.getHeaders)
                    let body = text(response.body)
                    if Self.answeredWithWhy.contains(route) {
                        #expect(response.status == .ok, "\(path): \(body.prefix(200))")
                    } else {
                        #expect(response.status == .forbidden, "\(path): \(body.prefix(200))")
                        #expect(body.contains(#""code":"blind""#), "\(path): \(body.prefix(200))")
                    }
                    #expect(
                        body.contains("double-blind session is running (session \(short)"),
                        "\(path): \(body.prefix(300))")
                    #expect(body.contains("withheld until it ends"), "\(path): \(body.prefix(300))")
                    for secret in ["\(seed)", trial.id.uuidString.lowercased()] {
                        #expect(!body.contains(secret), "\(path) sent \(secret)")
                    }
                }
            }
            // Ended: the same routes answer again (so the checks above could fail).
            try log.append([SessionEnd(sessionId: running.id, how: .ended, detail: "ended by the trainer")])
            let trials = try await client.execute(uri: "/api/trials", method: .get, headers: pages[0].getHeaders)
            #expect(trials.status == .ok)
            #expect(text(trials.body).contains(trial.id.uuidString.lowercased()))
        }
        withExtendedLifetime(lock) {}
    }

    /// Every `router.post("...")` path StationWeb serves.
    static func postRoutes() throws -> Set<String> {
        let directory = packageRoot.appendingPathComponent("Sources/StationWeb")
        var routes: Set<String> = []
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasSuffix(".swift") {
            let text = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
            for part in text.components(separatedBy: "router.post(\"").dropFirst() {
                routes.insert(String(part.prefix { $0 != "\"" }))
            }
        }
        return routes
    }

    /// The POST routes whose replies, sent to the handler's page of a running double-blind
    /// block, are checked for its layouts, and where.
    static let postsCheckedInABlindBlock: [String: String] = [
        "/api/session/start": "BlindPageTests.theHandlersPageNeverReceivesTheLayout",
        "/api/session/resume": "BlindPageTests.aResumedDoubleBlindBlockTellsTheHandlersPageNothingOfItsLayouts",
        "/api/ready": "BlindPageTests.aResumedDoubleBlindBlockTellsTheHandlersPageNothingOfItsLayouts",
        "/api/session/end": "BlindPageTests.aResumedDoubleBlindBlockTellsTheHandlersPageNothingOfItsLayouts",
    ]
    /// The POST routes that answer with nothing of a session's layouts: the login's own answer,
    /// what was written (a dog, a note, the guess the handler entered), or lineupd's word that
    /// the press or abort was taken; the sitting's queue (an entry, with no next step while a
    /// double-blind session runs: `queueOnly` above), and its start, refused while a double-blind
    /// session runs before anything is read (`refuseWhileBlind`), else lineupd's answer to the
    /// start, the type `/api/session/start` answers with.
    static let postsWithoutLayouts: Set = [
        "/api/login", "/api/logout", "/api/dogs", "/api/dogs/{dog}/note", "/api/sessions/{session}/note", "/api/guess",
        "/api/press", "/api/abort", "/api/queue", "/api/queue/remove", "/api/queue/start",
    ]

    /// Every POST route is in one of the two lists above (a new one must be placed), and those
    /// checked in a blind block include the start and the resume of a session.
    @Test func everyPostRouteIsPlacedAndTheResumeIsCheckedInABlindBlock() throws {
        let routes = try Self.postRoutes()
        #expect(routes.contains("/api/session/resume") && routes.contains("/api/session/start"), "\(routes)")
        #expect(
            routes == Set(Self.postsCheckedInABlindBlock.keys).union(Self.postsWithoutLayouts),
            "placed in neither list: \(routes.subtracting(Self.postsCheckedInABlindBlock.keys).subtracting(Self.postsWithoutLayouts)); listed but not served: \(Set(Self.postsCheckedInABlindBlock.keys).union(Self.postsWithoutLayouts).subtracting(routes))"
        )
    }

    /// A role refused names it with its article: "an assistant", "an admin", "a researcher".
    @Test func aRoleRefusalReadsAsASentence() async throws {
        let link = CountingLink()
        let state = WebState(users: try makeUsers(), link: link)
        try await Application(router: WebApp.router(state: state)).test(.router) { client in
            let assistant = try #require(try await client.login("assistant1").1)
            let researcher = try #require(try await client.login("researcher1").1)
            let start = try await client.post("/api/session/start", json: "{}", headers: assistant.postHeaders)
            #expect(text(start.body).contains("an assistant may not start a session"), "\(text(start.body))")
            let ended = try await client.post("/api/session/end", json: "{}", headers: researcher.postHeaders)
            #expect(text(ended.body).contains("a researcher may not end a session"), "\(text(ended.body))")
            #expect(link.received.isEmpty)
        }
    }
}
