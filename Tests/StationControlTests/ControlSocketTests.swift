import Foundation
import StationControl
import Testing
import TrainingEngine

#if canImport(Glibc)
    import Glibc
#endif

private let blindSession = SessionRequest(
    dog: "Rex", program: "study", step: "discriminate/2", exercise: "1", mode: .doubleBlind, trials: 20,
    samples: ["T-7", "C-2"], handler: "Anna", seed: 42)

@Suite("Control socket")
struct ControlSocketTests {
    @Test("every request makes the round trip")
    func roundTrips() throws {
        let (server, station, client) = try makeServer("round")
        defer { server.stop() }

        #expect(try client.status().state == .idle)
        #expect(throws: ControlClientError.refused(ControlRefusal(.noSession, "no session is running"))) {
            try client.ready()
        }
        #expect(try client.startSession(blindSession) == "S1")
        let status = try client.status()
        #expect(status.state == .waitingForReady)
        #expect(status.dog == "Rex")
        #expect(status.mode == .doubleBlind)
        #expect(status.trials == 20)
        #expect(try client.layout(view: .assistant) == station.layoutNow)
        try client.ready()
        try client.abort()
        try client.endSession(suggestions: "shorter holds at station 3")

        #expect(
            station.calls == [
                "status", "ready", "startSession Rex double-blind", "status", "layout assistant", "ready", "abort",
                "endSession shorter holds at station 3",
            ])
    }

    @Test("session-start carries every field to the station")
    func sessionStartFields() throws {
        let line = ControlProtocol.encode(blindSession, id: 9)
        let decoded = try ControlProtocol.decodeRequest(line.dropLast()).get()
        #expect(decoded.id == 9)
        #expect(decoded.call as? SessionRequest == blindSession)
        // samples may be left out on the wire.
        let bare =
            #"{"v":1,"id":2,"request":"session-start","dog":"Rex","program":"study","step":"a/1","mode":"automated"}"#
        #expect(
            try ControlProtocol.decodeRequest(Data(bare.utf8)).get().call as? SessionRequest
                == SessionRequest(dog: "Rex", program: "study", step: "a/1", mode: .automated))
    }

    @Test("the researcher's additions carry every field, and the station's refusals come back")
    func researcherAdditions() throws {
        let (server, station, client) = try makeServer("adds")
        defer { server.stop() }
        let sample = SampleEntry(
            label: "T-42", kind: .target,
            facts: SampleFacts(
                diagnosis: "lung cancer", source: "clinic A", collection: "breath, 5 min", processing: "frozen -20 C",
                collectedOn: "2025-01-10"))
        let requests: [any ControlCall] = [
            DogEntry(name: "Aino", born: "2021-04-02", notes: "shy of metal"), DogEntry(name: "Cara"), sample,
            SampleEntry(label: "B", kind: .blank), SampleNoteEntry(sample: "T-42", text: "lid \"cracked\", replaced"),
        ]
        for request in requests {
            let line = ControlProtocol.encode(request, id: 3)
            #expect(try ControlProtocol.decodeRequest(line.dropLast()).get().call.isSame(as: request))
        }
        // The wire's own spelling, as a script would type it.
        let typed = #"{"v":1,"id":4,"request":"sample-add","label":"C-1","kind":"control","collectedOn":"2025-02-01"}"#
        #expect(
            try ControlProtocol.decodeRequest(Data(typed.utf8)).get().call as? SampleEntry
                == SampleEntry(label: "C-1", kind: .control, facts: SampleFacts(collectedOn: "2025-02-01")))

        #expect(try client.addDog(DogEntry(name: "Aino", born: "2021-04-02")) == "D1")
        #expect(try client.addSample(sample) == "S-T-42")
        #expect(try client.noteSample(SampleNoteEntry(sample: "T-42", text: "lid cracked")) == "N1")
        #expect(
            throws: ControlClientError.refused(
                ControlRefusal(.duplicate, "a sample labelled \"T-1\" is already in the log"))
        ) { try client.addSample(SampleEntry(label: "T-1", kind: .target)) }
        #expect(
            station.calls == [
                "addDog Aino 2021-04-02", "addSample T-42 target 2025-01-10", "noteSample T-42 lid cracked",
                "addSample T-1 target -",
            ])
    }

    @Test("a trial correction crosses the socket with every field, and its refusal comes back")
    func trialCorrection() throws {
        let (server, station, client) = try makeServer("correct")
        defer { server.stop() }
        let entry = TrialCorrectionEntry(
            trial: "9b1c0d2e", outcome: .falseAlert, indicated: 3, reason: "video: held at 3")
        let line = ControlProtocol.encode(entry, id: 5)
        #expect(try ControlProtocol.decodeRequest(line.dropLast()).get().call as? TrialCorrectionEntry == entry)
        let typed = #"{"v":1,"id":6,"request":"trial-correct","trial":"9b1c","outcome":"miss","reason":"no hold"}"#
        #expect(
            try ControlProtocol.decodeRequest(Data(typed.utf8)).get().call as? TrialCorrectionEntry
                == TrialCorrectionEntry(trial: "9b1c", outcome: .miss, reason: "no hold"))
        #expect(try client.correctTrial(entry) == "C1")
        #expect(
            throws: ControlClientError.refused(ControlRefusal(.unknown, "no trial \"nope\" in the log"))
        ) { try client.correctTrial(TrialCorrectionEntry(trial: "nope", outcome: .miss, reason: "x")) }
        #expect(
            station.calls == ["correctTrial 9b1c0d2e false-alert 3 video: held at 3", "correctTrial nope miss - x"])
    }

    @Test("the layout is refused to the handler's view in double-blind mode and given to the assistant")
    func blindLayout() throws {
        let (server, station, client) = try makeServer("blind")
        defer { server.stop() }
        _ = try client.startSession(blindSession)
        do {
            _ = try client.layout(view: .handler)
            Issue.record("the handler saw a double-blind layout")
        } catch {
            guard case .refused(let refusal) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(refusal.code == .blind)
        }
        #expect(try client.layout(view: .assistant) == station.layoutNow)

        try client.endSession(suggestions: nil)
        _ = try client.startSession(
            SessionRequest(dog: "Rex", program: "study", step: "discriminate/2", mode: .trainerLed))
        #expect(try client.layout(view: .handler) == station.layoutNow)
    }

    @Test("a bare layout request is the handler's view")
    func layoutDefaultsToHandler() throws {
        let (server, _, client) = try makeServer("view")
        defer { server.stop() }
        _ = try client.startSession(blindSession)
        let raw = try #require(RawConnection(path: client.path))
        raw.send(#"{"v":1,"id":3,"request":"layout"}"# + "\n")
        let reply = raw.readLine()
        #expect(errorCode(reply) == "blind")
        #expect(json(reply)["id"] as? Int == 3)
    }

    @Test("watch streams the station's events in order until the watcher leaves")
    func watchStreams() throws {
        let (server, station, client) = try makeServer("watch")
        defer { server.stop() }
        let raw = try #require(RawConnection(path: client.path))
        raw.send(#"{"v":1,"id":1,"request":"watch"}"# + "\n")
        #expect(json(raw.readLine())["ok"] as? Bool == true)
        #expect(station.watcherCount == 1)
        for i in 0..<50 { station.emit(#"{"event":"trial","n":\#(i)}"#) }
        station.emit("{\"event\":\n\"split\"}")  // A newline inside must not split the event.
        for i in 0..<50 { #expect(raw.readLine() == #"{"event":"trial","n":\#(i)}"#) }
        #expect(raw.readLine() == #"{"event": "split"}"#)

        raw.close()
        #expect(eventually { station.unwatched.count == 1 })
        // The daemon learns the watcher is gone from `send` returning false, too.
        #expect(eventually { station.emit("{}") == 0 })
        #expect(try client.status().state == .idle)
    }

    @Test("ControlClient.watch yields lines until the closure stops it")
    func clientWatch() throws {
        let (server, station, client) = try makeServer("cwatch")
        defer { server.stop() }
        let emitter = Thread {
            // Waits for the watcher to register, then sends; the watch returns after three.
            _ = eventually { station.watcherCount == 1 }
            for i in 0..<3 { station.emit("{\"n\":\(i)}") }
        }
        emitter.start()
        var seen: [String] = []
        try client.watch { line in
            seen.append(line)
            return seen.count < 3
        }
        #expect(seen == [#"{"n":0}"#, #"{"n":1}"#, #"{"n":2}"#])
    }

    @Test("a stop sends a watcher every event it was owed before closing it")
    func aStopDeliversWhatWasOwed() throws {
        let (server, station, client) = try makeServer("owed", maxQueuedBytes: 8 * 1024 * 1024)
        defer { server.stop() }
        let raw = try #require(RawConnection(path: client.path))
        raw.send(#"{"v":1,"id":1,"request":"watch"}"# + "\n")
        #expect(json(raw.readLine())["ok"] as? Bool == true)
        // Far more than the kernel's socket buffers hold while the watcher is not reading:
        // the rest waits in the server's queue when the stop comes (as the revealed trials of
        // a double-blind session can, when lineupd is stopped right after the session ends).
        let pad = String(repeating: "x", count: 1000)
        let count = 2000
        for i in 0..<count { #expect(station.emit(#"{"n":\#(i),"pad":"\#(pad)"}"#) == 1) }
        let stopper = Thread { server.stop() }
        stopper.start()
        let lines = raw.readAll()
        #expect(lines.count == count, "the watcher got \(lines.count) of \(count) events")
        #expect(lines.last?.hasPrefix(#"{"n":\#(count - 1),"#) == true, "the last: \(lines.last?.prefix(12) ?? "none")")
    }

    @Test("a watcher that never reads is cut off; the server and other clients go on")
    func slowWatcherIsDropped() throws {
        let (server, station, client) = try makeServer("slow", maxQueuedBytes: 16 * 1024)
        defer { server.stop() }
        let raw = try #require(RawConnection(path: client.path))
        raw.send(#"{"v":1,"id":1,"request":"watch"}"# + "\n")
        #expect(json(raw.readLine())["ok"] as? Bool == true)
        let event = "{\"event\":\"edge\",\"pad\":\"" + String(repeating: "x", count: 1000) + "\"}"
        var sent = 0
        // The kernel's buffer and the server's queue fill, then `send` says the watcher is gone.
        while sent < 100_000, station.emit(event) == 1 { sent += 1 }
        #expect(sent < 100_000)
        #expect(eventually { station.unwatched.count == 1 })
        #expect(try client.status().state == .idle)
        // What was queued before the cut arrives whole, then the stream ends.
        let lines = raw.readAll()
        #expect(lines.allSatisfy { $0 == event })
        #expect(lines.count <= sent)
    }

    @Test("the socket file is mode 0660, removed on stop; a stale file is replaced, a live daemon is not")
    func socketFile() throws {
        let myGroup = try #require(getgrgid(getegid())).pointee.gr_name.map { String(cString: $0) }
        let (server, _, client) = try makeServer("file", group: myGroup)
        var info = stat()
        #expect(stat(client.path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o660)
        #expect(info.st_mode & S_IFMT == S_IFSOCK)
        #expect(info.st_gid == getegid())

        let second = ControlServer(controller: FakeStation(), options: .init(path: client.path, group: nil))
        #expect(throws: ControlServerError.alreadyRunning(client.path)) { try second.start() }
        #expect(try client.status().state == .idle)

        server.stop()
        #expect(access(client.path, F_OK) != 0)
        #expect(throws: ControlClientError.notRunning(path: client.path)) { try client.status() }

        // A socket file nobody listens on, as a crashed daemon leaves it.
        let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in client.path.utf8.enumerated() { raw[i] = b }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(stale, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(bound == 0)
        close(stale)
        #expect(throws: ControlClientError.staleSocket(path: client.path)) { try client.status() }
        let restarted = ControlServer(controller: FakeStation(), options: .init(path: client.path, group: nil))
        try restarted.start()
        #expect(try client.status().state == .idle)
        restarted.stop()
    }

    @Test(
        "the socket is given to another group when the daemon may (root), without a warning",
        .enabled(if: geteuid() == 0 && getgrnam("nogroup") != nil, "needs root and the group nogroup"))
    func anotherGroup() throws {
        let path = temporarySocketPath("chgrp")
        let server = ControlServer(controller: FakeStation(), options: .init(path: path, group: "nogroup"))
        #expect(try server.start().isEmpty)
        defer { server.stop() }
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_gid == getgrnam("nogroup").pointee.gr_gid)
        #expect(try ControlClient(path: path).status().state == .idle)
        // What a non-member's refusal names: the socket's group as lineupd set it.
        #expect(socketGroup(path) == "nogroup")
    }

    @Test("a missing group is a warning, not a failure; a plain file at the path is left alone")
    func groupAndPathProblems() throws {
        let path = temporarySocketPath("group")
        let server = ControlServer(
            controller: FakeStation(), options: .init(path: path, group: "no-such-group-lineup-test"))
        let warnings = try server.start()
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("no-such-group-lineup-test") == true)
        #expect(try ControlClient(path: path).status().state == .idle)
        server.stop()

        #expect(FileManager.default.createFile(atPath: path, contents: Data("keep".utf8)))
        defer { unlink(path) }
        let blocked = ControlServer(controller: FakeStation(), options: .init(path: path, group: nil))
        #expect(throws: ControlServerError.notASocket(path)) { try blocked.start() }
        #expect(FileManager.default.contents(atPath: path) == Data("keep".utf8))
    }

    @Test("when every slot is a watcher, a newcomer gets an error line and is closed")
    func tooManyClients() throws {
        let (server, station, client) = try makeServer("busy", maxClients: 2)
        defer { server.stop() }
        var held: [RawConnection] = []
        for i in 0..<2 {
            let raw = try #require(RawConnection(path: client.path))
            raw.send("{\"v\":1,\"id\":\(i),\"request\":\"watch\"}\n")
            #expect(json(raw.readLine())["ok"] as? Bool == true)
            held.append(raw)
        }
        let extra = try #require(RawConnection(path: client.path))
        let lines = extra.readAll()
        #expect(lines.count == 1)
        #expect(errorCode(lines.first) == "busy")
        do {
            _ = try client.status()
            Issue.record("a third client was served")
        } catch {
            guard case .refused(let refusal) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(refusal.code == .busy)
            #expect(refusal.message == "too many control clients (2, all watching); try again later")
        }
        held.removeAll()
        #expect(eventually { (try? client.status()) != nil })
        #expect(station.calls.allSatisfy { $0 == "watch" || $0 == "status" })
    }

    @Test("a missing socket and a refused one read as the trainer needs them")
    func clientMessages() {
        #expect(
            ControlClientError.notRunning(path: "/run/lineup/control.sock").description
                == "lineupd is not running (no socket at /run/lineup/control.sock)")
        #expect(
            ControlClientError.notAllowed(path: "/run/lineup/control.sock", group: "lineup").description
                == "not allowed to control the station: /run/lineup/control.sock is for the lineup group")
        // lineupd run with another --group: the message names that group, not "lineup".
        #expect(
            ControlClientError.notAllowed(path: "/run/lab/control.sock", group: "trainers").description
                == "not allowed to control the station: /run/lab/control.sock is for the trainers group")
        #expect(
            ControlClientError.notAllowed(path: "/run/lab/control.sock", group: nil).description
                == "not allowed to control the station: /run/lab/control.sock is for the station's group")
        let missing = ControlClient(path: "/tmp/lineup-test-none-\(getpid()).sock")
        #expect(throws: ControlClientError.notRunning(path: missing.path)) { try missing.status() }
    }
}

@Suite("Control socket: lifetime")
struct ControlLifetimeTests {
    @Test("several requests on one connection are answered in order; CRLF and blank lines are fine")
    func pipelined() throws {
        let (server, station, client) = try makeServer("pipe")
        defer { server.stop() }
        let raw = try #require(RawConnection(path: client.path))
        raw.send(
            "{\"v\":1,\"id\":1,\"request\":\"status\"}\r\n\n"
                + "{\"v\":1,\"id\":2,\"request\":\"ready\"}\n{\"v\":1,\"id\":3,\"request\":\"status\"}\n")
        raw.shutdownWriting()
        let replies = raw.readAll().map(json)
        #expect(replies.map { $0["id"] as? Int } == [1, 2, 3])
        #expect(replies.map { $0["ok"] as? Bool } == [true, false, true])
        #expect(station.calls == ["status", "ready", "status"])
    }

    @Test("stop from another thread closes every client, ends the watches and removes the socket")
    func stopWithClients() throws {
        let (server, station, client) = try makeServer("stop")
        let watcher = try #require(RawConnection(path: client.path))
        watcher.send(#"{"v":1,"id":1,"request":"watch"}"# + "\n")
        #expect(json(watcher.readLine())["ok"] as? Bool == true)
        let idle = try #require(RawConnection(path: client.path))
        idle.send(#"{"v":1,"id":1,"request":"sta"#)  // half a request

        let stopper = Thread { server.stop() }
        stopper.start()
        #expect(watcher.readAll().isEmpty)
        #expect(idle.readAll().isEmpty)
        #expect(eventually { station.unwatched.count == 1 && access(client.path, F_OK) != 0 })
        #expect(station.emit("{}") == 0)
        server.stop()  // twice is fine
        #expect(station.calls == ["watch"])
    }
}
