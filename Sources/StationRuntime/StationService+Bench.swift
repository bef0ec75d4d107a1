import StationIO

// What `lineup-bench click` reads of the station it runs: the hot loop's own counts, which
// the log cannot tell (an edge read but never logged is what the benchmark looks for).
extension StationService {
    /// Raw edges the running segment's hot loop has read (0 between segments).
    public var hotLoopEdgesRead: UInt64 {
        switching.lock()
        defer { switching.unlock() }
        return segment?.loop.edgeCount ?? 0
    }

    /// Clicks the running segment's hot loop played (0 between segments): a click whose record
    /// the full ring refused sounded all the same, and is missing from the log.
    public var hotLoopClicksPlayed: UInt64 {
        switching.lock()
        defer { switching.unlock() }
        return segment?.loop.clickCount ?? 0
    }

    /// Records refused because the one ring to the log feeder was full, since the start.
    public var ringOverflows: UInt64 { ring.overflowCount }
}
