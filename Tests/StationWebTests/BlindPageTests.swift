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

/// Blinding enforced by the server: in a double-blind block, every byte the handler's page
/// received (its live stream, its API replies) is checked for the layout; the assistant's page,
/// beside it, must have been given it (so the check can fail).
@Suite(.serialized) struct BlindPageTests {
    static let samples = ["T-7", "C-1", "C-2", "C-3", "C-4", "C-5"]

    @Test func theHandlersPageNeverReceivesTheLayout() async throws {
        guard let station = try SimulatedStation() else { return }
        defer { station.terminate() }
        #expect(await station.waitReady())
        let control = station.client
        _ = try control.addDog(DogEntry(name: "Rex"))
        for label in Self.samples {
            _ = try control.addSample(SampleEntry(label: label, kind: label.hasPrefix("T") ? .target : .control))
        }
        let link = SocketLink(path: station.socket)
        let state = WebState(users: try makeUsers(), link: link, hub: LiveHub(link: link, pollSeconds: 0.2))
        let app = Application(
            router: WebApp.router(state: state), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let handler = try #require(try await client.login("trainer1").1)
            let assistant = try #require(try await client.login("assistant1").1)
            let handlerStream = try RawStream(port: port, path: "/api/events", cookie: handler.cookie)
            let assistantStream = try RawStream(port: port, path: "/api/events", cookie: assistant.cookie)
            defer {
                handlerStream.close()
                assistantStream.close()
            }
            var handlerReplies = ""
            let samples = Self.samples.map { #""\#($0)""# }.joined(separator: ",")
            let start = try await client.post(
                "/api/session/start",
                json:
                    #"{"dog":"Rex","program":"research-5-station","step":"phase-3/1","trials":3,"samples":[\#(samples)]}"#,
                headers: handler.postHeaders)
            handlerReplies += text(start.body)
            #expect(start.status == .ok, "\(text(start.body))")
            for trial in 1...3 {
                // The assistant's page shows what to load, then presses "loaded".
                #expect(
                    await assistantStream.waitFor(10) { $0.frames("layout").last?.contains("T-7") == true },
                    "trial \(trial): the assistant was not shown the layout")
                // "Loaded" only while the station waits for this trial: a press that lands after
                // this trial ended and the interval passed would start the next one, whose
                // layout the assistant was then never shown at rest (CI once failed so).
                var ended = false
                for _ in 0..<200 where !ended {
                    let status = try? control.status()
                    ended = (status?.trialsDone ?? 0) >= trial
                    if !ended, status?.trialsDone == trial - 1,
                        status?.state == .waitingForReady || status?.state == .blocked
                    {
                        _ = try await client.post("/api/ready", json: "{}", headers: assistant.postHeaders)
                    }
                    if !ended { try await Task.sleep(for: .milliseconds(100)) }
                }
                #expect(ended, "trial \(trial) never ended")
                // The handler asks for the layout by every way the page has: refused by lineupd.
                let layout = try await client.execute(uri: "/api/layout", method: .get, headers: handler.getHeaders)
                #expect(layout.status == .forbidden, "\(text(layout.body))")
                handlerReplies += text(layout.body)
                let status = try await client.execute(uri: "/api/status", method: .get, headers: handler.getHeaders)
                handlerReplies += text(status.body)
            }
            // The page's own files, as the handler's browser loads them.
            for path in ["/", "/static/app.js", "/static/screens.js", "/static/field.js"] {
                handlerReplies += text(
                    try await client.execute(uri: path, method: .get, headers: handler.getHeaders).body)
            }
            // Until the session ends: everything the handler's page was sent.
            let handlerBytes = handlerStream.text + handlerReplies
            // No assistant's command or instruction (issue 32): a refusal says what is refused.
            #expect(!handlerBytes.contains("--assistant"), "the handler's page was told the assistant's command")
            #expect(
                handlerBytes.range(of: #"[Ll]oad trial [0-9]"#, options: .regularExpression) == nil,
                "the handler's page was told what to load")
            #expect(handlerBytes.contains("not shown to the handler"), "the layout's refusal never reached the page")
            let assistantBytes = assistantStream.text
            #expect(handlerBytes.contains(#""state":"#), "the handler's page got no status at all")
            #expect(!handlerStream.frames("watch").isEmpty, "the handler's page got no events")
            for label in Self.samples {
                #expect(!handlerBytes.contains(label), "the handler's page received the sample \(label)")
                #expect(assistantBytes.contains(label), "the assistant's page lacks \(label): the check cannot fail")
            }
            for leak in [#""station":"#, #""kind":"target""#, #""stations":["#] {
                #expect(!handlerBytes.contains(leak), "the handler's page received \(leak)")
                #expect(assistantBytes.contains(leak), "the assistant's page lacks \(leak): the check cannot fail")
            }
            _ = try await client.post("/api/session/end", json: "{}", headers: handler.postHeaders)
        }
    }

