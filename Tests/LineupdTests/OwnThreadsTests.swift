import Dispatch
import Foundation
import Synchronization
import TestThreads
import Testing

/// `.ownThreads` keeps the cooperative pool free while a test waits synchronously
/// (OwnThreads.swift says why that matters). Each check fails without the trait on this suite.
@Suite(.ownThreads) struct OwnThreadsTests {
    @Test func aSynchronousTestRunsOffThePool() {
        // swift-testing calls a synchronous test function on the pool unless told otherwise.
        #expect(ThreadPerStep.onOwnThread, "\(Thread.current)")
    }

    @Test func anAsyncTestResumesOffThePoolAfterEachAwait() async throws {
        #expect(ThreadPerStep.onOwnThread)
        try await Task.sleep(for: .milliseconds(1))
        #expect(ThreadPerStep.onOwnThread)
        async let child = ThreadPerStep.onOwnThread
        #expect(await child, "its child tasks run off the pool too (a `Task {}` does not: it goes to the pool)")
    }

    /// More synchronous waits at once than the pool has threads: off the pool they all wait
    /// together; on it, no more than its threads (fewer while other tests hold some) ever do.
    /// Released from a plain thread, so the check holds whoever else holds the pool.
    @Test func moreSynchronousWaitsAtOnceThanThePoolHasThreads() async {
        let waits = ProcessInfo.processInfo.activeProcessorCount + 1
        let counts = WaitCounts()
        let release = DispatchSemaphore(value: 0)
        Thread {
            // Until every wait has begun, or 20 s (the check then fails).
            let end = Date().addingTimeInterval(20)
            while counts.waiting.withLock({ $0 }) < waits && Date() < end { usleep(1_000) }
            for _ in 0..<waits { release.signal() }
        }.start()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<waits {
                group.addTask {
                    let now = counts.waiting.withLock { count in
                        count += 1
                        return count
                    }
                    counts.mostAtOnce.withLock { $0 = max($0, now) }
                    release.wait()
                    counts.waiting.withLock { $0 -= 1 }
                }
            }
        }
        #expect(counts.mostAtOnce.withLock { $0 } == waits, "\(waits) synchronous waits could not all wait at once")
    }
}

/// The trait is written once, in the test-support target both test targets depend on
/// (Package.swift's TestThreads): no test target holds a copy of its own.
@Suite struct OwnThreadsOnceTests {
    @Test func theTraitIsDefinedOnce() throws {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let walker = try #require(FileManager.default.enumerator(atPath: tests.path))
        var defining: [String] = []
        for case let relative as String in walker where relative.hasSuffix(".swift") {
            let text = try String(contentsOf: tests.appendingPathComponent(relative), encoding: .utf8)
            // A declaration: the type name, then the colon before its conformances.
            for kind in ["struct OwnThreads", "class TestSlots", "class ThreadPerStep"] where text.contains(kind + ":")
            {
                defining.append("\(relative): \(kind)")
            }
        }
        #expect(
            defining.sorted() == [
                "TestThreads/OwnThreads.swift: class TestSlots", "TestThreads/OwnThreads.swift: class ThreadPerStep",
                "TestThreads/OwnThreads.swift: struct OwnThreads",
            ], "\(defining.sorted())")
    }
}

/// How many waits are waiting now, and the most that ever were at once.
final class WaitCounts: Sendable {
    let waiting = Mutex(0)
    let mostAtOnce = Mutex(0)
}
