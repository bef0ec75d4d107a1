import Figures
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LineupBench
import NIOCore
import ReadingRows
import Readings
import SessionLog
import StationControl
import StationWeb
import Synchronization
import Testing
import TrainingEngine
import WebAccounts

/// A stand-in lineupd that takes additions (each answered with an id) and records what
/// reached it, with the fields sent; anything else it does not answer.
final class AddingLink: StationLink {
    private let calls = Mutex<[String]>([])
    var received: [String] { calls.withLock { $0 } }

    func send<C: ControlCall>(_ call: C) async throws(ControlClientError) -> C.Reply {
        let body = (try? JSONEncoder().encode(call)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        calls.withLock { $0.append(C.name + " " + body) }
        if let reply = Added(id: "new-id") as? C.Reply { return reply }
        throw .notRunning(path: "/nowhere")
    }

    func watchBlocking(_ onEvent: (WatchEvent) -> Bool) throws(ControlClientError) {
        throw .notRunning(path: "/nowhere")
    }
}

/// The screens that read the log, through the router, against a log filled by LogFiller
/// (2 dogs, 3 automated sessions each, ended). Each figure is compared with what the same
/// SessionLog function returns, as lineupctl prints it with --json.
@Suite struct ScreensTests {
    static func filledLog() throws -> SessionLog {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("screens-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let log = try SessionLog(path: directory.appendingPathComponent("lineup.db").path)
        var filler = LogFiller()
        filler.dogs = 2
        filler.sessionsPerDog = 3
        filler.trialsPerSession = 6
        filler.eventsPerTrial = 4
        _ = try filler.fill(log)
        return log
    }

    static func json<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    func app(_ log: SessionLog, link: any StationLink = AddingLink()) throws -> some ApplicationProtocol {
        let state = WebState(users: try makeUsers(), link: link, logPath: log.path)
        return Application(router: WebApp.router(state: state))
    }

    @Test func theDogsListAndADogsPageCarryLineupctlsFigures() async throws {
        let log = try Self.filledLog()
        let reader = log.reader
        try await app(log).test(.router) { client in
            let page = try #require(try await client.login("trainer1").1)
            let dogs = try await client.execute(uri: "/api/dogs", method: .get, headers: page.getHeaders)
            #expect(dogs.status == .ok)
            #expect(text(dogs.body) == (try Self.json(try reader.dogs())))
            let aino = try await client.execute(uri: "/api/dogs/Aino", method: .get, headers: page.getHeaders)
            #expect(aino.status == .ok, "\(text(aino.body))")
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(buffer: aino.body)) as? [String: Any])
            let id = try reader.resolveDog("Aino")
            let progress = try JSONSerialization.data(withJSONObject: object["progress"] as Any, options: .sortedKeys)
            let expected = try JSONSerialization.data(
                withJSONObject: try JSONSerialization.jsonObject(
                    with: Data(Self.json(reader.progress(dogId: id)).utf8)),
                options: .sortedKeys)
            #expect(progress == expected, "the dog page's progress is not lineupctl progress's")
            let sessions = try #require(object["sessions"] as? [[String: Any]])
            #expect(sessions.count == 3)
            #expect(sessions.allSatisfy { ($0["results"] as? [String: Any])?["trials"] as? Int == 6 })
            let unknown = try await client.execute(uri: "/api/dogs/Nobody", method: .get, headers: page.getHeaders)
            #expect(unknown.status == .notFound)
            #expect(text(unknown.body).contains("Nobody"), "\(text(unknown.body))")
        }
    }