    /// Who may fix a double-blind step's seed or layouts, asked through the page by every role
    /// of a real lineupd: no account of the page (lineupd's rule, `SessionAsker`); the same
    /// start without them is accepted, so the refusals are the seed's and the layouts'.
    @Test func noPageAccountFixesADoubleBlindStepsLayouts() async throws {
        guard let station = try SimulatedStation() else { return }
        defer { station.terminate() }
        #expect(await station.waitReady())
        let control = station.client
        _ = try control.addDog(DogEntry(name: "Rex"))
        for label in Self.samples {
            _ = try control.addSample(SampleEntry(label: label, kind: label.hasPrefix("T") ? .target : .control))
        }
        let link = SocketLink(path: station.socket)
        let state = WebState(users: try makeUsers(), link: link, hub: LiveHub(link: link, pollSeconds: 0.2))
        try await Application(router: WebApp.router(state: state)).test(.router) { client in
            let samples = Self.samples.map { #""\#($0)""# }.joined(separator: ",")
            let base =
                #""dog":"Rex","program":"research-5-station","step":"phase-3/1","trials":2,"samples":[\#(samples)]"#
            let fixes = [
                #","seed":4242"#, #","layouts":[["target","control","control","control","control"]]"#,
                #","seed":4242,"asker":"station""#,
            ]
            for name in ["trainer1", "admin1", "assistant1", "researcher1"] {
                let page = try #require(try await client.login(name).1)
                for fix in fixes {
                    let response = try await client.post(
                        "/api/session/start", json: "{" + base + fix + "}", headers: page.postHeaders)
                    #expect(response.status == .forbidden, "\(name) \(fix): \(text(response.body))")
                    let expected = name.hasPrefix("trainer") || name.hasPrefix("admin") ? "blind" : "role"
                    #expect(
                        text(response.body).contains(#""code":"\#(expected)""#),
                        "\(name) \(fix): \(text(response.body))")
                    #expect(try control.status().session == nil, "\(name) \(fix) started a session")
                }
            }
            let trainer = try #require(try await client.login("trainer1").1)
            let drawn = try await client.post(
                "/api/session/start", json: "{" + base + "}", headers: trainer.postHeaders)
            #expect(drawn.status == .ok, "\(text(drawn.body))")
            _ = try await client.post("/api/session/end", json: "{}", headers: trainer.postHeaders)
        }
        // At the station, lineupctl's asker, the researcher may (the same rule's other side).
        let started = try control.startSession(
            SessionRequest(
                dog: "Rex", program: "research-5-station", step: "phase-3/1", trials: 2, samples: Self.samples,
                seed: 4242))
        #expect(!started.isEmpty)
        try control.endSession(suggestions: nil)
    }

    /// Issue 32: a double-blind block cut short (lineupd stopped after trial 1) and resumed
    /// through the page (`POST /api/session/resume`) tells the handler's page nothing of its
    /// layouts, as its start does: the resume's reply, status, the live stream and the layout's
    /// refusal, over the trials after it. The assistant's page, beside it, is shown each layout.
    @Test func aResumedDoubleBlindBlockTellsTheHandlersPageNothingOfItsLayouts() async throws {
        guard let first = try SimulatedStation() else { return }
        defer { first.terminate() }
        #expect(await first.waitReady())
        _ = try first.client.addDog(DogEntry(name: "Rex"))
        for label in Self.samples {
            _ = try first.client.addSample(SampleEntry(label: label, kind: label.hasPrefix("T") ? .target : .control))
        }
        _ = try first.client.startSession(
            SessionRequest(
                dog: "Rex", program: "research-5-station", step: "phase-3/1", trials: 3, samples: Self.samples))
        // Trial 1 runs; then lineupd is stopped (SIGTERM leaves the session to be resumed).
        #expect(
            await eventually(60) {
                guard let status = try? first.client.status() else { return false }
                if (status.trialsDone ?? 0) >= 1 { return true }
                if status.state == .waitingForReady || status.state == .blocked { try? first.client.ready() }
                return false
            }, "trial 1 never ended")
        await first.stop()
        guard let station = try SimulatedStation(directory: first.directory) else { return }
        defer { station.terminate() }
        #expect(await station.waitReady())
        let control = station.client
        let link = SocketLink(path: station.socket)
        let state = WebState(users: try makeUsers(), link: link, hub: LiveHub(link: link, pollSeconds: 0.2))
        let app = Application(
            router: WebApp.router(state: state), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let handler = try #require(try await client.login("trainer1").1)
            let assistant = try #require(try await client.login("assistant1").1)
            let handlerStream = try RawStream(port: port, path: "/api/events", cookie: handler.cookie)
            let assistantStream = try RawStream(port: port, path: "/api/events", cookie: assistant.cookie)
            defer {
                handlerStream.close()
                assistantStream.close()
            }
            let resume = try await client.post("/api/session/resume", json: "{}", headers: handler.postHeaders)
            var handlerReplies = text(resume.body)
            #expect(resume.status == .ok, "\(text(resume.body))")
            #expect(handlerReplies.contains("resumed"), "\(handlerReplies)")
            for trial in 2...3 {
                #expect(
                    await assistantStream.waitFor(10) { $0.frames("layout").last?.contains("T-7") == true },
                    "trial \(trial): the assistant was not shown the layout")
                var ended = false
                for _ in 0..<300 where !ended {
                    let status = try? control.status()
                    ended = (status?.trialsDone ?? 0) >= trial
                    if !ended, status?.state == .waitingForReady || status?.state == .blocked {
                        // Trial 3 started by the handler's own press: its replies are checked too.
                        let presser = trial == 3 ? handler : assistant
                        let press = try await client.post("/api/ready", json: "{}", headers: presser.postHeaders)
                        if trial == 3 { handlerReplies += text(press.body) }
                    }
                    if !ended { try await Task.sleep(for: .milliseconds(100)) }
                }
                #expect(ended, "trial \(trial) never ended")
                for path in ["/api/layout", "/api/status"] {
                    handlerReplies += text(
                        try await client.execute(uri: path, method: .get, headers: handler.getHeaders).body)
                }
            }
            let handlerBytes = handlerStream.text + handlerReplies
            #expect(!handlerStream.frames("watch").isEmpty, "the handler's page got no events")
            #expect(!handlerBytes.contains("--assistant"), "the handler's page was told the assistant's command")
            #expect(
                handlerBytes.range(of: #"[Ll]oad trial [0-9]"#, options: .regularExpression) == nil,
                "the handler's page was told what to load")
            for label in Self.samples {
                #expect(!handlerBytes.contains(label), "the handler's page received the sample \(label)")
                #expect(
                    assistantStream.text.contains(label), "the assistant's page lacks \(label): the check cannot fail")
            }
            for leak in [#""station":"#, #""kind":"target""#, #""stations":["#] {
                #expect(!handlerBytes.contains(leak), "the handler's page received \(leak)")
            }
            let end = try await client.post("/api/session/end", json: "{}", headers: handler.postHeaders)
            #expect(end.status == .ok, "\(text(end.body))")
            #expect(!text(end.body).contains("T-7"), "\(text(end.body))")
        }
    }
}
