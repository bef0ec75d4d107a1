import Foundation
import Glibc
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

/// Issue 37: the sitting's queue, held by lineup-web (not one browser), against a real
/// `lineupd --simulate --serve`: set up once, seen by every login, kept over a restart of the
/// page's server, changed only by the roles the role table lets, each dog started on its next
/// step from its progress (the verdicts `lineupctl progress` shows), and the day view naming
/// the day's sessions by dog, step and time.
@Suite(.serialized) struct QueueTests {
    func json(_ response: TestResponse) -> Any? { try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) }

    func queue(_ client: some TestClientProtocol, _ page: Page) async throws -> [[String: Any]] {
        let response = try await client.execute(uri: "/api/queue", method: .get, headers: page.getHeaders)
        #expect(response.status == .ok, "\(text(response.body))")
        return json(response) as? [[String: Any]] ?? []
    }

    /// `lineupctl progress --dog Rex` on the log, as the trainer reads it.
    static func progress(db: String) throws -> String {
        let process = Process()
        process.executableURL = packageRoot.appendingPathComponent(".build/debug/lineupctl")
        process.arguments = ["progress", "--dog", "Rex", "--db", db]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    @Test func theQueueIsSharedKeptAndStartsEachDogOnItsNextStep() async throws {
        guard let station = try SimulatedStation(speed: 10, extra: ["--no-virtual-dog"]) else { return }
        defer { station.terminate() }
        #expect(await station.waitReady())
        for dog in ["Rex", "Bella", "Milo"] { _ = try station.client.addDog(DogEntry(name: dog)) }
        _ = try station.client.addSample(SampleEntry(label: "T-1", kind: .target))
        let users = try makeUsers()
        let state = WebState(users: users, link: SocketLink(path: station.socket), logPath: station.db)
        // Set up once, by the trainer: Rex for four rounds of 50 s (5 s at speed 10: time for the
        // click through the page on a loaded machine; the round ends at its time only), then Bella.
        try await Application(router: WebApp.router(state: state)).test(.router) { client in
            let trainer = try #require(try await client.login("trainer1").1)
            for body in [
                #"{"dog":"Rex","program":"study","repetitions":4,"durationSeconds":50,"samples":["T-1"]}"#,
                #"{"dog":"Bella","program":"study","repetitions":2}"#,
            ] {
                let added = try await client.post("/api/queue", json: body, headers: trainer.postHeaders)
                #expect(added.status == .ok, "\(text(added.body))")
            }
            // Refused: a dog the log does not know, repetitions outside the next step's bounds
            // (the words lineupd's start would use), a role that does not run sessions.
            let refusals: [(String, HTTPResponse.Status, String)] = [
                (
                    #"{"dog":"Rexx","program":"study"}"#, .notFound,
                    "no dog \"Rexx\" in the log: add it on the Dogs screen first"
                ),
                (
                    #"{"dog":"Milo","program":"study","repetitions":5}"#, .badRequest,
                    "Milo's next step, indicate/1 of study: exercise 1 may be done 1 to 4 times in a session (the program's repeats), not 5"
                ),
                (#"{"dog":"Milo","program":"nowhere"}"#, .notFound, "no program \"nowhere\" on this station"),
            ]
            for (body, status, says) in refusals {
                let refused = try await client.post("/api/queue", json: body, headers: trainer.postHeaders)
                #expect(refused.status == status, "\(body): \(text(refused.body))")
                let message = ((json(refused) as? [String: Any])?["error"] as? [String: Any])?["message"] as? String
                #expect(message?.contains(says) == true, "\(body): \(text(refused.body))")
            }
            for role in ["researcher1", "assistant1", "handler1"] {
                let page = try #require(try await client.login(role).1)
                let refused = try await client.post(
                    "/api/queue", json: #"{"dog":"Milo","program":"study"}"#, headers: page.postHeaders)
                #expect(refused.status == .forbidden, "\(role): \(text(refused.body))")
                #expect(text(refused.body).contains("may not change the queue"), "\(role): \(text(refused.body))")
                // They read it, without the samples (nothing in it is a layout anyway).
                let seen = try await queue(client, page)
                #expect(seen.map { $0["dog"] as? String } == ["Rex", "Bella"], "\(role)")
                #expect(seen.allSatisfy { $0["samples"] == nil }, "\(role): \(seen)")
                let start = try await client.post(
                    "/api/queue/start", json: #"{"id":"\#(seen[0]["id"] as? String ?? "")"}"#, headers: page.postHeaders
                )
                #expect(start.status == .forbidden, "\(role): \(text(start.body))")
            }
        }
        // Another browser, after lineup-web restarted (a new state on the same accounts file):
        // the same queue, each dog with its next step from its progress.
        let restarted = WebState(
            users: try UserStore(path: users.path, create: false, cost: 4), link: SocketLink(path: station.socket),
            logPath: station.db)
        try await Application(router: WebApp.router(state: restarted)).test(.router) { client in
            let admin = try #require(try await client.login("admin1").1)
            var seen = try await queue(client, admin)
            #expect(seen.map { $0["dog"] as? String } == ["Rex", "Bella"], "\(seen)")
            let next = try #require(seen.first?["next"] as? [String: Any])
            #expect(next["step"] as? String == "indicate/1" && next["exercise"] as? String == "1", "\(next)")
            #expect(seen.first?["samples"] as? [String] == ["T-1"] && seen.first?["queuedBy"] as? String == "trainer1")

            // Rex starts on indicate/1, exercise 1, four rounds; he leaves the queue.
            let rex = try #require(seen.first?["id"] as? String)
            let started = try await client.post(
                "/api/queue/start", json: #"{"id":"\#(rex)"}"#, headers: admin.postHeaders)
            #expect(started.status == .ok, "\(text(started.body))")
            var status = try station.client.status()
            #expect(status.dog == "Rex" && status.step == "indicate/1" && status.trials == 4, "\(status)")
            seen = try await queue(client, admin)
            #expect(seen.map { $0["dog"] as? String } == ["Bella"], "\(seen)")
            // Bella cannot start while Rex's session runs: lineupd's words; she stays queued.
            let bella = try #require(seen.first?["id"] as? String)
            let busy = try await client.post(
                "/api/queue/start", json: #"{"id":"\#(bella)"}"#, headers: admin.postHeaders)
            #expect(busy.status == .conflict && text(busy.body).contains("a session is running"), "\(text(busy.body))")
            #expect(try await queue(client, admin).count == 1)

            // Four hits: the nose at the only station, the trainer's click through the page.
            for round in 1...4 {
                let ready = try await client.post("/api/ready", json: "{}", headers: admin.postHeaders)
                #expect(ready.status == .ok, "round \(round): \(text(ready.body))")
                try station.client.simulate(SimulatedInput(input: "A", active: true))
                let click = try await client.post(
                    "/api/press", json: #"{"button":"clicker"}"#, headers: admin.postHeaders)
                #expect(click.status == .ok, "round \(round): \(text(click.body))")
                try station.client.simulate(SimulatedInput(input: "A", active: false))
                #expect(
                    await eventually(30) { (try? station.client.status().exercisesDone) == round },
                    "round \(round) never ended")
            }
            try station.client.endSession(suggestions: nil)

            // Queued again, Rex's next step has moved on with his progress: exercise 2 of
            // indicate/1, the step `lineupctl progress` names.
            let again = try await client.post(
                "/api/queue", json: #"{"dog":"Rex","program":"study","durationSeconds":50}"#,
                headers: admin.postHeaders)
            #expect(again.status == .ok, "\(text(again.body))")
            // The answer names where he starts, as his progress stands now.
            let answered = (json(again) as? [String: Any])?["next"] as? [String: Any]
            #expect(
                answered?["step"] as? String == "indicate/1" && answered?["exercise"] as? String == "2",
                "\(text(again.body))")
            seen = try await queue(client, admin)
            let moved = try #require(seen.last?["next"] as? [String: Any])
            #expect(moved["step"] as? String == "indicate/1" && moved["exercise"] as? String == "2", "\(moved)")
            let shown = try await onThread { try Self.progress(db: station.db) }
            #expect(
                shown.contains("Next step: indicate/1 (One container), exercise 2, trainer-led, 1 to 4 repetitions"),
                "\(shown)")

            // The day view: Rex's session in the past, named by dog, step and time; the queue.
            let day = try await client.execute(uri: "/api/day", method: .get, headers: admin.getHeaders)
            #expect(day.status == .ok, "\(text(day.body))")
            let view = try #require(json(day) as? [String: Any])
            let past = try #require(view["past"] as? [[String: Any]])
            #expect(past.count == 1 && past[0]["dog"] as? String == "Rex" && past[0]["step"] as? String == "indicate/1")
            #expect(
                past[0]["state"] as? String == "ended" && past[0]["trials"] as? Int == 4 && past[0]["hits"] as? Int == 4
            )
            #expect((past[0]["time"] as? String)?.count == 5, "\(past[0])")
            #expect(view["running"] == nil)
            #expect((view["queued"] as? [[String: Any]])?.map { $0["dog"] as? String } == ["Bella", "Rex"])

            // Bella starts with two rounds, her next step; the day view says she runs.
            status = try station.client.status()
            #expect(status.session == nil)
            let second = try await client.post(
                "/api/queue/start", json: #"{"id":"\#(bella)"}"#, headers: admin.postHeaders)
            #expect(second.status == .ok, "\(text(second.body))")
            #expect(try station.client.status().trials == 2)
            let running = try #require(
                json(try await client.execute(uri: "/api/day", method: .get, headers: admin.getHeaders))
                    as? [String: Any])
            #expect((running["running"] as? [String: Any])?["dog"] as? String == "Bella", "\(running)")
            try station.client.endSession(suggestions: nil)
            // Removed by id: the one a browser saw, and only once.
            let last = try #require(try await queue(client, admin).first?["id"] as? String)
            for expected in [HTTPResponse.Status.ok, .notFound] {
                let removed = try await client.post(
                    "/api/queue/remove", json: #"{"id":"\#(last)"}"#, headers: admin.postHeaders)
                #expect(removed.status == expected, "\(text(removed.body))")
            }
            #expect(try await queue(client, admin).isEmpty)
        }
    }
}
