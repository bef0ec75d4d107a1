import Dispatch
import Foundation
import Glibc
import Hummingbird
import HummingbirdTesting
import StationWeb
import Synchronization
import Testing

/// Logins are read, limited and answered on a thread of their own (`LoginThread`, docs/web.md
/// "What an attacker on the station's network can and cannot do"), never on Swift's pool, which
/// serves the pages of those logged in: a flood of logins then waits for the trainer's page, not
/// the page for the flood (issue 33).
@Suite struct LoginThreadTests {
    /// With the logins' thread held, a login waits and a logged-in page answers. Without the
    /// thread the login was answered at once, on the pool, beside the page.
    @Test func aLoginWaitsForTheLoginsThreadAndALoggedInPageDoesNot() async throws {
        let logins = LoginThread()
        let state = WebState(users: try makeUsers(), link: CountingLink(), loginThread: logins)
        try await Application(router: WebApp.router(state: state)).test(.router) { client in
            let page = try #require(try await client.login("trainer1").1)
            let gate = DispatchSemaphore(value: 0)
            let held = Atomic<Bool>(false)
            let holder = Task(executorPreference: logins) {
                held.store(true, ordering: .releasing)
                gate.wait()
            }
            for _ in 0..<2000 where !held.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(5)) }
            let wasHeld = held.load(ordering: .acquiring)
            #expect(wasHeld, "the logins' thread never ran the test's job")
            let answered = Atomic<Bool>(false)
            let login = Task {
                let status = try await client.login("trainer1").0.status
                answered.store(true, ordering: .releasing)
                return status
            }
            // The page answers while the login waits.
            let me = try await client.execute(uri: "/api/me", method: .get, headers: page.getHeaders)
            #expect(me.status == .ok)
            // The login is still waiting 2 s on (a bound, not a time the test relies on: on
            // the pool it was answered within milliseconds).
            for _ in 0..<400 where !answered.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(5)) }
            let answeredWhileHeld = answered.load(ordering: .acquiring)
            #expect(!answeredWhileHeld, "a login was answered while the logins' thread was held")
            gate.signal()
            await holder.value
            #expect(try await login.value == .ok)
        }
    }

    @Test func theLoginsThreadRunsAtItsDocumentedNiceValue() async throws {
        let logins = LoginThread()
        let nice = await Task(executorPreference: logins) {
            getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        }.value
        #expect(nice == LoginThread.nice)
    }
}
