import Foundation
import Glibc
import Hummingbird
import StationWeb
import Testing

/// The page's connection deadlines and caps on a real socket (`ConnectionLimits`, docs/web.md
/// "Connections"): a connection that sends nothing, one that sends its request's head a byte
/// at a time, one that never finishes its body and a kept-alive one left idle are each closed
/// at their deadline; one over its address's cap is closed at once. The deadlines here are
/// short (0.5 s) so the test is quick; the station's are 10, 10 and 30 s.
@Suite struct ConnectionDeadlineTests {
    static let limits: ConnectionLimits = {
        var limits = ConnectionLimits(total: 64, perAddress: 4)
        limits.headerSeconds = 0.5
        limits.bodySeconds = 0.5
        limits.idleSeconds = 0.5
        return limits
    }()

    /// Seconds until lineup-web closes `fd` (reads until end of file), after `sending` each
    /// chunk 0.2 s apart; nil if it was still open after `within` seconds.
    func closedAfter(_ fd: Int32, sending chunks: [String] = [], within: Double = 5) -> Double? {
        let start = Date()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var time = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var pending = chunks
        var nextSend = Date()
        while Date().timeIntervalSince(start) < within {
            if !pending.isEmpty && Date() >= nextSend {
                let chunk = pending.removeFirst()
                _ = chunk.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
                nextSend = Date().addingTimeInterval(0.2)
            }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                return Date().timeIntervalSince(start)
            }
        }
        return nil
    }

    @Test func eachConnectionIsClosedAtItsDeadlineAndOverItsAddresssCapAtOnce() async throws {
        let state = WebState(users: try makeUsers(), link: CountingLink(), refusedLoginWait: 0)
        let port = freePort()
        let app = WebServer.application(state: state, host: "127.0.0.1", port: port, limits: Self.limits)
        let server = Task { try await app.run() }
        defer { server.cancel() }
        let outcome = try await onThread { () -> [String: Double?] in
            var answered = false
            for _ in 0..<100 where !answered {
                answered = httpRequest(port: port, "GET", "/login", timeout: 1)?.status == 200
                if !answered { Thread.sleep(forTimeInterval: 0.05) }
            }
            guard answered else { return [:] }
            var seconds: [String: Double?] = [:]
            let head = "GET /login HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            // Nothing sent at all.
            if let fd = connectFrom("127.0.5.1", port: port, nonBlocking: false) {
                seconds["silent"] = closedAfter(fd)
                close(fd)
            }
            // The head a byte at a time, each byte well inside any idle time but never the end.
            if let fd = connectFrom("127.0.5.2", port: port, nonBlocking: false) {
                seconds["head a byte at a time"] = closedAfter(fd, sending: head.dropLast(4).map { String($0) })
                close(fd)
            }
            // A whole head promising a body that never comes.
            if let fd = connectFrom("127.0.5.3", port: port, nonBlocking: false) {
                let post =
                    "POST /api/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
                seconds["body never finished"] = closedAfter(fd, sending: [post])
                close(fd)
            }
            // A whole request answered, then nothing more on the kept-alive connection.
            if let fd = connectFrom("127.0.5.4", port: port, nonBlocking: false) {
                seconds["idle after an answer"] = closedAfter(fd, sending: [head])
                close(fd)
            }
            // Over the address's cap (4): the fifth is closed at once, the four are held.
            let held = (0..<4).compactMap { _ in connectFrom("127.0.5.5", port: port, nonBlocking: false) }
            Thread.sleep(forTimeInterval: 0.1)
            if let fd = connectFrom("127.0.5.5", port: port, nonBlocking: false) {
                seconds["fifth from one address"] = closedAfter(fd, within: 0.4)
                close(fd)
            }
            held.forEach { close($0) }
            return seconds
        }
        print("connection-deadlines: \(outcome)")
        #expect(outcome.count == 5, "lineup-web's server did not answer, or a connection was not made: \(outcome)")
        for name in ["silent", "head a byte at a time", "body never finished", "idle after an answer"] {
            let closed = outcome[name] ?? nil
            #expect(closed != nil, "\(name): still open after 5 s (deadline 0.5 s)")
            if let closed { #expect(closed >= 0.4, "\(name): closed after \(closed) s, before its deadline") }
        }
        #expect(
            (outcome["fifth from one address"] ?? nil) != nil, "a fifth connection from one address was held (cap 4)")
    }
}
