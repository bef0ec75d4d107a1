import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import StationControl
import StationWeb
import Testing
import WebAccounts

/// The page's guards, through the router with a stand-in lineupd that counts what reaches it.
@Suite struct SecurityTests {
    func app(_ link: CountingLink = CountingLink(), clock: VirtualClock = VirtualClock()) throws
        -> some ApplicationProtocol
    {
        // Refused logins answered at once: the limit is counted here in virtual time.
        let state = WebState(users: try makeUsers(), link: link, refusedLoginWait: 0, now: { clock.now })
        return Application(router: WebApp.router(state: state))
    }

    /// A refused login is answered only after `refusedLoginWait` (issue 33: a flood sending its
    /// next login on each answer was answered as fast as lineup-web could, and the trainer's
    /// requests waited in line behind it); a login let through is not held back.
    @Test func aRefusedLoginIsAnsweredOnlyAfterTheWait() async throws {
        // The login limit counts in virtual time: on a loaded machine the five bcrypt checks take
        // long enough in real time for the limit to refill, and the fifth wrong password was 401.
        let clock = VirtualClock()
        let state = WebState(
            users: try makeUsers(), link: CountingLink(), refusedLoginWait: 0.5, now: { clock.now })
        try await Application(router: WebApp.router(state: state)).test(.router) { client in
            func timed(_ password: String) async throws -> (HTTPResponse.Status, Double) {
                let start = DispatchTime.now().uptimeNanoseconds
                let (response, _) = try await client.login("trainer1", password: password)
                return (response.status, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            }
            #expect(try await timed("trainer1-password").0 == .ok)
            for _ in 0..<4 { #expect(try await timed("wrong-password").0 == .unauthorized) }
            let (status, seconds) = try await timed("wrong-password")
            #expect(status == .tooManyRequests)
            #expect(seconds >= 0.5, "a refused login was answered after \(seconds) s")
        }
    }

    /// Every page and API route, each method it answers to.
    static let routes: [(HTTPRequest.Method, String)] = [
        (.get, "/"), (.get, "/api/me"), (.get, "/api/status"), (.get, "/api/layout"), (.get, "/api/events"),
        (.post, "/api/session/start"), (.post, "/api/ready"), (.post, "/api/abort"), (.post, "/api/session/end"),
        (.post, "/api/session/resume"), (.post, "/api/logout"), (.get, "/nothing-here"),
    ]

    @Test func nothingAnswersWithoutASessionButLoginAndAssets() async throws {
        let link = CountingLink()
        try await app(link).test(.router) { client in
            for (method, path) in Self.routes {
                let headers: HTTPFields = [.origin: origin, .contentType: "application/json"]
                let response = try await client.execute(
                    uri: path, method: method, headers: headers, body: ByteBuffer(string: "{}"))
                if path.hasPrefix("/api/") {
                    #expect(response.status == .unauthorized, "\(method) \(path): \(response.status)")
                } else {
                    #expect(response.status == .seeOther, "\(method) \(path)")
                    #expect(response.headers[.location] == "/login")
                }
            }
            // A cookie that is not a session's is no session.
            let forged = try await client.execute(
                uri: "/api/status", method: .get, headers: [.cookie: "lineup_session=00ff"])
            #expect(forged.status == .unauthorized)
            for path in ["/login", "/static/app.js", "/static/login.js", "/static/app.css"] {
                let response = try await client.execute(uri: path, method: .get)
                #expect(response.status == .ok, "\(path)")
                #expect(response.headers[.contentSecurityPolicy]?.contains("default-src 'self'") == true)
                #expect(response.headers[.xContentTypeOptions] == "nosniff", "\(path)")
            }
        }
        #expect(link.received.isEmpty)
    }

    @Test func theSessionCookieIsHttpOnlyAndStrict() async throws {
        try await app().test(.router) { client in
            let (response, page) = try await client.login("trainer1")
            #expect(page != nil)
            let cookie = try #require(response.headers[.setCookie])
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
            let me = try await client.execute(uri: "/api/me", method: .get, headers: page!.getHeaders)
            #expect(me.status == .ok && text(me.body).contains(#""role":"trainer""#))
        }
    }

    @Test func stateChangesWithoutOriginOrTokenAreRefused() async throws {
        let link = CountingLink()
        try await app(link).test(.router) { client in
            let (_, maybePage) = try await client.login("trainer1")
            let page = try #require(maybePage)
            var noToken = page.postHeaders
            noToken[HTTPField.Name("X-CSRF-Token")!] = nil
            var wrongToken = page.postHeaders
            wrongToken[HTTPField.Name("X-CSRF-Token")!] = String(page.csrf.reversed())
            var otherSite = page.postHeaders
            otherSite[.origin] = "http://evil.example"
            var noOrigin = page.postHeaders
            noOrigin[.origin] = nil
            var form = page.postHeaders
            form[.contentType] = "application/x-www-form-urlencoded"
            for (why, headers) in [
                ("no token", noToken), ("wrong token", wrongToken), ("another site", otherSite),
                ("no origin", noOrigin), ("a form", form),
            ] {
                let response = try await client.post("/api/ready", json: "{}", headers: headers)
                #expect([.forbidden, .unsupportedMediaType].contains(response.status), "\(why): \(response.status)")
                #expect(text(response.body).contains(#""error""#))
            }
            // A login from another site's page is refused too (login CSRF).
            let crossLogin = try await client.post(
                "/api/login", json: #"{"name":"trainer1","password":"trainer1-password"}"#,
                headers: [.origin: "http://evil.example", .contentType: "application/json"])
            #expect(crossLogin.status == .forbidden)
            #expect(link.received.isEmpty, "a refused request reached lineupd: \(link.received)")
            // The same request with the page's token and origin does reach it (here: not running).
            let right = try await client.post("/api/ready", json: "{}", headers: page.postHeaders)
            #expect(right.status == .serviceUnavailable)
            #expect(text(right.body).contains("lineupd is not running"))
            #expect(link.received == ["ready"])
        }
    }

    @Test func wrongPasswordsAreRateLimitedPerNameAndAddress() async throws {
        let clock = VirtualClock()
        try await app(clock: clock).test(.router) { client in
            // Five tries, then refused without a check, even with the right password.
            for _ in 0..<5 {
                let (response, _) = try await client.login("trainer1", password: "wrong-password")
                #expect(response.status == .unauthorized)
            }
            let (limited, page) = try await client.login("trainer1")
            #expect(limited.status == .tooManyRequests && page == nil)
            #expect(limited.headers[.retryAfter] == "12")
            // 100 wrong passwords take at least 95 refills of 12 s: in virtual time, count them.
            var tried = 0
            var waited = 0.0
            while tried < 100 {
                let (response, _) = try await client.login("assistant1", password: "wrong-\(tried)")
                if response.status == .tooManyRequests {
                    clock.advance(1)
                    waited += 1
                } else {
                    #expect(response.status == .unauthorized)
                    tried += 1
                }
            }
            // The address's bucket was empty from the trainer's tries: all 100 waited their turn.
            #expect(waited >= 99 * LoginLimiter.refillSeconds - 1, "100 wrong passwords took \(waited) s")
            clock.advance(60)
            let (again, _) = try await client.login("trainer1")
            #expect(again.status == .ok)
        }
    }

    @Test func rolesAreRefusedWhereTheyMustBe() async throws {
        let link = CountingLink()
        try await app(link).test(.router) { client in
            let researcher = try #require(try await client.login("researcher1").1)
            let assistant = try #require(try await client.login("assistant1").1)
            for path in ["/api/session/start", "/api/abort", "/api/session/end", "/api/session/resume", "/api/ready"] {
                let response = try await client.post(path, json: "{}", headers: researcher.postHeaders)
                #expect(response.status == .forbidden, "researcher \(path)")
                #expect(text(response.body).contains("a researcher may not"))
            }
            for path in ["/api/session/start", "/api/abort", "/api/session/end", "/api/session/resume"] {
                let response = try await client.post(path, json: "{}", headers: assistant.postHeaders)
                #expect(response.status == .forbidden, "assistant \(path)")
            }
            #expect(link.received.isEmpty)
            // The assistant presses "loaded" (ready); the researcher reads status.
            _ = try await client.post("/api/ready", json: "{}", headers: assistant.postHeaders)
            _ = try await client.execute(uri: "/api/status", method: .get, headers: researcher.getHeaders)
            #expect(link.received == ["ready", "status"])
            // Which layout view each role is given is lineupd's to answer: the handler's for all
            // but the assistant.
            _ = try await client.execute(uri: "/api/layout", method: .get, headers: researcher.getHeaders)
            #expect(link.received.last == "layout")
        }
    }

    @Test func oversizedAndMalformedRequestsNeverReachLineupd() async throws {
        let link = CountingLink()
        try await app(link).test(.router) { client in
            let page = try #require(try await client.login("trainer1").1)
            let huge =
                #"{"dog":""# + String(repeating: "x", count: WebApp.maxBody)
                + #"","program":"study","step":"indicate/1"}"#
            let tooLarge = try await client.post("/api/session/start", json: huge, headers: page.postHeaders)
            #expect(tooLarge.status == .contentTooLarge, "\(tooLarge.status)")
            let notJSON = try await client.post("/api/session/start", json: "dog=Rex", headers: page.postHeaders)
            #expect(notJSON.status == .badRequest)
            #expect(text(notJSON.body).contains("not JSON"))
            let missing = try await client.post(
                "/api/session/start", json: #"{"dog":"Rex","program":"study"}"#, headers: page.postHeaders)
            #expect(missing.status == .badRequest)
            #expect(text(missing.body).contains("missing field 'step'"), "\(text(missing.body))")
            let wrongType = try await client.post(
                "/api/session/start", json: #"{"dog":"Rex","program":"study","step":"indicate/1","trials":"many"}"#,
                headers: page.postHeaders)
            #expect(text(wrongType.body).contains("field 'trials' should be a whole number"), "\(text(wrongType.body))")
            #expect(link.received.isEmpty, "\(link.received)")
        }
    }

    @Test func logoutEndsTheSession() async throws {
        try await app().test(.router) { client in
            let page = try #require(try await client.login("admin1").1)
            let out = try await client.post("/api/logout", json: "{}", headers: page.postHeaders)
            #expect(out.status == .ok)
            let after = try await client.execute(uri: "/api/me", method: .get, headers: page.getHeaders)
            #expect(after.status == .unauthorized)
        }
    }
}
