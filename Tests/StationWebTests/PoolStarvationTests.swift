import Foundation
import Hummingbird
import HummingbirdTesting
import StationControl
import StationWeb
import Synchronization
import Testing

/// The experiment behind the live-page tests' `.readTimeout` in CI-local runs (the test
/// client's 15 s, with a batch of other tests finishing together just after): Swift's
/// cooperative pool has one thread per core (two here), shared by every test in the process and
/// by the pages under test, which run in-process. A test that waits synchronously (a child
/// process's exit, a poll with Thread.sleep) holds one of them. Opt-in, not part of a normal
/// run (it holds the pool on purpose): `POOL_STARVATION=MODE swift test --filter PoolStarvationTests`.
///
/// - `blocking`: two async tests wait for a 25 s child with `waitUntilExit` while a page's
///   request is in flight: the request fails with `.readTimeout`, seen only when the pool frees.
/// - `thread`: the same waits on threads of their own (`onThread`): answered at once.
/// - `sync`: two synchronous tests sleep 8 s: an async test's 10 ms sleep resumes 8 s late, so
///   a synchronous test that waits holds the pool as well.
@Suite struct PoolStarvationTests {
    static let mode = ProcessInfo.processInfo.environment["POOL_STARVATION"] ?? ""
    static let go = Atomic<Bool>(false)
    static var paged: Bool { ["blocking", "thread"].contains(mode) }

    func holdAChild() async {
        while !Self.go.load(ordering: .acquiring) { try? await Task.sleep(for: .milliseconds(2)) }
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/sleep")
        child.arguments = ["25"]
        try? child.run()
        if Self.mode == "blocking" {
            child.waitUntilExit()
        } else {
            _ = try? await onThread { child.waitUntilExit() }
        }
    }
    @Test(.enabled(if: paged)) func waiterA() async { await holdAChild() }
    @Test(.enabled(if: paged)) func waiterB() async { await holdAChild() }

    @Test(.enabled(if: paged)) func aPagesRequestInFlight() async throws {
        guard let station = try SimulatedStation() else { return }
        defer { station.terminate() }
        #expect(await station.waitReady())
        let link = SocketLink(path: station.socket)
        let state = WebState(users: try makeUsers(), link: link, hub: LiveHub(link: link, pollSeconds: 0.2))
        let app = Application(
            router: WebApp.router(state: state), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            _ = try #require(try await client.login("trainer1").1)
            // The login's password check runs on a thread of its own for a while: the waiters
            // take their threads meanwhile, with this request in flight.
            Self.go.store(true, ordering: .releasing)
            let start = Date()
            var failure: (any Error)?
            do { _ = try await client.login("trainer1") } catch { failure = error }
            let seconds = Date().timeIntervalSince(start)
            print("PoolStarvationTests \(Self.mode): \(failure.map { "\($0)" } ?? "answered") after \(seconds) s")
            if Self.mode == "blocking" {
                #expect(failure != nil && seconds > 15, "the request was answered with the pool held")
            } else {
                #expect(failure == nil && seconds < 5, "\(String(describing: failure))")
            }
        }
    }

    @Test(.enabled(if: mode == "sync")) func synchronousSleeperA() { Thread.sleep(forTimeInterval: 8) }
    @Test(.enabled(if: mode == "sync")) func synchronousSleeperB() { Thread.sleep(forTimeInterval: 8) }
    @Test(.enabled(if: mode == "sync")) func anAsyncTestBeside() async {
        var worst = 0.0
        let end = Date().addingTimeInterval(12)
        while Date() < end {
            let start = Date()
            try? await Task.sleep(for: .milliseconds(10))
            worst = max(worst, Date().timeIntervalSince(start))
        }
        print("PoolStarvationTests sync: the worst 10 ms sleep took \(worst) s")
        #expect(worst > 5, "the synchronous sleepers did not hold the pool")
    }
}
