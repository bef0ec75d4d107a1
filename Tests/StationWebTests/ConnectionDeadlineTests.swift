import Foundation
import Glibc
import StationWeb
import Synchronization
import Testing

/// The page's connection deadlines and caps, against a real `lineup-web` (`ConnectionLimits`,
/// docs/web.md "Connections"): a connection that sends nothing, one that sends its request's
/// head a byte at a time and one that never finishes its body are each closed at their
/// deadline (10 s), a kept-alive one left idle after an answer at its own (30 s); one over its
/// address's cap (32) is closed at once. All at once, each on a thread of its own: about 30 s.
@Suite struct ConnectionDeadlineTests {
    static let limits = ConnectionLimits()

    /// Seconds until lineup-web closes `fd` (reads until end of file), after `sending` each
    /// chunk 0.5 s apart; nil if it was still open after `within` seconds.
    static func closedAfter(_ fd: Int32, sending chunks: [String] = [], within: Double) -> Double? {
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
                nextSend = Date().addingTimeInterval(0.5)
            }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                return Date().timeIntervalSince(start)
            }
        }
        return nil
    }

    @Test func eachConnectionIsClosedAtItsDeadlineAndOverItsAddresssCapAtOnce() async throws {
        guard let station = try SimulatedStation(extra: ["--no-virtual-dog"]) else { return }
        defer { station.terminate() }
        guard let web = try WebProcess(station: station, users: try PageUnderAttackTests().users()) else { return }
        defer { web.terminate() }
        let limits = Self.limits
        let outcome = try await onThread { () -> [String: Double?] in
            guard web.waitReady() else { return [:] }
            let port = web.port
            let head = "GET /login HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            let post =
                "POST /api/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
            let cases: [(String, String, [String])] = [
                ("silent", "127.0.5.1", []),
                // The head a byte at a time, each byte well inside any idle time, never its end.
                ("head a byte at a time", "127.0.5.2", head.dropLast(4).map { String($0) }),
                ("body never finished", "127.0.5.3", [post]),
                ("idle after an answer", "127.0.5.4", [head]),
            ]
            let seconds = Mutex<[String: Double?]>([:])
            let within = limits.idleSeconds + 10
            var threads = cases.map { name, source, chunks in
                Thread {
                    guard let fd = connectFrom(source, port: port, nonBlocking: false) else { return }
                    let closed = Self.closedAfter(fd, sending: chunks, within: within)
                    close(fd)
                    seconds.withLock { $0[name] = closed }
                }
            }
            // Over the address's cap: the one after the cap is closed at once, those held stay.
            threads.append(
                Thread {
                    let held = (0..<limits.perAddress).compactMap { _ in
                        connectFrom("127.0.5.5", port: port, nonBlocking: false)
                    }
                    Thread.sleep(forTimeInterval: 0.5)
                    if let fd = connectFrom("127.0.5.5", port: port, nonBlocking: false) {
                        let closed = Self.closedAfter(fd, within: 2)
                        close(fd)
                        seconds.withLock { $0["one over the cap"] = closed }
                    }
                    held.forEach { close($0) }
                })
            threads.forEach { $0.start() }
            while threads.contains(where: { !$0.isFinished }) { Thread.sleep(forTimeInterval: 0.05) }
            return seconds.withLock { $0 }
        }
        print("connection-deadlines: \(outcome)")
        #expect(outcome.count == 5, "lineup-web did not answer, or a connection was not made: \(outcome)")
        let deadlines = [
            "silent": limits.headerSeconds, "head a byte at a time": limits.headerSeconds,
            "body never finished": limits.bodySeconds, "idle after an answer": limits.idleSeconds,
        ]
        for (name, deadline) in deadlines {
            let closed = outcome[name] ?? nil
            #expect(closed != nil, "\(name): still open \(deadline + 10) s after it opened (deadline \(deadline) s)")
            if let closed {
                #expect(closed >= deadline * 0.9, "\(name): closed after \(closed) s, before its deadline")
            }
        }
        #expect((outcome["one over the cap"] ?? nil) != nil, "a connection over its address's cap was held")
    }
}
