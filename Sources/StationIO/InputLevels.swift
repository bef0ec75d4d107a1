import Synchronization

/// Each input's debounced level and when it last changed, as the hot loop last acted on it:
/// what `status` shows as the sensors' live levels. A bit mask and one time per line, in atomics
/// made at init, under a sequence count (a seqlock, as `EngineSnapshot`): the hot thread never
/// waits or allocates, and a reader retries if it read while the hot thread wrote.
///
/// One writer at a time: the hot thread while a loop runs, or the thread that starts the next
/// loop (`set(levels:at:)`) while none does.
public final class InputLevels: @unchecked Sendable {
    /// Lines beyond this are not kept (the mask is one word).
    public static let maximumLines = 64

    public let lineCount: Int
    private let sequence = Atomic<UInt64>(0)
    private let mask = Atomic<UInt64>(0)
    private let changedAt: UnsafeMutablePointer<Atomic<UInt64>>

    /// Every line clear, last changed at `start` (monotonic ns): the time lineupd began reading.
    public init(lineCount: Int, start: UInt64) {
        self.lineCount = max(0, min(lineCount, Self.maximumLines))
        changedAt = .allocate(capacity: max(1, self.lineCount))
        for i in 0..<max(1, self.lineCount) { (changedAt + i).initialize(to: Atomic(start)) }
    }

    deinit {
        changedAt.deinitialize(count: max(1, lineCount))
        changedAt.deallocate()
    }

    /// A debounced edge the hot loop acted on (hot thread). A level it already had changes nothing.
    @inline(__always)
    public func record(_ edge: SensorEdge) {
        let line = Int(edge.line)
        guard line < lineCount else { return }
        let bit: UInt64 = 1 << UInt64(line)
        let old = mask.load(ordering: .relaxed)
        let new = edge.isActive ? old | bit : old & ~bit
        guard new != old else { return }
        sequence.add(1, ordering: .acquiringAndReleasing)
        mask.store(new, ordering: .releasing)
        changedAt[line].store(edge.timestamp, ordering: .releasing)
        sequence.add(1, ordering: .acquiringAndReleasing)
    }

    /// The lines as read when a loop starts (no loop running): a line whose level differs from
    /// the one kept changed at `time`.
    public func set(levels: [Bool], at time: UInt64) {
        for (line, active) in levels.enumerated() where line < lineCount {
            record(SensorEdge(timestamp: time, line: UInt32(line), isActive: active))
        }
    }

    /// The levels now: bit i set when line i is active, and each line's last change (monotonic ns).
    public func read() -> (active: UInt64, changedAt: [UInt64]) {
        var times = [UInt64](repeating: 0, count: lineCount)
        while true {
            let before = sequence.load(ordering: .acquiring)
            if before & 1 == 1 { continue }
            let active = mask.load(ordering: .acquiring)
            for i in 0..<lineCount { times[i] = changedAt[i].load(ordering: .acquiring) }
            if sequence.load(ordering: .acquiring) == before { return (active, times) }
        }
    }
}
