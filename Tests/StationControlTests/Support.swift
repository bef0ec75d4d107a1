import Foundation
import StationControl
import TrainingEngine

#if canImport(Glibc)
    import Glibc
#endif

/// A station that records every call, with a session the tests can set up.
final class FakeStation: StationControlling, @unchecked Sendable {
    // @unchecked: every field is behind `lock`.
    private let lock = NSLock()
    private var _calls: [String] = []
    private var session: SessionRequest?
    private var watchers: [Int: @Sendable (String) -> Bool] = [:]
    private var nextToken = 1
    private var _unwatched: [Int] = []

    var calls: [String] { lock.withLock { _calls } }
    var watcherCount: Int { lock.withLock { watchers.count } }
    var unwatched: [Int] { lock.withLock { _unwatched } }

    let layoutNow = [
        LayoutEntry(station: "1", kind: .blank, sample: nil),
        LayoutEntry(station: "2", kind: .target, sample: "T-7"),
        LayoutEntry(station: "3", kind: .control, sample: "C-2"),
    ]

    private func record(_ call: String) { lock.withLock { _calls.append(call) } }

    func status() -> StationStatus {
        record("status")
        return lock.withLock {
            StationStatus(
                state: session == nil ? .idle : .waitingForReady, session: session.map { _ in "S1" },
                dog: session?.dog, mode: session?.mode, trial: session == nil ? nil : 0, trials: session?.trials,
                audio: "simulated", gpio: "simulated", clicks: 3, edges: 12, uptimeSeconds: 1.5)
        }
    }

    func startSession(_ request: SessionRequest) throws(ControlRefusal) -> SessionStarted {
        record("startSession \(request.dog) \(request.mode?.rawValue ?? "-")")
        let running = lock.withLock {
            if session != nil { return true }
            session = request
            return false
        }
        if running { throw ControlRefusal(.sessionRunning, "a session is already running") }
        return SessionStarted(session: "S1")
    }

    func layout(view: ClientView) throws(ControlRefusal) -> [LayoutEntry] {
        record("layout \(view.rawValue)")
        let mode = lock.withLock { session?.mode }
        guard let mode else { throw ControlRefusal(.noSession, "no session is running") }
        if mode == .doubleBlind, view == .handler {
            throw ControlRefusal(.blind, "the layout is hidden from the handler in a double-blind session")
        }
        return layoutNow
    }

    func ready() throws(ControlRefusal) -> ReadyReply {
        record("ready")
        if lock.withLock({ session == nil }) { throw ControlRefusal(.noSession, "no session is running") }
        return ReadyReply(result: "started", trial: 1, message: "trial 1 of 1 started")
    }

    func abort() throws(ControlRefusal) {
        record("abort")
        if lock.withLock({ session == nil }) { throw ControlRefusal(.noSession, "no session is running") }
    }

    func addDog(_ entry: DogEntry) throws(ControlRefusal) -> String {
        record("addDog \(entry.name) \(entry.born ?? "-")")
        if entry.name.isEmpty { throw ControlRefusal(.badRequest, "a dog needs a name") }
        return "D1"
    }

    func addSample(_ entry: SampleEntry) throws(ControlRefusal) -> String {
        record("addSample \(entry.label) \(entry.kind.rawValue) \(entry.facts.collectedOn ?? "-")")
        if entry.label == "T-1" { throw ControlRefusal(.duplicate, "a sample labelled \"T-1\" is already in the log") }
        return "S-\(entry.label)"
    }

    func noteSample(_ entry: SampleNoteEntry) throws(ControlRefusal) -> String {
        record("noteSample \(entry.sample) \(entry.text)")
        return "N1"
    }

    func noteDog(_ entry: DogNoteEntry) throws(ControlRefusal) -> String {
        record("noteDog \(entry.dog) \(entry.text)")
        if entry.dog == "Nobody" { throw ControlRefusal(.unknown, "no dog \"Nobody\" in the log") }
        return "DN1"
    }

    func correctTrial(_ entry: TrialCorrectionEntry) throws(ControlRefusal) -> String {
        record(
            "correctTrial \(entry.trial) \(entry.outcome.rawValue) \(entry.indicated.map(String.init) ?? "-") \(entry.reason)"
        )
        if entry.trial == "nope" { throw ControlRefusal(.unknown, "no trial \"nope\" in the log") }
        return "C1"
    }

    func noteSession(_ entry: SessionNoteEntry) throws(ControlRefusal) -> String {
        record("noteSession \(entry.session) \(entry.text)")
        return "N1"
    }

