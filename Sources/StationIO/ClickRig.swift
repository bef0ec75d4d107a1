import Foundation
import Glibc
import Synchronization

/// A hot loop that clicks on one line's active edges, with a consumer draining its records:
/// what `lineup-bench click` (simulated lineup) and `lineupctl selftest` (a jumper wire on
/// the real lines) both measure. The caller makes the edges; the rig keeps the figures.
public final class ClickRig: @unchecked Sendable {
    /// Clicks on the target line's nose-in edges; everything else is only debounced and logged.
    final class TargetRule: HotPathHandler {
        let target: UInt32
        init(target: UInt32) { self.target = target }
        var nextDeadline: UInt64 { .max }
        func handle(_ edge: SensorEdge) -> HotPathDecision { edge.line == target && edge.isActive ? .click : .none }
        func deadline(now: UInt64) -> HotPathDecision { .none }
    }

    public struct Figures: Sendable {
        public var handedLatencies: [UInt64]
        public var onsetLatencies: [UInt64]
        public var edgesRead: UInt64
        public var edgesLogged: UInt64
        public var ringOverflows: UInt64
        public var failedClicks: UInt64
        public var realtimeProblem: String?
        public var hotThreadAllocations: Int?
    }

    private let loop: HotLoop
    private let ring: EventRing<StationRecord>
    private let ready: Int32
    private let player: ClickPlayer
    private let allocations: AllocationCounter?
    private let skip: Int
    private let collected = Mutex<(handed: [UInt64], onset: [UInt64], edges: UInt64)>(([], [], 0))
    private let consumerDone = Atomic<Bool>(false)
    private let consumerFinished = Atomic<Bool>(false)
    private let loopStarted = Atomic<Bool>(false)
    private let loopDone = Atomic<Bool>(false)
    private let realtimeProblem = Mutex<String?>(nil)

    /// - Parameter skipClicks: clicks at the start not kept (warm-up).
    public init(
        source: any EdgeSource, lineCount: Int, debounceNanoseconds: UInt64, target: UInt32, player: ClickPlayer,
        skipClicks: Int = 0, allocations: AllocationCounter? = nil
    ) throws(StationIOError) {
        ring = EventRing<StationRecord>(capacity: 1 << 16)
        ready = makeEventFD()
        guard ready >= 0 else { throw .system("making the log consumer's eventfd", errno: -ready) }
        self.player = player
        self.allocations = allocations
        skip = skipClicks
        loop = try HotLoop(
            source: source, debouncer: Debouncer(lineCount: lineCount, windowNanoseconds: debounceNanoseconds),
            handler: TargetRule(target: target), player: player, records: ring, recordsReady: ready)
    }

    deinit { close(ready) }

    /// Starts the consumer and the hot thread; returns once the loop is polling.
    public func start(realtime: Bool, lockMemory: Bool) {
        let consumer = Thread { [self] in consume() }
        consumer.start()
        let hot = Thread { [self] in
            if realtime {
                let problem = HotLoop.makeCurrentThreadRealtime(lockMemory: lockMemory)
                realtimeProblem.withLock { $0 = problem }
            }
            allocations?.attach(pthread_self())
            loopStarted.store(true, ordering: .releasing)
            loop.run()
            loopDone.store(true, ordering: .releasing)
        }
        hot.start()
        while !loopStarted.load(ordering: .acquiring) { usleep(1000) }
    }

    /// The log's consumer: drains the ring as the writer will, keeping the click figures.
    private func consume() {
        var handed: [UInt64] = []
        var onset: [UInt64] = []
        var edges: UInt64 = 0
        var value: UInt64 = 0
        var skipping = skip
        var pfd = pollfd(fd: ready, events: Int16(POLLIN), revents: 0)
        while true {
            let finishing = consumerDone.load(ordering: .acquiring)
            ring.drain { record in
                switch record {
                case .click where skipping > 0:
                    skipping -= 1
                case .click(let c):
                    handed.append(c.handedLatency)
                    onset.append(c.onsetLatency)
                case .edge: edges += 1
                default: break
                }
            }
            if finishing { break }
            _ = poll(&pfd, 1, 100)
            _ = read(ready, &value, 8)
        }
        collected.withLock { $0 = (handed, onset, edges) }
        consumerFinished.store(true, ordering: .releasing)
    }

    /// Stops the loop and the consumer; returns what was measured.
    public func finish() -> Figures {
        loop.stop()
        while !loopDone.load(ordering: .acquiring) { usleep(1000) }
        let hotAllocations = allocations?.end()
        consumerDone.store(true, ordering: .releasing)
        var one: UInt64 = 1
        _ = write(ready, &one, 8)
        while !consumerFinished.load(ordering: .acquiring) { usleep(1000) }
        let (handed, onset, logged) = collected.withLock { $0 }
        return Figures(
            handedLatencies: handed, onsetLatencies: onset, edgesRead: loop.edgeCount, edgesLogged: logged,
            ringOverflows: ring.overflowCount, failedClicks: player.failedClicks,
            realtimeProblem: realtimeProblem.withLock { $0 }, hotThreadAllocations: hotAllocations)
    }
}

/// Counts allocations made on the hot thread while measuring, when the caller can.
/// `attach` runs on the hot thread before its loop; `begin` and `end` bracket the
/// measured clicks (after warm-up, so the runtime's first-use set-up is not counted).
public struct AllocationCounter: Sendable {
    public var attach: @Sendable (_ hotThread: pthread_t) -> Void
    public var begin: @Sendable () -> Void
    public var end: @Sendable () -> Int?
    public init(
        attach: @escaping @Sendable (pthread_t) -> Void, begin: @escaping @Sendable () -> Void,
        end: @escaping @Sendable () -> Int?
    ) {
        self.attach = attach
        self.begin = begin
        self.end = end
    }
}
