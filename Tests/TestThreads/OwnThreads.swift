import Foundation
import Synchronization
import Testing

// The test targets' one copy: LineupdTests and LabStoreTests depend on this target, and each
// says how many of its tests run at once (its `ownThreads`, `TestSlots`).

/// `@Suite(.ownThreads)`: each test of the suite runs off Swift's cooperative pool, every
/// step of it (its body, each resumption after an await, its child tasks) on a thread of its
/// own. An unstructured `Task {}` it starts still goes to the pool, as Swift decides.
///
/// Why: the pool has one thread per core (two on the build machine) for every test of the
/// process and the in-process pages and stores under test. A test that waits synchronously
/// (a child's exit, a semaphore, `Thread.sleep`, a socket read) holds one of them, and a
/// synchronous test function holds one for its whole run: swift-testing calls it on the pool.
/// Two such waits starved everything else: a page's request timed out, a lab reader's
/// deadline (a `Task.sleep`) could not fire, a suite's time limit passed with its own work
/// unscheduled. Here the waits block threads of their own and the pool stays free.
public struct OwnThreads: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    /// The slots its tests without a time limit wait for: the target's.
    let slots: TestSlots

    public init(slots: TestSlots) { self.slots = slots }

    /// `LINEUP_TESTS_ON_THE_POOL=1` leaves every test on the pool, as before this trait: to
    /// measure the difference (docs/tests.md, "CI's time") and see OwnThreadsTests fail.
    static let disabled = ProcessInfo.processInfo.environment["LINEUP_TESTS_ON_THE_POOL"] == "1"

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> OwnThreads? {
        // Each test case, not the suite around them.
        testCase == nil || Self.disabled ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard !test.traits.contains(where: { $0 is TimeLimitTrait }) else {
            return try await withTaskExecutorPreference(ThreadPerStep.shared) { try await function() }
        }
        await slots.take()
        defer { slots.give() }
        try await withTaskExecutorPreference(ThreadPerStep.shared) { try await function() }
    }
}

/// How many `.ownThreads` tests of a target run at once. A test waits for its slot without
/// holding a thread. A test with a time limit never waits: its limit counts from its start, wait
/// included.
public final class TestSlots: Sendable {
    /// As many at once as the machine has cores (`LINEUP_TESTS_AT_ONCE` another number):
    /// LineupdTests' bound. On the pool, its threads were that bound for these synchronous tests;
    /// without one, every test of the target started its daemons together and on a loaded
    /// machine lineupd then did not answer within 5 s in a dozen tests.
    public static let perCore = TestSlots(
        ProcessInfo.processInfo.environment["LINEUP_TESTS_AT_ONCE"].flatMap { Int($0) }
            ?? ProcessInfo.processInfo.activeProcessorCount)

    /// No bound unless `LINEUP_TESTS_AT_ONCE` sets one: LabStoreTests'. Its tests are async and
    /// ran all at once on the pool before (their servers' starts on threads of their own); a
    /// bound held LabStreamTests past its limit.
    public static let allAtOnce = TestSlots(
        ProcessInfo.processInfo.environment["LINEUP_TESTS_AT_ONCE"].flatMap { Int($0) } ?? Int.max)

    private let state: Mutex<(free: Int, waiting: [CheckedContinuation<Void, Never>])>

    public init(_ count: Int) { state = Mutex((max(1, count), [])) }

    public func take() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { slots in
                guard slots.free > 0 else {
                    slots.waiting.append(continuation)
                    return false
                }
                slots.free -= 1
                return true
            }
            if now { continuation.resume() }
        }
    }

    public func give() {
        let next = state.withLock { slots -> CheckedContinuation<Void, Never>? in
            guard !slots.waiting.isEmpty else {
                slots.free += 1
                return nil
            }
            return slots.waiting.removeFirst()
        }
        next?.resume()
    }
}

/// A task executor that runs each job (a step of a task between two suspensions) on a new
/// thread: a step that blocks blocks only its own thread, and steps of the same task never
/// wait behind one that blocks (a time limit's or a deadline's sleep in a child task).
/// Threads are cheap next to what these tests start (processes, servers).
public final class ThreadPerStep: TaskExecutor, Sendable {
    public static let shared = ThreadPerStep()

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        Thread {
            Thread.current.threadDictionary[Self.mark] = true
            job.runSynchronously(on: executor)
        }.start()
    }

    private static let mark = "lineup: a test's own thread"

    /// Whether the calling code runs on one of these threads.
    public static var onOwnThread: Bool { Thread.current.threadDictionary[mark] as? Bool == true }
}
