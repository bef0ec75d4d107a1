import Glibc
import Synchronization

/// A fixed-size single-producer, single-consumer queue: the hot thread pushes, one consumer
/// (the log writer's feeder) pops. Neither side ever waits or allocates; a full ring refuses
/// the item and counts it, so overflow is seen, never silent.
public final class EventRing<Element: BitwiseCopyable>: @unchecked Sendable {
    private let storage: UnsafeMutablePointer<Element>
    private let mask: Int
    public let capacity: Int
    private let head = Atomic<Int>(0)  // next slot the producer writes
    private let tail = Atomic<Int>(0)  // next slot the consumer reads
    private let overflows = Atomic<UInt64>(0)

    /// `capacity` is rounded up to a power of two.
    public init(capacity: Int) {
        var size = 1
        while size < max(2, capacity) { size <<= 1 }
        self.capacity = size
        mask = size - 1
        storage = .allocate(capacity: size)
        // Every slot touched now: the ring is resident (and, once the hot thread locks memory,
        // locked) from the start, rather than page by page as it first wraps, which is a page
        // fault on the hot path and a daemon that grows for its first thousands of sessions.
        memset(storage, 0, size * MemoryLayout<Element>.stride)
    }

    deinit { storage.deallocate() }

    /// Producer side. Returns false, and counts an overflow, when the ring is full.
    @inline(__always)
    @discardableResult
    public func push(_ element: Element) -> Bool {
        let h = head.load(ordering: .relaxed)
        if h &- tail.load(ordering: .acquiring) >= capacity {
            overflows.add(1, ordering: .relaxed)
            return false
        }
        (storage + (h & mask)).initialize(to: element)
        head.store(h &+ 1, ordering: .releasing)
        return true
    }

    /// Consumer side: hands each waiting element to `body`, at most `limit`, oldest first.
    @discardableResult
    public func drain(limit: Int = .max, _ body: (Element) -> Void) -> Int {
        let t = tail.load(ordering: .relaxed)
        let available = head.load(ordering: .acquiring) &- t
        let n = min(available, limit)
        for k in 0..<n { body(storage[(t &+ k) & mask]) }
        tail.store(t &+ n, ordering: .releasing)
        return n
    }

    public var count: Int { head.load(ordering: .acquiring) &- tail.load(ordering: .acquiring) }

    /// Items refused because the ring was full.
    public var overflowCount: UInt64 { overflows.load(ordering: .relaxed) }
}
