import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Readings
import SessionLog
import StationControl
import StationWeb
import Testing
import TrainingEngine
import WebAccounts

/// The page in the field (issue 37), against a real `lineupd --simulate --serve`: the trainer's
/// own layout for trainer-led rounds, never a byte of it to the handler's role; the handler's
/// guess through lineupd's `guess`, counted by `stats --guesses`.
@Suite(.serialized) struct FieldPageTests {
    func state(_ station: SimulatedStation) throws -> WebState {
        let link = SocketLink(path: station.socket)
        return WebState(
            users: try makeUsers(), link: link, hub: LiveHub(link: link, pollSeconds: 0.1), logPath: station.db)
    }

    func stations(_ frame: String) -> [String]? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(frame.utf8)) as? [String: Any],
            let stations = object["stations"] as? [[String: Any]]
        else { return nil }
        return stations.map { "\($0["station"] ?? "")=\($0["kind"] ?? "")" }
    }

    /// The trainer's page is sent each round's layout as lineupd has it (the next round's once
    /// a round is logged); the handler's role is sent no layout frame and refused the route,
    /// in the very session where the trainer is given it.
    @Test func theTrainerSeesEachRoundsLayoutTheHandlerNone() async throws {
        guard let station = try SimulatedStation(extra: ["--no-virtual-dog"]) else { return }
        defer { station.terminate() }
        #expect(await station.waitReady())
        _ = try station.client.addDog(DogEntry(name: "Rex"))
        _ = try station.client.addSample(SampleEntry(label: "T-1", kind: .target))
        let app = Application(
            router: WebApp.router(state: try state(station)),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let trainer = try #require(try await client.login("trainer1").1)
            let handler = try #require(try await client.login("handler1").1)
            let trainerStream = try RawStream(port: port, path: "/api/events", cookie: trainer.cookie)
            let handlerStream = try RawStream(port: port, path: "/api/events", cookie: handler.cookie)
            defer {
                trainerStream.close()
                handlerStream.close()
            }
            // One second a round (a thirtieth of it at 30 ×): rounds end by themselves.
            let start = try await client.post(
                "/api/session/start",
                json: #"{"dog":"Rex","program":"study","step":"target-scent/1","samples":["T-1"],"durationSeconds":1}"#,
                headers: trainer.postHeaders)
            #expect(start.status == .ok, "\(text(start.body))")
            var seen: [[String]] = []
            for round in 1...2 {
                let expected = try station.client.layout(view: .handler).map { "\($0.station)=\($0.kind.rawValue)" }
                #expect(
                    await trainerStream.waitFor(10) { $0.frames("layout").last.flatMap(stations) == expected },
                    "round \(round): the trainer's page was not sent \(expected): \(trainerStream.frames("layout"))")
                seen.append(expected)
                let ready = try await client.post("/api/ready", json: "{}", headers: trainer.postHeaders)
                #expect(ready.status == .ok, "\(text(ready.body))")
                #expect(
                    await eventually(10) { ((try? station.client.status())?.trialsDone ?? 0) >= round },
                    "round \(round) did not end")
            }
            #expect(seen.count == 2 && seen.allSatisfy { $0.contains { $0.hasSuffix("=target") } }, "\(seen)")
            let refused = try await client.execute(uri: "/api/layout", method: .get, headers: handler.getHeaders)
            #expect(refused.status == .forbidden && text(refused.body).contains("handler may not see the layout"))
            let handlerBytes = handlerStream.text + text(refused.body)
            #expect(handlerStream.frames("layout").isEmpty, "the handler's page got \(handlerStream.frames("layout"))")
            #expect(!handlerStream.frames("status").isEmpty, "the handler's page got no status: the check saw nothing")
            for leak in ["T-1", #""stations":["#, #""kind":"target""#] {
                #expect(!handlerBytes.contains(leak), "the handler's page received \(leak)")
                #expect(trainerStream.text.contains(leak), "the trainer's page lacks \(leak): the check cannot fail")
            }
            _ = try await client.post("/api/session/end", json: "{}", headers: trainer.postHeaders)
        }
    }

    /// The handler's guess from the page is lineupd's `guess`: the first stands, a second is
    /// refused, roles that do not handle are refused before lineupd, and the log counts it as
    /// `stats --guesses` does. The reply names the trial and the handler's own guess only.
    @Test func theHandlersGuessIsTheOneStatsCounts() async throws {
        guard let station = try SimulatedStation() else { return }
        defer { station.terminate() }
        #expect(await station.waitReady())
        let samples = ["T-7", "C-1", "C-2", "C-3", "C-4"]
        _ = try station.client.addDog(DogEntry(name: "Rex"))
        for label in samples {
            _ = try station.client.addSample(SampleEntry(label: label, kind: label.hasPrefix("T") ? .target : .control))
        }
        try await Application(router: WebApp.router(state: try state(station))).test(.router) { client in
            let trainer = try #require(try await client.login("trainer1").1)
            let handler = try #require(try await client.login("handler1").1)
            let list = samples.map { #""\#($0)""# }.joined(separator: ",")
            let start = try await client.post(
                "/api/session/start",
                json:
                    #"{"dog":"Rex","program":"research-5-station","step":"phase-3/1","trials":1,"handler":"H-1","samples":[\#(list)]}"#,
                headers: trainer.postHeaders)
            #expect(start.status == .ok, "\(text(start.body))")
            let names = try #require(try station.client.status().lineupStations)
            #expect(names.count == 5, "\(names)")
            for name in ["researcher1", "assistant1"] {
                let other = try #require(try await client.login(name).1)
                let refused = try await client.post("/api/guess", json: #"{"station":"C"}"#, headers: other.postHeaders)
                #expect(refused.status == .forbidden && text(refused.body).contains("may not enter a guess"))
            }
            let guess = try await client.post("/api/guess", json: #"{"station":"C"}"#, headers: handler.postHeaders)
            #expect(guess.status == .ok && text(guess.body) == #"{"trial":1,"guess":"C"}"#, "\(text(guess.body))")
            let again = try await client.post("/api/guess", json: #"{"station":"D"}"#, headers: handler.postHeaders)
            #expect(again.status == .conflict && text(again.body).contains("duplicate"), "\(text(again.body))")
            let name = try await client.execute(
                uri: "/api/session/name?id=" + (try station.client.status().session ?? ""), method: .get,
                headers: handler.getHeaders)
            #expect(name.status == .ok && text(name.body).contains(#""dog":"Rex""#), "\(text(name.body))")
            _ = try await client.post("/api/ready", json: "{}", headers: trainer.postHeaders)
            #expect(
                await eventually(30) { ((try? station.client.status())?.trialsDone ?? 0) >= 1 }, "the trial never ended"
            )
            _ = try await client.post("/api/session/end", json: "{}", headers: trainer.postHeaders)
        }
        let figures = try SessionLog.openReader(path: station.db).guessStats(by: .handler)
        #expect(figures.map(\.guesses) == [1], "\(figures)")
    }
}
