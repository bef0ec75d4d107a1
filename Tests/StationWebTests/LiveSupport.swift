import Foundation
import Glibc
import StationControl
import Testing

let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// Where the page's tests find the station's programs: `.build/debug`, or the directory in
/// `LINEUP_TEST_BIN_DIR` (a release build's, to measure PageUnderAttackTests' figures on it).
func builtProgram(_ name: String) -> String {
    if let directory = ProcessInfo.processInfo.environment["LINEUP_TEST_BIN_DIR"], !directory.isEmpty {
        return URL(fileURLWithPath: directory).appendingPathComponent(name).path
    }
    return packageRoot.appendingPathComponent(".build/debug/" + name).path
}

/// A real `lineupd --simulate --serve` process, as the page talks to it on a board.
final class SimulatedStation: @unchecked Sendable {
    let process = Process()
    let directory: String
    let socket: String
    let db: String

    /// `directory`: an earlier station's, to start again on its socket and log.
    init?(speed: Double = 30, extra: [String] = [], directory reused: String? = nil) throws {
        let binary = builtProgram("lineupd")
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            Issue.record("lineupd is not built: run `swift build` before `swift test`")
            return nil
        }
        directory =
            reused ?? FileManager.default.temporaryDirectory.appendingPathComponent("web-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        socket = directory + "/control.sock"
        db = directory + "/lineup.db"
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments =
            [
                "--simulate", "--serve", "--socket", socket, "--db", db, "--speed", String(speed), "--no-realtime",
                "--device", "null",
            ] + extra
        var environment = ProcessInfo.processInfo.environment
        for key in ["NOTIFY_SOCKET", "LINEUP_SOCKET", "LINEUP_DB"] { environment[key] = nil }
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    var client: ControlClient { ControlClient(path: socket, timeout: 5) }

    func waitReady() async -> Bool { await eventually(15) { (try? self.client.status()) != nil } }

    /// Stops lineupd (SIGTERM) and awaits its exit on a thread of its own (`onThread`), never
    /// on one of Swift's pool: a test that must see it gone (a restart on its socket and log).
    func stop() async {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        _ = try? await onThread { self.process.waitUntilExit() }
    }

    /// For a `defer`, which cannot await: SIGTERM, its exit reaped on a thread of its own. It
    /// blocked the test's thread until lineupd exited, a thread of Swift's cooperative pool,
    /// which every test in the process and the in-process pages under test share (two on a
    /// two-core machine): PoolStarvationTests shows a page's request timing out meanwhile.
    func terminate() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        Thread { self.process.waitUntilExit() }.start()
    }
}

/// Polls `condition` every 50 ms for at most `seconds`: the wait is bounded, the check is the
/// condition. It sleeps as a task, never blocking a thread: Swift's cooperative pool has one
/// thread per core (two here), and tests blocking both starved every other test's live hub
/// (LivePageTests once saw no frame at all within 5 s while the whole suite ran).
func eventually(_ seconds: Double, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return condition()
}

/// A page's event stream read as raw bytes from a TCP socket: every byte the server sent it.
final class RawStream: @unchecked Sendable {
    private final class Bytes: @unchecked Sendable {
        let lock = NSLock()
        var bytes: [UInt8] = []
    }
    private let received = Bytes()
    private let fd: Int32
    private var thread: Thread?

    var bytes: [UInt8] { received.lock.withLock { received.bytes } }
    var text: String { String(decoding: bytes, as: UTF8.self) }

    init(port: Int, path: String, cookie: String) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { [fd] in
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        let request =
            "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nCookie: \(cookie)\r\nAccept: text/event-stream\r\n\r\n"
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        let descriptor = fd
        let received = self.received
        thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = recv(descriptor, &buffer, buffer.count, 0)
                if n <= 0 { break }
                received.lock.withLock { received.bytes.append(contentsOf: buffer[0..<n]) }
            }
        }
        thread?.start()
    }

    func close() { shutdown(fd, Int32(SHUT_RDWR)) }

    /// The response's body so far, its chunked transfer encoding undone.
    var body: String {
        let all = bytes
        guard let end = all.indices.first(where: { all[$0...].starts(with: Array("\r\n\r\n".utf8)) }) else { return "" }
        var at = end + 4
        var out: [UInt8] = []
        while let lineEnd = all[at...].indices.first(where: { all[$0...].starts(with: Array("\r\n".utf8)) }),
            let size = Int(String(decoding: all[at..<lineEnd], as: UTF8.self), radix: 16), size > 0,
            lineEnd + 2 + size <= all.count
        {
            out += all[(lineEnd + 2)..<(lineEnd + 2 + size)]
            at = lineEnd + 2 + size + 2
            if at >= all.count { break }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The `data:` lines of each `event: name` frame so far.
    func frames(_ name: String) -> [String] {
        let parts = body.components(separatedBy: "\n\n")
        return parts.compactMap { part in
            let lines = part.split(separator: "\n").map(String.init)
            guard lines.contains("event: \(name)"), let data = lines.first(where: { $0.hasPrefix("data: ") }) else {
                return nil
            }
            return String(data.dropFirst(6))
        }
    }

    /// Waits (bounded, without blocking a thread of Swift's pool) until `condition` holds.
    func waitFor(_ seconds: Double, _ condition: (RawStream) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition(self) { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return condition(self)
    }
}
