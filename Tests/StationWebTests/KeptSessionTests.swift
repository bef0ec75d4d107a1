import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import SessionLog
import StationWeb
import Synchronization
import Testing
import WebAccounts

/// The page's sessions outlive a restart of lineup-web (a trainer mid-session is not logged
/// out by an upgrade or a crash), end by the same idle limit across it, and a logout ends the
/// session's live streams on every page.
@Suite struct KeptSessionTests {
    /// A second lineup-web on the same accounts file (what a restart is) knows the first one's
    /// session, takes its CSRF token, and a logout there is final.
    @Test func aLoginOutlivesARestartOfLineupWeb() async throws {
        let users = try makeUsers()
        let first = WebState(users: users, link: CountingLink())
        let page = try await Application(router: WebApp.router(state: first)).test(.router) { client in
            try #require(try await client.login("trainer1").1)
        }
        let reopened = try UserStore(path: users.path, create: false, cost: 4)
        try await Application(router: WebApp.router(state: WebState(users: reopened, link: CountingLink()))).test(
            .router
        ) { client in
            let me = try await client.execute(uri: "/api/me", method: .get, headers: page.getHeaders)
            #expect(me.status == .ok)
            #expect(text(me.body).contains(#""csrf":"\#(page.csrf)""#))
            let out = try await client.post("/api/logout", json: "{}", headers: page.postHeaders)
            #expect(out.status == .ok)
        }
        let third = try UserStore(path: users.path, create: false, cost: 4)
        try await Application(router: WebApp.router(state: WebState(users: third, link: CountingLink()))).test(
            .router
        ) { client in
            let me = try await client.execute(uri: "/api/me", method: .get, headers: page.getHeaders)
            #expect(me.status == .unauthorized)
        }
    }

    /// The file holds each session's digest, never the cookie's token.
    @Test func theAccountsFileKeepsNoToken() async throws {
        let users = try makeUsers()
        let state = WebState(users: users, link: CountingLink())
        let page = try await Application(router: WebApp.router(state: state)).test(.router) { client in
            try #require(try await client.login("admin1").1)
        }
        let token = String(page.cookie.split(separator: "=", maxSplits: 1)[1])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: users.path))
        #expect(bytes.range(of: Data(token.utf8)) == nil)
        let digest = SHA256Digest.digest(Array(token.utf8)).map { String(format: "%02x", $0) }.joined()
        #expect(bytes.range(of: Data(digest.utf8)) != nil)
    }

    /// Idle time counts across a restart by the wall clock: 11 h idle before a restart leaves
    /// the session open; 12 h 30 min idle ends it.
    @Test func theIdleLimitHoldsAcrossARestart() async throws {
        let users = try makeUsers()
        let wall = Mutex<Double>(1_800_000_000)
        let clock: @Sendable () -> Double = { wall.withLock { $0 } }
        let before = WebSessions(store: users, wallClock: clock)
        let (token, _) = await before.open(name: "trainer1", role: .trainer, now: 50)
        wall.withLock { $0 += 11 * 3600 }
        // The monotonic clock starts again with the board.
        let afterEleven = WebSessions(store: users, wallClock: clock)
        #expect(await afterEleven.find(token, now: 3)?.name == "trainer1")
        wall.withLock { $0 += 12.5 * 3600 }
        let later = WebSessions(store: users, wallClock: clock)
        #expect(await later.find(token, now: 1) == nil)
        // And it is gone from the file, not only from memory.
        #expect(await WebSessions(store: users, wallClock: clock).find(token, now: 1) == nil)
    }

    /// Logging out on one page ends the live stream another page of the same session holds.
    @Test func aLogoutEndsTheSessionsLiveStreams() async throws {
        let users = try makeUsers()
        let clock = VirtualClock()
        let link = CountingLink()
        let hub = LiveHub(link: link, pollSeconds: 0.02)
        let state = WebState(users: users, link: link, hub: hub, now: { clock.now })
        try await Application(router: WebApp.router(state: state)).test(.router) { client in
            let trainer = try #require(try await client.login("trainer1").1)
            let ended = try await withThrowingTaskGroup(of: String?.self) { group in
                group.addTask {
                    let events = try await client.execute(
                        uri: "/api/events", method: .get, headers: trainer.getHeaders)
                    return text(events.body)
                }
                group.addTask {
                    while await hub.subscriberCount == 0 { await Task.yield() }
                    let out = try await client.post("/api/logout", json: "{}", headers: trainer.postHeaders)
                    #expect(out.status == .ok)
                    clock.advance(1)
                    // A failure bound, not a wait for correctness: without the check the
                    // stream never ends.
                    try await Task.sleep(for: .seconds(20))
                    return nil
                }
                let first = try await group.next() ?? nil
                group.cancelAll()
                return first
            }
            let body = try #require(ended, "the logged-out session's live stream did not end")
            #expect(body.hasPrefix("retry: 1000"))
        }
    }
}
