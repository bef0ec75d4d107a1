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

/// Issue 36: a double-blind session cut short by `kill -9` of the real lineupd, resumed from
/// the page. Every role's page is told what happened (status's `interrupted`: the session, the
/// trials done, the one cut short); only the roles that run sessions (the role table's
/// `runsSessions`, sent by `/api/me`) may resume it, and the handler's side is sent nothing of
/// the layout meanwhile, while the assistant's page, beside it, is (so the check can fail).
@Suite(.serialized) struct ResumePageTests {
    static let samples = ["T-7", "C-1", "C-2", "C-3", "C-4", "C-5"]

    @Test func aSessionCutShortIsToldOnThePageAndResumedByTheTrainer() async throws {
        // No virtual dog: a search ends only at its time-out (6 s at 5 × life's pace). The plug is
        // pulled on a frozen lineupd (SIGSTOP, look at the log, SIGKILL), so nothing can happen
        // between seeing trial 2 started and not ended, and the kill: a loaded machine cannot let
        // trial 2's time-out land first (CI once saw it at 10 × pace with a look-then-kill).
        guard let first = try SimulatedStation(speed: 5, extra: ["--no-virtual-dog"]) else { return }
        defer { first.terminate() }
        #expect(await first.waitReady())
        _ = try first.client.addDog(DogEntry(name: "Rex"))
        for label in Self.samples {
            _ = try first.client.addSample(SampleEntry(label: label, kind: label.hasPrefix("T") ? .target : .control))
        }
        let session = try first.client.startSession(
            SessionRequest(
                dog: "Rex", program: "research-5-station", step: "phase-3/1", trials: 4, samples: Self.samples))
        _ = try first.client.ready()
        #expect(await eventually(60) { (try? first.client.status().trialsDone) == 1 }, "trial 1 never ended")
        #expect(await eventually(10) { (try? first.client.status().state) == .waitingForReady })
        _ = try first.client.ready()
        let pid = first.process.processIdentifier
        var look = (starts: 0, trials: 0)
        var pulled = false
        let deadline = Date().addingTimeInterval(30)
        while !pulled && look.trials < 2 && Date() < deadline {
            kill(pid, SIGSTOP)
            look =
                (try? SessionLog.openReader(path: first.db, everything: true).read { db in
                    (
                        starts: try Int.fetchOne(
                            db,
                            sql:
                                "SELECT count(*) FROM event WHERE session_id = ? AND kind = 'cue' AND detail LIKE '%trial-start%'",
                            arguments: [session]) ?? 0,
                        trials: try Int.fetchOne(
                            db, sql: "SELECT count(*) FROM trial WHERE session_id = ?", arguments: [session]) ?? 0
                    )
                }) ?? (0, 0)
            if look.starts >= 2 && look.trials == 1 {
                kill(pid, SIGKILL)
                pulled = true
            } else {
                kill(pid, SIGCONT)
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        try #require(pulled, "trial 2 was never seen started and unfinished in the log: \(look)")
        _ = try await onThread { first.process.waitUntilExit() }

        guard let second = try SimulatedStation(speed: 10, extra: ["--no-virtual-dog"], directory: first.directory)
        else {
            return
        }
        defer { second.terminate() }
        #expect(await second.waitReady())
        let link = SocketLink(path: second.socket)
        let state = WebState(users: try makeUsers(), link: link, hub: LiveHub(link: link, pollSeconds: 0.2))
        let app = Application(
            router: WebApp.router(state: state), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let trainer = try #require(try await client.login("trainer1").1)
            let handler = try #require(try await client.login("handler1").1)
            let assistant = try #require(try await client.login("assistant1").1)
            let trainerStream = try RawStream(port: port, path: "/api/events", cookie: trainer.cookie)
            let handlerStream = try RawStream(port: port, path: "/api/events", cookie: handler.cookie)
            let assistantStream = try RawStream(port: port, path: "/api/events", cookie: assistant.cookie)
            defer {
                trainerStream.close()
                handlerStream.close()
                assistantStream.close()
            }
            // Every role is told: the session, the trials done, the one cut short.
            for stream in [trainerStream, handlerStream, assistantStream] {
                #expect(
                    await stream.waitFor(10) { s in
                        s.frames("status").last.map {
                            $0.contains(#""state":"interrupted""#) && $0.contains(#""trialsLogged":1"#)
                                && $0.contains(#""cutShort":2"#) && $0.contains(#""dog":"Rex""#)
                        } ?? false
                    }, "\(stream.frames("status").last ?? "no status")")
            }
            // Who may resume: the role table's rule, as the page is told it and as lineup-web applies it.
            var replies = ""
            for (page, runs) in [(trainer, true), (handler, false), (assistant, false)] {
                let me = text(try await client.execute(uri: "/api/me", method: .get, headers: page.getHeaders).body)
                #expect(me.contains(#""runsSessions":\#(runs)"#), "\(me)")
            }
            for page in [handler, assistant] {
                let refused = try await client.post("/api/session/resume", json: "{}", headers: page.postHeaders)
                #expect(refused.status == .forbidden, "\(text(refused.body))")
                replies += text(refused.body)
            }
            #expect(try second.client.status().state == .interrupted, "a refused resume resumed it")
            for page in [trainer, handler] {
                replies += text(
                    try await client.execute(uri: "/api/status", method: .get, headers: page.getHeaders).body)
                replies += text(
                    try await client.execute(uri: "/api/layout", method: .get, headers: page.getHeaders).body)
            }
            let resumed = try await client.post("/api/session/resume", json: "{}", headers: trainer.postHeaders)
            #expect(resumed.status == .ok, "\(text(resumed.body))")
            #expect(
                text(resumed.body).contains(
                    "resumed: 1 trial(s) were logged; trial 2, running when lineupd stopped, is logged interrupted"),
                "\(text(resumed.body))")
            replies += text(resumed.body)
            #expect(
                await eventually(10) {
                    let s = try? second.client.status()
                    return s?.state == .waitingForReady && s?.trial == 3
                }, "the block did not go on at trial 3")
            // The assistant's page is shown trial 3's layout to load; the handler's side nothing of it.
            #expect(
                await assistantStream.waitFor(10) { $0.frames("layout").last?.contains(#""stations":["#) == true },
                "the assistant's page was not sent trial 3's layout: the check below could not fail")
            for page in [trainer, handler] {
                replies += text(
                    try await client.execute(uri: "/api/status", method: .get, headers: page.getHeaders).body)
            }
            let blindBytes = trainerStream.text + handlerStream.text + replies
            let assistantBytes = assistantStream.text
            for leak in [#""stations":["#, #""kind":"target""#, #""kind":"control""#] {
                #expect(!blindBytes.contains(leak), "the handler's side received \(leak)")
                #expect(assistantBytes.contains(leak), "the assistant's page lacks \(leak): the check cannot fail")
            }
            for label in Self.samples {
                #expect(!blindBytes.contains("\"\(label)\""), "the handler's side received the sample \(label)")
            }
            _ = try await client.post("/api/session/end", json: "{}", headers: trainer.postHeaders)
        }
    }

    /// The Live screen's resume panel as served: its button posts the route, its words come from
    /// status's `interrupted`, and the button is shown by the role table's rule, not by role names.
    @Test func theLiveScreenHasTheResumePanel() async throws {
        let state = WebState(users: try makeUsers(), link: SocketLink(path: "/nonexistent/lineup.sock"))
        try await Application(router: WebApp.router(state: state)).test(.router) { client in
            let trainer = try #require(try await client.login("trainer1").1)
            let page = text(try await client.execute(uri: "/", method: .get, headers: trainer.getHeaders).body)
            let script = text(
                try await client.execute(uri: "/static/app.js", method: .get, headers: trainer.getHeaders).body)
            #expect(page.contains(#"<button id="resume-button" type="button" class="go">Resume the session</button>"#))
            #expect(script.contains("post('/api/session/resume'"))
            #expect(script.contains("s.state === 'interrupted' ? s.interrupted : null"))
            #expect(script.contains("me.runsSessions === true"))
            #expect(!script.contains("me.role === 'trainer' || me.role === 'admin'"))
        }
    }
}
