import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import StationWeb
import Testing
import WebAccounts

/// `lineupctl web user list|remove|passwd`, and what a removal or a new password does to that
/// user's open pages in a running lineup-web (they end at the next request or live frame).
@Suite struct AccountChangeTests {
    @Test func theStoreListsRemovesAndChangesPasswordsUnderTheSameRules() throws {
        let store = try makeUsers()
        #expect(try store.list().map(\.name) == ["admin1", "assistant1", "handler1", "researcher1", "trainer1"])
        #expect(try store.list().first?.role == "admin")
        try store.setPassword(name: "trainer1", password: "a-new-password")
        #expect(try store.check(name: "trainer1", password: "trainer1-password") == nil)
        #expect(try store.check(name: "trainer1", password: "a-new-password")?.role == .trainer)
        #expect(throws: UserStoreError.shortPassword(minimum: 10)) {
            try store.setPassword(name: "trainer1", password: "short")
        }
        #expect(throws: UserStoreError.longPassword(maximum: 72)) {
            try store.setPassword(name: "trainer1", password: String(repeating: "x", count: 73))
        }
        #expect(throws: UserStoreError.noSuchUser("nobody")) {
            try store.setPassword(name: "nobody", password: "long enough!")
        }
        try store.remove(name: "assistant1")
        #expect(try store.user(named: "assistant1") == nil)
        #expect(throws: UserStoreError.noSuchUser("assistant1")) { try store.remove(name: "assistant1") }
        #expect(try store.count() == 4)
    }

    @Test func lineupctlListsRemovesAndChangesPasswords() throws {
        let shell = LineupWebUnitTests()
        let lineupctl = packageRoot.appendingPathComponent(".build/debug/lineupctl").path
        let users = try makeUsers().path
        let listed = try shell.run(lineupctl, ["web", "user", "list", "--users", users])
        #expect(listed.status == 0, "\(listed.err)")
        let lines = listed.out.split(separator: "\n")
        #expect(lines.count == 6 && lines[0].hasPrefix("name") && lines[5].hasPrefix("trainer1     trainer"))
        #expect(!listed.out.contains("$2b$"), "a hash was printed")
        let json = try shell.run(lineupctl, ["web", "user", "list", "--users", users, "--json"])
        let rows = try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [[String: String]]
        #expect(rows?.map { $0["role"] ?? "" } == ["admin", "assistant", "handler", "researcher", "trainer"])

        let changed = try shell.run(
            lineupctl, ["web", "user", "passwd", "trainer1", "--users", users, "--password-stdin"],
            input: "a-new-password\n")
        #expect(changed.status == 0 && changed.out.contains("Changed the password of trainer1"), "\(changed.err)")
        #expect(try UserStore(path: users, create: false).check(name: "trainer1", password: "a-new-password") != nil)
        let removed = try shell.run(lineupctl, ["web", "user", "remove", "researcher1", "--users", users])
        #expect(removed.status == 0 && removed.out.contains("Removed researcher1"), "\(removed.err)")
        #expect(try UserStore(path: users, create: false).count() == 4)

        // Bad input: one line naming what is wrong, exit 1, nothing changed.
        let missing = users + ".nowhere"
        for (arguments, input, says) in [
            (["passwd", "trainer1", "--users", users, "--password-stdin"], "short\n", "too short"),
            (["passwd", "trainer1", "--users", users, "--password-stdin"], "", "standard input ended"),
            (["passwd", "nobody", "--users", users, "--password-stdin"], "long enough!\n", "no user named \"nobody\""),
            (["remove", "researcher1", "--users", users], "", "no user named \"researcher1\""),
            (["list", "--users", missing], "", "no such file"),
        ] {
            let refused = try shell.run(lineupctl, ["web", "user"] + arguments, input: input)
            #expect(refused.status == 1, "\(arguments)")
            #expect(
                refused.err.contains(says) && refused.err.split(separator: "\n").count == 1,
                "\(arguments): \(refused.err)")
        }
        #expect(try UserStore(path: users, create: false).check(name: "trainer1", password: "a-new-password") != nil)
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    @Test func aRemovedAccountOrANewPasswordEndsItsSessionsAtTheNextRequest() async throws {
        let users = try makeUsers()
        let state = WebState(users: users, link: CountingLink())
        try await Application(router: WebApp.router(state: state)).test(.router) { client in
            let trainer = try #require(try await client.login("trainer1").1)
            let admin = try #require(try await client.login("admin1").1)
            let assistant = try #require(try await client.login("assistant1").1)
            for page in [trainer, admin, assistant] {
                let me = try await client.execute(uri: "/api/me", method: .get, headers: page.getHeaders)
                #expect(me.status == .ok)
            }
            try users.remove(name: "trainer1")
            try users.setPassword(name: "assistant1", password: "a-new-password")
            for page in [trainer, assistant] {
                let me = try await client.execute(uri: "/api/me", method: .get, headers: page.getHeaders)
                #expect(me.status == .unauthorized)
                let ready = try await client.post("/api/ready", json: "{}", headers: page.postHeaders)
                #expect(ready.status == .unauthorized)
            }
            // The other accounts' sessions go on; the new password logs in.
            let me = try await client.execute(uri: "/api/me", method: .get, headers: admin.getHeaders)
            #expect(me.status == .ok)
            let (again, page) = try await client.login("assistant1", password: "a-new-password")
            #expect(again.status == .ok && page != nil)
        }
    }

    @Test func aRemovedAccountsLiveStreamEnds() async throws {
        let users = try makeUsers()
        let clock = VirtualClock()
        let link = CountingLink()
        // lineupd is not running here: the hub sends a "not live" frame every poll, which is
        // what the stream's check rides on.
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
                    // Until the page is subscribed, then the account goes and a second passes.
                    while await hub.subscriberCount == 0 { await Task.yield() }
                    try users.remove(name: "trainer1")
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
            let body = try #require(ended, "the removed account's live stream did not end")
            #expect(body.hasPrefix("retry: 1000"))
        }
    }

    /// The rate limiter alone, on an injected clock: 100 wrong passwords for one name, each from
    /// an address of its own, take at least 95 refills of 12 s (the name's bucket rules).
    @Test func aHundredWrongPasswordsFromManyAddressesTakeTheLimitsTime() {
        var limiter = LoginLimiter()
        var now = 0.0
        var tried = 0
        while tried < 100 {
            if let wait = limiter.take(address: "10.0.\(tried / 250).\(tried % 250)", user: "Ana", now: now) {
                #expect(wait > 0 && wait <= LoginLimiter.refillSeconds)
                now += wait
            } else {
                tried += 1
            }
        }
        let least = (100 - LoginLimiter.burst) * LoginLimiter.refillSeconds
        #expect(now >= least - 1e-6, "100 attempts took \(now) s, the rule says at least \(least) s")
        // The name is matched without case: "ana" shares Ana's spent bucket.
        #expect(limiter.take(address: "10.9.9.9", user: "ana", now: now) != nil)
    }
}
