import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import StationControl
import StationWeb
import Testing
import TrainingEngine
import WebAccounts

/// The session's set-up and its end, as the page sends them: the Set-up screen's start (its
/// every choice reaching lineupd, a refusal in lineupd's words), and the end view's reading of
/// the session from the log and its comment (`POST /api/sessions/ID/note`).
@Suite(.serialized) struct SessionSetupTests {
    func json(_ response: TestResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]) ?? [:]
    }

    /// Against a real `lineupd --simulate --serve` and the log it writes: the body the Set-up
    /// screen sends starts the session with each choice, the end's suggestions and the comment
    /// are read back by the route the end view reads, and lineupd's refusal keeps its words.
    @Test func theSetUpStartsTheSessionAndTheEndViewReadsItBack() async throws {
        guard let station = try SimulatedStation(extra: ["--no-virtual-dog"]) else { return }
        defer { station.terminate() }
        #expect(await station.waitReady())
        _ = try station.client.addDog(DogEntry(name: "Rex"))
        _ = try station.client.addSample(SampleEntry(label: "T-1", kind: .target))
        _ = try station.client.addSample(SampleEntry(label: "C-1", kind: .control))
        let state = WebState(users: try makeUsers(), link: SocketLink(path: station.socket), logPath: station.db)
        try await Application(router: WebApp.router(state: state)).test(.router) { client in
            let page = try #require(try await client.login("trainer1").1)
            // A new dog under a name the log has: lineupd's refusal, its code and words, as the
            // page shows it beside the form.
            let refused = try await client.post(
                "/api/session/start",
                json: #"{"dog":"Rex","newDog":true,"program":"study","step":"target-scent/1","samples":["T-1"]}"#,
                headers: page.postHeaders)
            #expect(refused.status == .conflict, "\(text(refused.body))")
            #expect(text(refused.body).contains(#"a dog named \"Rex\" is already in the log"#), "\(text(refused.body))")

            // What the Set-up screen sends for a trainer-led step (no trials: the program's
            // repetitions).
            let start = try await client.post(
                "/api/session/start",
                json: #"""
                    {"dog":"Rex","program":"study","step":"target-scent/1","exercise":"1","durationSeconds":20,
                     "handler":"H-07","samples":["T-1"]}
                    """#,
                headers: page.postHeaders)
            #expect(start.status == .ok, "\(text(start.body))")
            let session = try #require(json(start)["session"] as? String)
            let end = try await client.post(
                "/api/session/end", json: #"{"suggestions":"Shorter rounds"}"#, headers: page.postHeaders)
            #expect(end.status == .ok, "\(text(end.body))")
            let noted = try await client.post(
                "/api/sessions/\(session)/note", json: #"{"text":"Calm after the car ride"}"#,
                headers: page.postHeaders)
            #expect(noted.status == .ok, "\(text(noted.body))")

            let details = try await client.execute(
                uri: "/api/sessions/\(session)", method: .get, headers: page.getHeaders)
            #expect(details.status == .ok, "\(text(details.body))")
            let d = json(details)
            #expect(d["endedHow"] as? String == "ended", "\(d)")
            #expect(d["dog"] as? String == "Rex")
            #expect(d["step"] as? String == "1" && d["phase"] as? String == "target-scent")
            #expect(d["exercise"] as? String == "1")
            #expect(d["handler"] as? String == "H-07")
            #expect(d["improvementSuggestions"] as? [String] == ["Shorter rounds"], "\(d)")
            #expect(d["comments"] as? [String] == ["Calm after the car ride"], "\(d)")
            #expect((d["settings"] as? String)?.contains(#""duration_s":"20.0""#) == true, "\(d["settings"] ?? "")")
            #expect((d["settings"] as? String)?.contains(#""samples":"T-1""#) == true, "\(d["settings"] ?? "")")
            #expect(d["trials"] is [Any], "the end view reads the rounds from `trials`: \(d)")
        }
    }

    /// The comment's route: refused to the roles that do not run sessions and without the
    /// page's token, a bad body is one error naming the field, and none of these reaches lineupd.
    @Test func aCommentIsRefusedToWhoDoesNotRunSessionsAndABadBodyIsOneError() async throws {
        let log = try ScreensTests.filledLog()
        let session = try #require(try log.reader.sessions().first).id
        let link = AddingLink()
        let state = WebState(users: try makeUsers(), link: link, logPath: log.path)
        let path = "/api/sessions/\(session)/note"
        try await Application(router: WebApp.router(state: state)).test(.router) { client in
            for role in ["researcher1", "assistant1"] {
                let page = try #require(try await client.login(role).1)
                let refused = try await client.post(path, json: #"{"text":"good"}"#, headers: page.postHeaders)
                #expect(refused.status == .forbidden, "\(role)")
                #expect(text(refused.body).contains("may not add a comment to a session"), "\(text(refused.body))")
            }
            let trainer = try #require(try await client.login("trainer1").1)
            var tokenless = trainer.postHeaders
            tokenless[HTTPField.Name("X-CSRF-Token")!] = nil
            let noToken = try await client.post(path, json: #"{"text":"good"}"#, headers: tokenless)
            #expect(noToken.status == .forbidden)
            #expect(text(noToken.body).contains("token"), "\(text(noToken.body))")
            let bad: [(String, String)] = [
                (#"{}"#, "'text'"), (#"{"text":3}"#, "'text'"), ("not json", "JSON"),
                (#"{"text":"  \n "}"#, "field 'text' is empty"),
            ]
            for (body, says) in bad {
                let response = try await client.post(path, json: body, headers: trainer.postHeaders)
                #expect(response.status == .badRequest, "\(body): \(response.status)")
                #expect(text(response.body).contains(says), "\(body): \(text(response.body))")
                #expect(text(response.body).hasPrefix(#"{"error":{"code":"bad-request""#), "\(text(response.body))")
            }
            #expect(link.received.isEmpty, "a refused comment reached lineupd: \(link.received)")
            let admin = try #require(try await client.login("admin1").1)
            let noted = try await client.post(path, json: #"{"text":"calm"}"#, headers: admin.postHeaders)
            #expect(noted.status == .ok, "\(text(noted.body))")
            // The stand-in encodes without sorted keys: the fields are checked, not their order.
            #expect(link.received.count == 1, "\(link.received)")
            #expect(link.received.first?.hasPrefix("session-note ") == true)
            #expect(link.received.first?.contains(#""session":"\#(session)""#) == true, "\(link.received)")
            #expect(link.received.first?.contains(#""text":"calm""#) == true, "\(link.received)")
        }
    }
}
