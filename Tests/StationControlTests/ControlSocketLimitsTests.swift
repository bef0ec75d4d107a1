import Foundation
import StationControl
import Testing
import TrainingEngine

#if canImport(Glibc)
    import Glibc
#endif

private let session = SessionRequest(dog: "Rex", program: "study", step: "indicate/1", mode: .automated)
private let halfRequest = #"{"v":1,"id":1,"request":"sta"#

/// Opens `count` connections that say nothing, every other one sending half a request.
private func idleConnections(_ count: Int, to path: String) throws -> [RawConnection] {
    try (0..<count).map { i in
        let raw = try #require(RawConnection(path: path))
        if i % 2 == 1 { raw.send(halfRequest) }
        return raw
    }
}

/// The line a closed idle connection was given, if it was closed; nil while it is open.
private func closingLine(_ raw: RawConnection) -> String? {
    guard raw.hasInputNow else { return nil }
    return raw.readLine() ?? "(closed without a line)"
}

@Suite("Control socket: idle and greedy clients")
struct ControlSocketLimitsTests {
    @Test("forty silent connections from one user cannot keep the trainer's abort out")
    func oneUserCannotLockTheTrainerOut() throws {
        // The idle time-out is far longer than the test: only the per-user limit makes room.
        let (server, station, client) = try makeServer("greedy", idleTimeout: 600)
        defer { server.stop() }
        _ = try client.startSession(session)
        let silent = try idleConnections(40, to: client.path)

        // The trainer is the same user here (the worst case): its abort takes the place of the
        // longest idle of that user's connections, and is answered.
        try client.abort()
        #expect(station.calls == ["startSession Rex automated", "abort"])

        // Every accept happened before the abort's reply: the user kept 8 connections, its
        // newest; the 33 older ones were closed with a line saying why.
        let lines = silent.map(closingLine)
        #expect(lines.prefix(33).allSatisfy { $0 != nil })
        #expect(lines.suffix(7).allSatisfy { $0 == nil })
        for line in lines.prefix(33) {
            #expect(errorCode(line) == "busy")
            let message = (json(line)["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.hasPrefix("closed to make room for another client: no complete request in "), "\(message)")
        }
        // The seven left are still served: each completes its half request or sends one.
        for (i, raw) in silent.enumerated().dropFirst(33) {
            raw.send(i % 2 == 1 ? #"tus"}"# + "\n" : #"{"v":1,"id":1,"request":"status"}"# + "\n")
            #expect(json(raw.readLine())["ok"] as? Bool == true)
        }
    }

    @Test("every slot taken by silent connections: a newcomer takes the longest idle one's place")
    func aFullServerMakesRoom() throws {
        let (server, station, client) = try makeServer("full", idleTimeout: 600, maxClientsPerUser: 32)
        defer { server.stop() }
        _ = try client.startSession(session)
        let silent = try idleConnections(34, to: client.path)
        try client.abort()
        #expect(station.calls == ["startSession Rex automated", "abort"])
        // The 33rd and 34th took the places of the first two; the abort that of the third.
        let lines = silent.map(closingLine)
        #expect(lines.prefix(3).allSatisfy { errorCode($0) == "busy" })
        #expect(lines.dropFirst(3).allSatisfy { $0 == nil })
    }

    @Test("a connection without a complete request is closed after the idle time-out; a watcher and a talker are not")
    func idleConnectionsAreClosed() throws {
        let (server, station, client) = try makeServer("idle", idleTimeout: 1)
        defer { server.stop() }
        let watcher = try #require(RawConnection(path: client.path))
        watcher.send(#"{"v":1,"id":1,"request":"watch"}"# + "\n")
        #expect(json(watcher.readLine())["ok"] as? Bool == true)

        // A client that keeps asking, on its own thread, until the idle ones are closed.
        let talker = Talker(try #require(RawConnection(path: client.path)))
        let thread = Thread { talker.talk() }
        thread.start()

        let silent = try idleConnections(6, to: client.path)
        // Each is closed by the server after the time-out; the read's own 10 s time-out only
        // keeps a failing run from hanging.
        for raw in silent {
            let lines = raw.readAll()
            #expect(lines.count == 1)
            #expect(errorCode(lines.first) == "busy")
            let message = (json(lines.first)["error"] as? [String: Any])?["message"] as? String
            #expect(message == "closed: no complete request in 1 s")
        }
        talker.stop()
        #expect(eventually { thread.isFinished })
        // The talker connected before the silent ones and outlived them, by asking.
        let (answered, unanswered) = talker.counts
        #expect(unanswered == 0)
        #expect(answered > 0)
        talker.raw.send(#"{"v":1,"id":8,"request":"status"}"# + "\n")
        #expect(json(talker.raw.readLine())["id"] as? Int == 8)

        // The watcher, older still, is not idle: it still gets the station's events.
        #expect(station.emit(#"{"event":"still-here"}"#) == 1)
        #expect(watcher.readLine() == #"{"event":"still-here"}"#)
        #expect(station.unwatched.isEmpty)
    }

    @Test("a user whose every connection watches is refused one more, with what to do")
    func aUserOfWatchersIsRefused() throws {
        let (server, _, client) = try makeServer("watchers", maxClientsPerUser: 2)
        defer { server.stop() }
        var watchers: [RawConnection] = []
        for _ in 0..<2 {
            let raw = try #require(RawConnection(path: client.path))
            raw.send(#"{"v":1,"id":1,"request":"watch"}"# + "\n")
            #expect(json(raw.readLine())["ok"] as? Bool == true)
            watchers.append(raw)
        }
        #expect(
            throws: ControlClientError.refused(
                ControlRefusal(
                    .busy,
                    "too many control connections from uid \(getuid()) (2, all watching: pid \(getpid())); close one and try again"
                ))
        ) {
            try client.status()
        }
        watchers.removeAll()
        #expect(eventually { (try? client.status()) != nil })
    }

    @Test(
        "one user at its limit makes room from its own connections, never another user's",
        .enabled(
            if: geteuid() == 0 && access("/usr/bin/setpriv", X_OK) == 0 && access("/usr/bin/python3", X_OK) == 0,
            "needs root, setpriv and python3 to connect as another user"))
    func anotherUsersConnectionsAreLeftAlone() throws {
        let (server, station, client) = try makeServer("users", idleTimeout: 600, maxClientsPerUser: 3)
        defer { server.stop() }
        #expect(chmod(client.path, 0o666) == 0)
        _ = try client.startSession(session)
        // nobody holds three connections, each with half a request.
        let other = try OtherUser(path: client.path, connections: 3)
        #expect(other.line() == "ready")
        // This user floods: its own oldest go, to the limit of three.
        let mine = try idleConnections(10, to: client.path)
        try client.abort()
        #expect(mine.map(closingLine).filter { $0 != nil }.count == 8)
        // nobody's three are open and answer once their requests are whole.
        other.say("check")
        #expect(other.line() == "closed 0")
        #expect(other.line() == "answered 3")
        #expect(station.calls == ["startSession Rex automated", "abort", "status", "status", "status"])
    }
}

/// A client that sends status requests one after the other, on a thread of its own.
private final class Talker: @unchecked Sendable {
    // @unchecked: `raw` is used by one thread at a time (the talking thread, then the test's
    // after `stop`); the rest is behind `lock`.
    let raw: RawConnection
    private let lock = NSLock()
    private var talking = true
    private var answered = 0
    private var unanswered = 0

    init(_ raw: RawConnection) { self.raw = raw }

    func talk() {
        while lock.withLock({ talking }) {
            raw.send(#"{"v":1,"id":7,"request":"status"}"# + "\n")
            let ok = json(raw.readLine())["ok"] as? Bool == true
            lock.withLock {
                if ok { answered += 1 } else { unanswered += 1 }
            }
        }
    }

    func stop() { lock.withLock { talking = false } }
    var counts: (answered: Int, unanswered: Int) { lock.withLock { (answered, unanswered) } }
}

/// Connections held by the user nobody (uid 65534) in a child process: setpriv and python3.
private final class OtherUser {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffer: [UInt8] = []

    init(path: String, connections: Int) throws {
        let script = """
            import json, select, socket, sys
            path, n = sys.argv[1], int(sys.argv[2])
            socks = []
            for i in range(n):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(path)
                s.sendall(b'{"v":1,"id":1,"request":"sta')
                socks.append(s)
            print("ready", flush=True)
            sys.stdin.readline()
            closed = select.select(socks, [], [], 0)[0]
            print("closed", len(closed), flush=True)
            answered = 0
            for s in socks:
                if s in closed:
                    continue
                s.sendall(b'tus"}\\n')
                s.settimeout(10)
                if json.loads(s.makefile().readline()).get("ok") is True:
                    answered += 1
            print("answered", answered, flush=True)
            """
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = [
            "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script, path,
            "\(connections)",
        ]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    deinit {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    func say(_ text: String) { input.fileHandleForWriting.write(Data((text + "\n").utf8)) }

    /// The child's next line; nil if none comes within 20 s (a failing run must not hang).
    func line() -> String? {
        let fd = output.fileHandleForReading.fileDescriptor
        while true {
            if let i = buffer.firstIndex(of: 0x0A) {
                let text = String(decoding: buffer[..<i], as: UTF8.self)
                buffer.removeSubrange(...i)
                return text
            }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 20_000) > 0 else { return nil }
            var chunk = [UInt8](repeating: 0, count: 256)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { return nil }
            buffer += chunk[0..<n]
        }
    }
}
