import Foundation
import Glibc
import StationWeb
import Testing
import WebAccounts

/// The login gate (docs/web.md, "What an attacker on the station's network can do"): a login
/// the page would refuse anyway, from a browser it does not remember, is answered from its
/// request's head alone, never parsed (issue 33: each of a flood's refused logins was parsed,
/// routed and answered on the pool that serves the trainer's page). Against a real lineup-web
/// process, as PageUnderAttackTests (AttackSupport.swift), from addresses of 127.0.0.0/8: never
/// a server in the test process, whose handlers would share Swift's pool with every other
/// test of the run (CI at 50368cd: that pool was held for minutes, and every request here
/// went unanswered).
@Suite struct LoginGateTests {
    /// lineup-web on an accounts file of `users`, with no lineupd behind it (the login needs
    /// none), serving while `body` runs on a thread of its own; killed after it.
    func serving<T: Sendable>(users: String, _ body: @escaping @Sendable (WebProcess) throws -> T) async throws -> T? {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gate-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        guard let web = try WebProcess(socket: directory + "/control.sock", db: directory + "/lineup.db", users: users)
        else { return nil }
        defer { web.killNow() }
        return try await onThread { () throws -> T? in
            guard web.waitReady() else {
                Issue.record("lineup-web did not answer on port \(web.port)")
                return nil
            }
            return try body(web)
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
        let users = try makeUsers()
        // Real time: the address's bucket refills one attempt every 12 s, so it is known empty
        // only when the probes come within 12 s of the first attempt. A try that took longer
        // (a machine too loaded) proves nothing and is made again, from another address and
        // with another name (the name's bucket is spent too).
        let outcome = try await serving(users: users.path) { web -> [String: HTTPReply?]? in
            for (attempt, role) in WebRole.allCases.prefix(3).enumerated() {
                let source = "127.0.6.\(attempt + 10)"
                let name = role.rawValue + "1"
                let start = Date()
                var replies: [String: HTTPReply?] = [:]
                // The address's 5 attempts, each a wrong password, checked and refused.
                for i in 0..<5 {
                    replies["wrong \(i)"] = Self.login(
                        web.port, from: source, body: #"{"name":"\#(name)","password":"wrong-\#(i)"}"#)
                }
                // A body that is not JSON: parsed, it would be refused as such (400).
                replies["not JSON"] = Self.login(web.port, from: source, body: "not JSON")
                // A body announced and never sent: waited for, it would get no answer before its deadline.
                replies["head only"] = Self.headOnly(web.port, from: source)
                guard Date().timeIntervalSince(start) < 11 else { continue }
                // A browser with a device cookie goes on to the login itself, where its own bucket is
                // decided (this cookie is not remembered: the parser refuses the body).
                replies["device cookie"] = Self.login(
                    web.port, from: source, body: "not JSON", cookie: "lineup_device=abc")
                // Anything else from the same address goes on, and another address's login too.
                replies["page"] = httpRequest(port: web.port, "GET", "/login", from: source)
                replies["other address"] = Self.login(web.port, from: "127.0.6.\(attempt + 20)", body: "not JSON")
                return replies
            }
            Issue.record("three tries each took over 11 s: the machine is too loaded to empty a bucket in time")
            return nil
        }
        guard let replies = outcome ?? nil else { return }
        for i in 0..<5 {
            #expect(replies["wrong \(i)"]??.status == 401, "attempt \(i): \(String(describing: replies["wrong \(i)"]))")
        }
        let refused = try #require(replies["not JSON"] ?? nil, "the refused login got no answer")
        #expect(
            refused.status == 429,
            "a login over its address's limit reached the parser: \(refused.status) \(refused.body)")
        // Until the bucket's next attempt: under 12 s, as many as have not passed.
        let retry = refused.header("Retry-After")
        #expect(retry.count == 1 && (1...12).contains(Int(retry[0]) ?? 0), "Retry-After: \(retry)")
        #expect(refused.header("Content-Security-Policy").count == 1)
        #expect(refused.body.contains(#""code":"rate-limited""#))
        #expect(replies["head only"]??.status == 429, "a login over its address's limit waited for its body")
        #expect(replies["device cookie"]??.status == 400)
        #expect(replies["page"]??.status == 200)
        #expect(replies["other address"]??.status == 400)
    }

    @Test func aLoginMeetingAFullChecksLineIsRefusedFromItsHeadAloneAndNeverParsed() async throws {
        // Seven accounts whose checks take about 0.8 s of a core each (bcrypt's cost 13, in a
        // debug build), each tried 5 times (its name's limit) from 35 addresses at once: one
        // check runs, 32 wait (the line is full) and two are refused. The line stays full
        // until the first check and its rest end (5 times its processor time: about 4 s, more
        // on a loaded machine).
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gate-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let users = try UserStore(path: directory + "/users.db", create: true, cost: 13)
        let names = (1...7).map { "slow\($0)" }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for name in names {
                group.addTask {
                    try await onThread { try users.add(name: name, role: .trainer, password: "slow-password") }
                }
            }
            try await group.waitForAll()
        }
        let outcome = try await serving(users: users.path) { web -> [String: HTTPReply?] in
            let logins = names.flatMap { Array(repeating: $0, count: 5) }.enumerated().map { i, name in
                ("127.0.7.\(i + 1)", #"{"name":"\#(name)","password":"wrong-\#(i)"}"#)
            }
            // Sent whole and left waiting for their answers; closed at the end.
            let held = logins.compactMap { source, body in Self.sendWhole(web.port, from: source, body: body) }
            defer { held.forEach { close($0) } }
            var replies: [String: HTTPReply?] = [
                "held": HTTPReply(status: held.count, headers: [], body: "", seconds: 0)
            ]
            // Until the line is full, a body that is not JSON is parsed and refused as such
            // (400), at once; once it is, the gate refuses it (503) from its head. Tried again
            // until then (without the gate: for ever, up to the bound).
            let bound = Date().addingTimeInterval(30)
            var tries = 0
            repeat {
                tries += 1
                replies["not JSON"] = Self.login(web.port, from: "127.0.7.\(100 + tries % 100)", body: "not JSON")
            } while replies["not JSON"]??.status == 400 && Date() < bound
            // A login's head alone, the same: before the line is full it goes on and waits for
            // its body (no answer within 5 s), once it is, it is refused from its head.
            repeat {
                tries += 1
                replies["head only"] = Self.headOnly(web.port, from: "127.0.7.\(100 + tries % 100)")
            } while (replies["head only"] ?? nil) == nil && Date() < bound
            replies["device cookie"] = Self.login(
                web.port, from: "127.0.7.202", body: "not JSON", cookie: "lineup_device=abc")
            return replies
        }
        guard let replies = outcome else { return }
        #expect(
            replies["held"]??.status == 35,
            "only \(String(describing: replies["held"]??.status)) of 35 logins were sent")
        let refused = try #require(replies["not JSON"] ?? nil, "the refused login got no answer")
        #expect(
            refused.status == 503, "a login meeting a full line reached the parser: \(refused.status) \(refused.body)")
        #expect(refused.header("Retry-After") == ["5"])
        #expect(refused.body.contains(#""code":"busy""#))
        #expect(replies["head only"]??.status == 503, "a login meeting a full line waited for its body")
        #expect(replies["device cookie"]??.status == 400)
    }

    /// A login sent whole from `source`, its answer not waited for: the socket, or nil.
    static func sendWhole(_ port: Int, from source: String, body: String) -> Int32? {
        guard let fd = connectFrom(source, port: port, nonBlocking: false, timeout: 5) else { return nil }
        let request =
            "POST /api/login HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nOrigin: http://127.0.0.1:\(port)\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        guard request.withCString({ Glibc.send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }) == request.utf8.count else {
            close(fd)
            return nil
        }
        return fd
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
