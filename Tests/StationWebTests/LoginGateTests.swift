import Foundation
import Glibc
import Hummingbird
import StationWeb
import Testing
import WebAccounts

/// The login gate (docs/web.md, "What an attacker on the station's network can do"): a login
/// the page would refuse anyway, from a browser it does not remember, is answered from its
/// request's head alone, never parsed (issue 33: each of a flood's refused logins was parsed,
/// routed and answered on the pool that serves the trainer's page). Against the real server,
/// on a port, from addresses of 127.0.0.0/8.
@Suite struct LoginGateTests {
    /// The page's server with `state`, serving while `body` runs.
    func serving<T: Sendable>(_ state: WebState, _ body: @escaping @Sendable (Int) throws -> T) async throws -> T {
        let port = freePort()
        let app = WebServer.application(state: state, host: "127.0.0.1", port: port)
        let server = Task { try await app.runService(gracefulShutdownSignals: []) }
        defer { server.cancel() }
        return try await onThread {
            let ready = Date().addingTimeInterval(15)
            while Date() < ready, httpRequest(port: port, "GET", "/login", timeout: 1)?.status != 200 {
                Thread.sleep(forTimeInterval: 0.05)
            }
            return try body(port)
        }
    }

    static func login(_ port: Int, from source: String, body: String, cookie: String? = nil) -> HTTPReply? {
        httpRequest(
            port: port, "POST", "/api/login", from: source,
            headers: ["Origin: http://127.0.0.1:\(port)", "Content-Type: application/json"]
                + (cookie.map { ["Cookie: " + $0] } ?? []), body: body)
    }

    /// A login's head alone, announcing a body it never sends: the answer, or nil when none
    /// came within 5 s (the page then waits for the body until its deadline, 10 s).
    static func headOnly(_ port: Int, from source: String) -> HTTPReply? {
        guard let fd = connectFrom(source, port: port, nonBlocking: false, timeout: 5) else { return nil }
        defer { close(fd) }
        let head =
            "POST /api/login HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nOrigin: http://127.0.0.1:\(port)\r\n"
            + "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
        guard head.withCString({ send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }) > 0 else { return nil }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            received += buffer[0..<n]
        }
        let text = String(decoding: received, as: UTF8.self)
        guard text.hasPrefix("HTTP/1.1 "), let status = Int(text.dropFirst(9).prefix(3)) else { return nil }
        return HTTPReply(status: status, headers: [], body: text, seconds: 0)
    }

    @Test func aLoginOverItsAddresssLimitIsRefusedFromItsHeadAloneAndNeverParsed() async throws {
        // The limit counts in virtual time: no bucket refills while the test runs.
        let clock = VirtualClock()
        let state = WebState(users: try makeUsers(), link: CountingLink(), refusedLoginWait: 0.2, now: { clock.now })
        let replies = try await serving(state) { port -> [String: HTTPReply?] in
            let source = "127.0.6.1"
            var replies: [String: HTTPReply?] = [:]
            // The address's 5 attempts, each a wrong password, checked and refused.
            for i in 0..<5 {
                replies["wrong \(i)"] = Self.login(
                    port, from: source, body: #"{"name":"trainer1","password":"wrong-\#(i)"}"#)
            }
            // A body that is not JSON: parsed, it would be refused as such (400).
            replies["not JSON"] = Self.login(port, from: source, body: "not JSON")
            // A body announced and never sent: waited for, it would get no answer before its deadline.
            replies["head only"] = Self.headOnly(port, from: source)
            // A browser with a device cookie goes on to the login itself, where its own bucket is
            // decided (this cookie is not remembered: the parser refuses the body).
            replies["device cookie"] = Self.login(port, from: source, body: "not JSON", cookie: "lineup_device=abc")
            // Anything else from the same address goes on, and another address's login too.
            replies["page"] = httpRequest(port: port, "GET", "/login", from: source)
            replies["other address"] = Self.login(port, from: "127.0.6.2", body: "not JSON")
            return replies
        }
        for i in 0..<5 {
            #expect(replies["wrong \(i)"]??.status == 401, "attempt \(i): \(String(describing: replies["wrong \(i)"]))")
        }
        let refused = try #require(replies["not JSON"] ?? nil, "the refused login got no answer")
        #expect(
            refused.status == 429,
            "a login over its address's limit reached the parser: \(refused.status) \(refused.body)")
        #expect(refused.header("Retry-After") == ["12"])
        #expect(refused.header("Content-Security-Policy").count == 1)
        #expect(refused.body.contains(#""code":"rate-limited""#))
        #expect(replies["head only"]??.status == 429, "a login over its address's limit waited for its body")
        #expect(replies["device cookie"]??.status == 400)
        #expect(replies["page"]??.status == 200)
        #expect(replies["other address"]??.status == 400)
    }

    @Test func aLoginMeetingAFullChecksLineIsRefusedFromItsHeadAloneAndNeverParsed() async throws {
        // A line of no places: every check would be refused.
        let state = WebState(
            users: try makeUsers(), link: CountingLink(), checks: PasswordChecks(waitingLimit: 0), refusedLoginWait: 0.2
        )
        let replies = try await serving(state) { port in
            [
                Self.login(port, from: "127.0.6.3", body: "not JSON"), Self.headOnly(port, from: "127.0.6.4"),
                Self.login(port, from: "127.0.6.5", body: "not JSON", cookie: "lineup_device=abc"),
            ]
        }
        #expect(
            replies[0]?.status == 503,
            "a login meeting a full line reached the parser: \(String(describing: replies[0]))")
        #expect(replies[0]?.header("Retry-After") == ["5"])
        #expect(replies[0]?.body.contains(#""code":"busy""#) == true)
        #expect(replies[1]?.status == 503, "a login meeting a full line waited for its body")
        #expect(replies[2]?.status == 400)
    }

    /// A refused login waits from `refusedLoginWait` to half as long again, at random (issue 33:
    /// each waiting the same, a flood's logins came back in one wave a second, and the trainer's
    /// new connection waited behind the whole wave to be accepted: up to 410 ms).
    @Test func refusedLoginsWaitFromTheWaitToHalfAsLongAgainAtRandom() throws {
        let state = WebState(users: try makeUsers(), link: CountingLink(), refusedLoginWait: 1)
        let waits = (0..<200).map { _ in state.refusalWait() }
        #expect(waits.allSatisfy { $0 >= 1 && $0 < 1.5 }, "\(waits.filter { $0 < 1 || $0 >= 1.5 })")
        // Spread over the half second: 200 draws within 0.4 s of each other have odds under 1e-16.
        #expect(waits.max()! - waits.min()! > 0.4)
    }
}
