/// Leading-edge debouncing: act on the first edge of a line at once, then ignore that line's
/// chatter for the window. Debouncing therefore adds no latency to the edge that matters.
///
/// Chatter can leave the line at a level other than the one acted on (a nose that touched
/// the beam for 2 ms and left). When the window closes, `settle(now:)` reports the level the
/// line really settled at, stamped with the kernel time of the last edge that set it.
///
/// Fixed storage made at init: accepting an edge never allocates.
public struct Debouncer: Sendable {
    public let windowNanoseconds: UInt64
    private var acceptedLevel: [Bool]
    private var rawLevel: [Bool]
    private var rawTimestamp: [UInt64]
    private var windowEnd: [UInt64]
    /// Earliest window end with a settle still owed, or `UInt64.max`.
    public private(set) var nextDeadline: UInt64 = .max
    /// Raw edges that arrived and were treated as chatter.
    public private(set) var chatterCount: UInt64 = 0

    public init(lineCount: Int, windowNanoseconds: UInt64, initialLevels: [Bool]? = nil) {
        self.windowNanoseconds = windowNanoseconds
        let levels = initialLevels ?? Array(repeating: false, count: lineCount)
        acceptedLevel = levels
        rawLevel = levels
        rawTimestamp = Array(repeating: 0, count: lineCount)
        windowEnd = Array(repeating: 0, count: lineCount)
    }

    /// The level the station acts on.
    public func level(of line: UInt32) -> Bool { acceptedLevel[Int(line)] }

    /// The lines it debounces.
    public var lineCount: Int { acceptedLevel.count }

    /// This debouncer as the next hot loop takes it over (its levels, windows and owed settles;
    /// its chatter counted afresh): an edge still unread when a loop stopped is judged against
    /// the level the log last recorded, as one loop would have judged it.
    public func carriedOver() -> Debouncer {
        var next = self
        next.chatterCount = 0
        return next
    }

    /// Takes one raw edge. Returns the edge to act on, or nil when it is chatter or no change.
    /// An owed settle of the same line is reported first through `settle`, so call
    /// `settle(now: edge.timestamp)` before this when `nextDeadline <= edge.timestamp`.
    @inline(__always)
    public mutating func accept(_ edge: SensorEdge) -> SensorEdge? {
        let i = Int(edge.line)
        guard i < acceptedLevel.count else { return nil }
        rawLevel[i] = edge.isActive
        rawTimestamp[i] = edge.timestamp
        if edge.timestamp < windowEnd[i] {
            chatterCount &+= 1
            if nextDeadline > windowEnd[i] { nextDeadline = windowEnd[i] }
            return nil
        }
        guard edge.isActive != acceptedLevel[i] else { return nil }
        acceptedLevel[i] = edge.isActive
        windowEnd[i] = edge.timestamp &+ windowNanoseconds
        return edge
    }

    /// Reports, one per call, a line whose window has closed at a level other than the one
    /// acted on. Call until it returns nil.
    public mutating func settle(now: UInt64) -> SensorEdge? { settleWhenDue(now: now)?.edge }

    /// As `settle(now:)`, with the time the settle fell due (its window's end): a caller that
    /// decided other things past that time before settling can say so (`HotLoop`).
    public mutating func settleWhenDue(now: UInt64) -> (edge: SensorEdge, due: UInt64)? {
        guard nextDeadline <= now else { return nil }
        var settled: (edge: SensorEdge, due: UInt64)? = nil
        // The earliest window first (the lowest line at one instant): the hot loop orders the
        // settles between the engine's timers by their windows' ends, and so does the re-scorer.
        var first = -1
        for i in acceptedLevel.indices where rawLevel[i] != acceptedLevel[i] && windowEnd[i] <= now {
            if first < 0 || windowEnd[i] < windowEnd[first] { first = i }
        }
        if first >= 0 {
            let i = first
            let due = windowEnd[i]
            acceptedLevel[i] = rawLevel[i]
            // The settled level opens a window of its own from its real time.
            windowEnd[i] = rawTimestamp[i] &+ windowNanoseconds
            settled = (SensorEdge(timestamp: rawTimestamp[i], line: UInt32(i), isActive: rawLevel[i]), due)
        }
        nextDeadline = .max
        for i in acceptedLevel.indices where rawLevel[i] != acceptedLevel[i] {
            nextDeadline = min(nextDeadline, windowEnd[i])
        }
        return settled
    }
}
