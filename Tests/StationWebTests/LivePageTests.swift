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

/// The page against a real `lineupd --simulate --serve`: the trainer's session from the page's
/// API, the live stream as the browser gets it (raw bytes over TCP), lineupd's restart, and
/// a double-blind block with the handler's and the assistant's pages side by side.
@Suite(.serialized) struct LivePageTests {
    func app(_ station: SimulatedStation) throws -> some ApplicationProtocol {
        let link = SocketLink(path: station.socket)
        let state = WebState(users: try makeUsers(), link: link, hub: LiveHub(link: link, pollSeconds: 0.2))
        return Application(
            router: WebApp.router(state: state), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    func json(_ response: TestResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]) ?? [:]
    }

    @Test func aTrainerLedSessionFromThePageAndLineupdRestarting() async throws {
        guard let station = try SimulatedStation() else { return }
        defer { station.terminate() }
        #expect(station.waitReady())
        _ = try station.client.addDog(DogEntry(name: "Rex"))
        try await app(station).test(.live) { client in
            let port = try #require(client.port)
            let page = try #require(try await client.login("trainer1").1)
            let live = try RawStream(port: port, path: "/api/events", cookie: page.cookie)
            defer { live.close() }
            #expect(
                await live.waitFor(5) { $0.frames("status").contains { $0.contains(#""state":"idle""#) } },
                "\(live.text)")
            let start = try await client.post(
                "/api/session/start",
                json:
                    #"{"dog":"Rex","program":"study","step":"target-scent/1","mode":"trainer-led","durationSeconds":60}"#,
                headers: page.postHeaders)
            #expect(start.status == .ok, "\(text(start.body))")
            #expect(json(start)["session"] is String)
            let ready = try await client.post("/api/ready", json: "{}", headers: page.postHeaders)
            #expect(ready.status == .ok, "\(text(ready.body))")
            #expect((json(ready)["message"] as? String)?.contains("started") == true, "\(text(ready.body))")
            // The round runs: the page gets the state, the repetition and a timer that counts down.
            #expect(
                await live.waitFor(10) { stream in
                    stream.frames("status").contains {
                        $0.contains(#""state":"round-running""#) && $0.contains(#""secondsLeft""#)
                    }
                }, "\(live.text)")
            let running = live.frames("status").filter { $0.contains("round-running") }
            let lefts = running.compactMap { frame -> Double? in
                (try? JSONSerialization.jsonObject(with: Data(frame.utf8)) as? [String: Any])?["secondsLeft"] as? Double
            }
            #expect(await live.waitFor(3) { $0.frames("status").filter { $0.contains("round-running") }.count >= 3 })
            let later = live.frames("status").filter { $0.contains("round-running") }.compactMap { frame -> Double? in
                (try? JSONSerialization.jsonObject(with: Data(frame.utf8)) as? [String: Any])?["secondsLeft"] as? Double
            }
            #expect((later.last ?? 99) < (lefts.first ?? 0), "the timer did not count down: \(lefts) then \(later)")
            // The round's events reach the page from lineupd's watch.
            #expect(await live.waitFor(10) { !$0.frames("watch").isEmpty }, "\(live.text)")
            // A second press while the round runs is refused with lineupd's reason, as one error.
            let again = try await client.post("/api/ready", json: "{}", headers: page.postHeaders)
            #expect(
                again.status == .conflict && text(again.body).contains("not-ready"),
                "\(again.status) \(text(again.body))")
            let end = try await client.post(
                "/api/session/end", json: #"{"suggestions":"shorter rounds"}"#, headers: page.postHeaders)
            #expect(end.status == .ok, "\(text(end.body))")
            #expect(await live.waitFor(5) { $0.frames("status").last?.contains(#""state":"idle""#) == true })

            // lineupd stops: the page is told it is not live, and why; started again, it is live again.
            station.terminate()
            #expect(
                await live.waitFor(5) { $0.frames("link").last?.contains(#""live":false"#) == true }, "\(live.text)")
            #expect(live.frames("link").last?.contains("lineupd is not running") == true, "\(live.frames("link"))")
            let notLive = try await client.execute(uri: "/api/status", method: .get, headers: page.getHeaders)
            #expect(notLive.status == .serviceUnavailable)
            guard let again2 = try SimulatedStation(directory: station.directory) else { return }
            defer { again2.terminate() }
            let before = live.frames("status").count
            #expect(
                await live.waitFor(15) { $0.frames("status").count > before },
                "the page never came back: \(live.text.suffix(400))")
            // And the log has the session the page ran.
            #expect(again2.waitReady())
        }
    }
}
