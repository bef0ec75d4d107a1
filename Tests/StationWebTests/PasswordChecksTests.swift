import Foundation
import Glibc
import StationWeb
import Synchronization
import Testing

/// The password checks' own thread and its two lines (`PasswordChecks`, docs/web.md
/// "Password checks"): a line over its limit is refused without running anything, a remembered
/// browser's check goes before every stranger's, and the thread's priority is the floor the
/// page documents.
@Suite struct PasswordChecksTests {
    /// The order checks ran in.
    final class Order: Sendable {
        private let list = Mutex<[String]>([])
        func append(_ name: String) { list.withLock { $0.append(name) } }
        var names: [String] { list.withLock { $0 } }
    }

    /// Waits (bounded) until `condition` holds; false if it never did.
    func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<2000 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return condition()
    }

    @Test func aFullLineIsRefusedAndARememberedBrowserGoesFirst() async throws {
        let checks = PasswordChecks(waitingLimit: 2, rest: 0)
        let gate = DispatchSemaphore(value: 0)
        let order = Order()
        // The thread held by a first check, so the others wait in line.
        let started = Order()
        let first = Task {
            await checks.run(remembered: false) {
                started.append("first")
                gate.wait()
            }
        }
        #expect(await eventually { !started.names.isEmpty })
        var queued: [Task<Bool, Never>] = []
        for name in ["stranger-1", "stranger-2"] {
            queued.append(Task { await checks.run(remembered: false) { order.append(name) } != nil })
            #expect(await eventually { checks.waiting == queued.count })
        }
        // The strangers' line is full: one more is refused at once, nothing run.
        let refused = await checks.run(remembered: false) { order.append("refused") }
        #expect(refused == nil)
        // A remembered browser has a line of its own, and is served before the strangers.
        queued.append(Task { await checks.run(remembered: true) { order.append("remembered") } != nil })
        #expect(await eventually { checks.waiting == 3 })
        gate.signal()
        _ = await first.value
        for task in queued { #expect(await task.value) }
        #expect(order.names == ["remembered", "stranger-1", "stranger-2"])
    }

    @Test func theChecksThreadRunsAtThePagesDocumentedNiceValue() async throws {
        let checks = PasswordChecks(rest: 0)
        let caller = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        let nice = await checks.run(remembered: false) { () -> Int32 in
            getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        }
        #expect(nice == PasswordChecks.nice)
        // The caller's thread is left as it was.
        #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) == caller)
    }

    /// The rest after a check is the processor time it used, not the time it took: a check
    /// that waited (here 2 s asleep, as one waits for a core on a busy board) is followed by no
    /// such rest, and one that used the core 0.3 s by at least 0.3 s. Each next check is in
    /// line before the one before it ends, so the gap is the checks thread's own rest, whatever
    /// the test's tasks wait for.
    @Test func theRestAfterACheckIsTheProcessorTimeItUsed() async throws {
        let checks = PasswordChecks(rest: 1)
        let afterWaiting = await gap(checks) { Thread.sleep(forTimeInterval: 2) }
        let afterBusy = await gap(checks) { Self.busy(0.3) }
        #expect(
            afterWaiting.map { $0 < 1.5 } == true,
            "a check that slept 2 s was followed by \(afterWaiting ?? -1) s of rest")
        #expect(
            afterBusy.map { $0 >= 0.29 } == true,
            "a check that used 0.3 s of a core was followed by \(afterBusy ?? -1) s of rest")
    }

    /// The checks' budget on a station: at most a fifth of one core, a check that used the core
    /// 0.2 s followed by at least 0.8 s of rest (issue 33: half a core was the page's loss under
    /// a login flood).
    @Test func theChecksTakeAtMostAFifthOfOneCore() async throws {
        #expect(PasswordChecks().rest == 4)
        let afterBusy = await gap(PasswordChecks()) { Self.busy(0.2) }
        #expect(
            afterBusy.map { $0 >= 0.79 } == true,
            "a check that used 0.2 s of a core was followed by \(afterBusy ?? -1) s of rest, not 0.8 s")
    }

    /// Uses this thread's core for `seconds` of its processor time.
    static func busy(_ seconds: Double) {
        let start = PasswordChecks.threadCPUSeconds()
        var spin = 0
        while PasswordChecks.threadCPUSeconds() - start < seconds { spin &+= 1 }
    }

    /// The gap between the end of `first`, run as a check, and the start of the check queued
    /// behind it.
    func gap(_ checks: PasswordChecks, _ first: @escaping @Sendable () -> Void) async -> Double? {
        @Sendable func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
        let gate = DispatchSemaphore(value: 0)
        let started = Order()
        let ended = Task {
            await checks.run(remembered: false) { () -> Double in
                started.append("first")
                gate.wait()
                first()
                return now()
            }
        }
        guard await eventually({ !started.names.isEmpty }) else { return nil }
        let began = Task { await checks.run(remembered: false) { now() } }
        guard await eventually({ checks.waiting == 1 }) else { return nil }
        gate.signal()
        guard let end = await ended.value, let start = await began.value else { return nil }
        return start - end
    }
}