    @Test func aDogIsAddedOverTheSocketAndNeverByAResearcher() async throws {
        let log = try Self.filledLog()
        let link = AddingLink()
        try await app(log, link: link).test(.router) { client in
            let researcher = try #require(try await client.login("researcher1").1)
            let refused = try await client.post(
                "/api/dogs", json: #"{"name":"Rex"}"#, headers: researcher.postHeaders)
            #expect(refused.status == .forbidden)
            #expect(text(refused.body).contains("a researcher may not add a dog"))
            #expect(link.received.isEmpty)
            let trainer = try #require(try await client.login("trainer1").1)
            let added = try await client.post(
                "/api/dogs", json: #"{"name":"Rex","born":"2022-01-02","notes":"shy of crowds"}"#,
                headers: trainer.postHeaders)
            #expect(added.status == .ok, "\(text(added.body))")
            #expect(text(added.body) == #"{"id":"new-id"}"#)
            #expect(link.received.count == 1)
            #expect(link.received.first?.hasPrefix("dog-add ") == true)
            #expect(link.received.first?.contains(#""name":"Rex""#) == true)
            #expect(link.received.first?.contains("shy of crowds") == true)
            let bad = try await client.post("/api/dogs", json: #"{"born":"2022-01-02"}"#, headers: trainer.postHeaders)
            #expect(bad.status == .badRequest)
            #expect(text(bad.body).contains("name"), "\(text(bad.body))")
            #expect(link.received.count == 1)
        }
    }

    /// Every request that changes anything, from a researcher's account: refused by the
    /// server, and nothing reaches lineupd.
    @Test func aResearcherChangesNothing() async throws {
        let log = try Self.filledLog()
        let link = AddingLink()
        let session = try #require(try log.reader.sessions().first).id
        try await app(log, link: link).test(.router) { client in
            let researcher = try #require(try await client.login("researcher1").1)
            let changes: [(String, String)] = [
                ("/api/dogs", #"{"name":"Rex"}"#),
                ("/api/sessions/\(session)/note", #"{"text":"good"}"#),
                ("/api/session/start", #"{"dog":"Aino","program":"study","step":"indicate/1"}"#),
                ("/api/session/end", #"{"suggestions":"x"}"#),
                ("/api/ready", "{}"), ("/api/abort", "{}"), ("/api/press", #"{"button":"clicker"}"#),
            ]
            for (path, body) in changes {
                let response = try await client.post(path, json: body, headers: researcher.postHeaders)
                #expect(response.status == .forbidden, "\(path): \(response.status)")
                #expect(text(response.body).contains("a researcher may not"), "\(path): \(text(response.body))")
            }
            #expect(link.received.isEmpty, "a researcher's request reached lineupd: \(link.received)")
        }
    }

    @Test func aSessionsCommentGoesOverTheSocket() async throws {
        let log = try Self.filledLog()
        let link = AddingLink()
        let session = try #require(try log.reader.sessions().first).id
        try await app(log, link: link).test(.router) { client in
            let trainer = try #require(try await client.login("trainer1").1)
            let noted = try await client.post(
                "/api/sessions/\(session)/note", json: #"{"text":"calmer after the break"}"#,
                headers: trainer.postHeaders)
            #expect(noted.status == .ok, "\(text(noted.body))")
            #expect(link.received.count == 1)
            #expect(link.received.first?.hasPrefix("session-note ") == true)
            #expect(link.received.first?.contains(session) == true)
            #expect(link.received.first?.contains("calmer after the break") == true)
        }
    }

    @Test func samplesTheirDetailsAndUsage() async throws {
        let log = try Self.filledLog()
        let reader = log.reader
        try await app(log).test(.router) { client in
            let page = try #require(try await client.login("assistant1").1)
            let all = try await client.execute(uri: "/api/samples", method: .get, headers: page.getHeaders)
            #expect(text(all.body) == (try Self.json(try reader.samples())))
            let targets = try await client.execute(
                uri: "/api/samples?kind=target", method: .get, headers: page.getHeaders)
            #expect(text(targets.body) == (try Self.json(try reader.samples(kind: .target))))
            let label = try #require(try reader.samples(kind: .target).first).label
            let one = try await client.execute(uri: "/api/samples/\(label)", method: .get, headers: page.getHeaders)
            #expect(text(one.body) == (try Self.json(try reader.sample(id: reader.resolveSample(label)))))
            #expect(try reader.sample(id: reader.resolveSample(label)).usedBy.isEmpty == false)
            // The page percent-encodes a label in the path (a space, an accent): it is decoded.
            let encoded = label.utf8.map { String(format: "%%%02X", $0) }.joined()
            let decoded = try await client.execute(
                uri: "/api/samples/\(encoded)", method: .get, headers: page.getHeaders)
            #expect(text(decoded.body) == text(one.body))
            let wrongKind = try await client.execute(
                uri: "/api/samples?kind=tube", method: .get, headers: page.getHeaders)
            #expect(wrongKind.status == .badRequest)
            #expect(text(wrongKind.body).contains("kind 'tube'"))
            let missing = try await client.execute(uri: "/api/samples/X-999", method: .get, headers: page.getHeaders)
            #expect(missing.status == .notFound)
        }
    }

    @Test func theResearchersStatsReportAndExports() async throws {
        let log = try Self.filledLog()
        let reader = log.reader
        try await app(log).test(.router) { client in
            let page = try #require(try await client.login("researcher1").1)
            for by in StatsGrouping.allCases {
                let stats = try await client.execute(
                    uri: "/api/stats?by=\(by.rawValue)", method: .get, headers: page.getHeaders)
                #expect(stats.status == .ok)
                #expect(text(stats.body) == (try Self.json(try reader.stats(by: by))), "stats by \(by)")
            }
            let bad = try await client.execute(uri: "/api/stats?by=week", method: .get, headers: page.getHeaders)
            #expect(bad.status == .badRequest)
            let report = try await client.execute(uri: "/api/report", method: .get, headers: page.getHeaders)
            #expect(report.status == .ok)
            #expect(text(report.body).hasPrefix("<!doctype html") || text(report.body).hasPrefix("<!DOCTYPE html"))
            #expect(text(report.body).contains("Aino"))
            let export = try await client.execute(
                uri: "/api/export?what=trials&format=csv", method: .get, headers: page.getHeaders)
            #expect(export.status == .ok)
            #expect(export.headers[.contentDisposition] == #"attachment; filename="trials.csv""#)
            let rows = text(export.body).split(separator: "\r\n")
            #expect(rows.count == 1 + (try reader.trials().count))
            let jsonl = try await client.execute(
                uri: "/api/export?what=sessions&format=jsonl", method: .get, headers: page.getHeaders)
            #expect(text(jsonl.body).split(separator: "\n").count == 6)
            let wrong = try await client.execute(uri: "/api/export?what=dog", method: .get, headers: page.getHeaders)
            #expect(wrong.status == .badRequest)
            #expect(text(wrong.body).contains("what 'dog'"))
            let trials = try await client.execute(uri: "/api/trials", method: .get, headers: page.getHeaders)
            #expect(text(trials.body) == (try Self.json(try reader.trials(LogFilter.newest, limit: 500))))
        }
    }

    /// While a double-blind session is open in the log, no new route hands any account a
    /// layout or a station of a trial; once it ends they answer again.
    @Test func noLayoutLeavesWhileADoubleBlindSessionRuns() async throws {
        let log = try Self.filledLog()
        let reader = log.reader
        let dog = try reader.resolveDog("Aino")
        let ended = try #require(try reader.sessions().first).id
        let labels = try reader.samples().map(\.label)
        let blindRoutes = [
            "/api/sessions/\(ended)", "/api/trials", "/api/stats?by=station", "/api/stats?by=sample", "/api/report",
            "/api/export?what=trials", "/api/export?what=events", "/api/export?what=guesses", "/api/sessions",
            "/api/dogs/Aino",
            "/api/stats?by=dog", "/api/stats?by=session", "/api/samples/\(try #require(labels.first))",
        ]
        try await app(log).test(.router) { client in
            let trainer = try #require(try await client.login("trainer1").1)
            let admin = try #require(try await client.login("admin1").1)
            let researcher = try #require(try await client.login("researcher1").1)
            let pages = [trainer, admin, researcher]
            // Before: the routes answer, and those with trials' layouts do name samples, so
            // the check below can fail.
            for path in blindRoutes {
                let response = try await client.execute(uri: path, method: .get, headers: trainer.getHeaders)
                #expect(response.status == .ok, "\(path)")
            }
            for path in ["/api/sessions/\(ended)", "/api/trials", "/api/report", "/api/export?what=trials"] {
                let response = try await client.execute(uri: path, method: .get, headers: trainer.getHeaders)
                #expect(labels.contains { text(response.body).contains($0) }, "\(path) named no sample")
            }
            // Running: a lineupd holds the log's lock (the reader's rule, LiveDoubleBlind).
            let lock = try LogLock(logPath: log.path)
            defer { withExtendedLifetime(lock) {} }
            let running = SessionRecord(dogId: UUID(uuidString: dog)!, mode: .doubleBlind)
            try log.append([running])
            for page in pages {
                for path in blindRoutes {
                    let response = try await client.execute(uri: path, method: .get, headers: page.getHeaders)
                    #expect(response.status == .forbidden, "\(path)")
                    #expect(text(response.body).contains("double-blind session is running"), "\(path)")
                    for label in labels { #expect(!text(response.body).contains(label), "\(path) sent \(label)") }
                }
            }
            try log.append([SessionEnd(sessionId: running.id, how: .ended, detail: "ended by the trainer")])
            let after = try await client.execute(uri: "/api/trials", method: .get, headers: trainer.getHeaders)
            #expect(after.status == .ok)
        }
    }

    @Test func healthSaysWhenLineupdDoesNotAnswer() async throws {
        let log = try Self.filledLog()
        try await app(log, link: CountingLink()).test(.router) { client in
            let page = try #require(try await client.login("researcher1").1)
            let health = try await client.execute(uri: "/api/health", method: .get, headers: page.getHeaders)
            #expect(health.status == .serviceUnavailable)
            #expect(text(health.body).contains("not-live"))
        }
    }
}

extension LogFilter {
    static var newest: LogFilter {
        var filter = LogFilter()
        filter.newestFirst = true
        return filter
    }
}
