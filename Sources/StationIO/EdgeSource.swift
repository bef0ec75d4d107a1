/// What one read of an edge descriptor gave.
public enum EdgeRead: Sendable, Hashable, BitwiseCopyable {
    /// This many edges were put in the buffer, oldest first; 0 when none waited (the
    /// descriptor would have blocked, or the read was interrupted).
    case edges(Int)
    /// The read failed with this errno: the descriptor is broken (a chip unbound, a request
    /// revoked), not merely empty.
    case failed(errno: Int32)
}

/// Where edges come from: the real GPIO lines or the simulated lineup. The hot loop polls
/// `pollDescriptors` and, when one is readable, reads one batch from it: at most one read per
/// wake-up, so a descriptor that is not non-blocking still cannot stall the hot thread.
public protocol EdgeSource: AnyObject {
    /// File descriptors that become readable when edges wait.
    var pollDescriptors: [Int32] { get }
    /// Reads up to `buffer.count` waiting edges from descriptor number `index`, oldest
    /// first. Never allocates, and never blocks when `pollDescriptors[index]` polled readable.
    func readEdges(descriptor index: Int, into buffer: UnsafeMutableBufferPointer<SensorEdge>) -> EdgeRead
    /// The input lines whose edges descriptor number `index` delivers (line indexes as in
    /// `SensorEdge.line`): what a read error on it puts out of service.
    func lines(ofDescriptor index: Int) -> [UInt32]
    /// Edges lost before they could be read (kernel buffer overflow), where that can be told.
    var droppedEdges: UInt64 { get }
    /// Whether `droppedEdges` can see drops at all (libgpiod v1 cannot).
    var countsDrops: Bool { get }
    /// A line's level now, for `selftest` and to seed the debouncer.
    func level(of line: UInt32) -> Bool?
}

/// A broken edge descriptor, as the hot loop reports it: once when it fails, once more when it
/// reads again or is given up, never once per read.
public struct EdgeSourceFault: Sendable, Hashable, BitwiseCopyable {
    public enum Kind: Sendable, Hashable, BitwiseCopyable {
        /// A read failed: its lines are out of service; the loop stops polling it and tries
        /// again after a pause, longer each time.
        case failed
        /// A retry read again: its lines are back in service.
        case recovered
        /// It kept failing: no longer polled until a new hot loop is made (the next segment).
        case abandoned
    }

    public var kind: Kind
    /// Index into the source's `pollDescriptors`.
    public var descriptor: Int
    /// The errno of the failed read (for `recovered`, of the failure it recovered from); EIO
    /// when poll reported an error or hang-up and the read found nothing.
    public var errno: Int32
    /// The input lines the descriptor serves, one bit per line index (indexes 0 to 63; the
    /// source's `lines(ofDescriptor:)` has them all).
    public var lines: UInt64
    /// CLOCK_MONOTONIC nanoseconds when the loop saw it.
    public var timestamp: UInt64

    public init(kind: Kind, descriptor: Int, errno: Int32, lines: UInt64, timestamp: UInt64) {
        self.kind = kind
        self.descriptor = descriptor
        self.errno = errno
        self.lines = lines
        self.timestamp = timestamp
    }

    /// The line indexes in `lines`, lowest first.
    public var lineIndexes: [UInt32] { (0..<64).filter { lines & (1 << UInt64($0)) != 0 }.map(UInt32.init) }
}

/// One bit per line index below 64, for `EdgeSourceFault.lines`.
func lineMask(_ lines: [UInt32]) -> UInt64 {
    lines.reduce(0) { $1 < 64 ? $0 | (1 << UInt64($1)) : $0 }
}