    func simulate(_ input: SimulatedInput) throws(ControlRefusal) {
        record("simulate \(input.input) \(input.active)")
        throw ControlRefusal(.badRequest, "not a simulated station")
    }

    func about() -> StationAbout {
        record("about")
        return StationAbout(
            log: "/var/lib/lineup/lineup.db", programsDirectory: nil,
            programs: [OfferedProgram(name: "study", source: "built-in", text: "name = \"study\"", refused: nil)])
    }

    func version() -> StationVersion {
        record("version")
        return StationVersion(protocolVersion: 1, libgpiod: "2.1.3 (v2 API)", alsaLib: "1.2.8")
    }

    func endSession(suggestions: String?) throws(ControlRefusal) {
        record("endSession \(suggestions ?? "-")")
        let had = lock.withLock {
            defer { session = nil }
            return session != nil
        }
        if !had { throw ControlRefusal(.noSession, "no session is running") }
    }

    func watch(_ send: @escaping @Sendable (String) -> Bool) -> Int {
        record("watch")
        return lock.withLock {
            defer { nextToken += 1 }
            watchers[nextToken] = send
            return nextToken
        }
    }

    func unwatch(_ token: Int) {
        lock.withLock {
            watchers[token] = nil
            _unwatched.append(token)
        }
    }

    /// Sends one event to every watcher, as the daemon's log thread would; drops those that
    /// return false. Returns how many took it.
    @discardableResult
    func emit(_ line: String) -> Int {
        let current = lock.withLock { watchers }
        var took = 0
        for (token, send) in current {
            if send(line) {
                took += 1
            } else {
                lock.withLock { watchers[token] = nil }
            }
        }
        return took
    }
}

/// A short, unique socket path (sun_path holds 108 bytes).
func temporarySocketPath(_ name: String) -> String {
    "/tmp/lineup-test-\(getpid())-\(name)-\(UInt32.random(in: 0...UInt32.max)).sock"
}

/// A fresh server on a temporary path, with a fake station behind it.
func makeServer(
    _ name: String, group: String? = nil, maxClients: Int = 32, maxQueuedBytes: Int = 256 * 1024,
    idleTimeout: Double = 10, maxClientsPerUser: Int = 8
) throws -> (ControlServer, FakeStation, ControlClient) {
    let station = FakeStation()
    let path = temporarySocketPath(name)
    let server = ControlServer(
        controller: station,
        options: .init(
            path: path, group: group, maxClients: maxClients, maxQueuedBytes: maxQueuedBytes, idleTimeout: idleTimeout,
            maxClientsPerUser: maxClientsPerUser))
    try server.start()
    return (server, station, ControlClient(path: path, timeout: 10))
}

/// Polls a condition for up to `seconds`; for effects that land on the server's thread.
func eventually(_ seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        if condition() { return true }
        usleep(2000)
    }
    return condition()
}

/// A raw blocking connection for sending bytes the real client never would.
final class RawConnection {
    let fd: Int32
    private var buffer: [UInt8] = []

    init?(path: String) {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
            raw[bytes.count] = 0
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if rc != 0 {
            close()
            return nil
        }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends what it can; a server that has closed the connection ends the send quietly.
    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n <= 0 { return }
            offset += n
        }
    }

    func send(_ text: String) { send(Array(text.utf8)) }

    func shutdownWriting() { shutdown(fd, Int32(SHUT_WR)) }

    /// Whether something (a line, or the end of the stream) is waiting to be read now.
    var hasInputNow: Bool {
        if !buffer.isEmpty { return true }
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) > 0
    }

    /// The next line, or nil at end of stream, reset or timeout.
    func readLine() -> String? {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let i = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<i], as: UTF8.self)
                buffer.removeSubrange(...i)
                return line
            }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return nil }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }

    /// Every line until the server closes.
    func readAll() -> [String] {
        var lines: [String] = []
        while let line = readLine() { lines.append(line) }
        return lines
    }

    private var isClosed = false

    func close() {
        if !isClosed { Glibc.close(fd) }
        isClosed = true
    }

    deinit { close() }
}

/// The reply line as a dictionary, for checks on the wire shape itself.
func json(_ line: String?) -> [String: Any] {
    guard let line, let data = line.data(using: .utf8),
        let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    else { return [:] }
    return object
}

func errorCode(_ line: String?) -> String? {
    (json(line)["error"] as? [String: Any])?["code"] as? String
}

/// SplitMix64: the fuzz's bytes are the same on every run.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
