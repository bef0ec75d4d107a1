import Glibc
import Synchronization

/// The clicker and error buttons of the station's page, on the physical buttons' path: a press
/// is written as the button line's edges into a pipe that the hot loop polls beside the GPIO
/// descriptors, so the hot thread reads it as it reads a button edge (one `read`, no lock, no
/// allocation) and the engine's click and its record come from that one reading. The edges carry
/// the button's own line index, so a press from the page and one from the hand are the same input.
///
/// The control thread is the only writer. A press is its down edge and its up edge, stamped
/// when the request arrived; the debouncer acts on the down edge at once and, the up edge
/// coming within its window, reports the release when the window closes. A full pipe (the
/// hot loop far behind) drops the press and says so; it never blocks the writer.
public final class PageButtons: EdgeSource, @unchecked Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32
    private let buttonLines: [UInt32]
    private let dropped = Atomic<UInt64>(0)

    /// `lines`: the button lines a press may name (the board's clicker and error lines).
    public init(lines: [UInt32]) throws(StationIOError) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw .system("making the page buttons' pipe") }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        readEnd = fds[0]
        writeEnd = fds[1]
        buttonLines = lines
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// One press of the button on `line`, stamped now. False when the line is not one of this
    /// source's, or the pipe is full.
    @discardableResult
    public func press(line: UInt32, at timestamp: UInt64 = MonotonicClock.now()) -> Bool {
        guard buttonLines.contains(line) else { return false }
        // Both edges in one write (under PIPE_BUF, so atomic): never a down without its up.
        var edges = (
            SensorEdge(timestamp: timestamp, line: line, isActive: true),
            SensorEdge(timestamp: timestamp, line: line, isActive: false)
        )
        let size = 2 * MemoryLayout<SensorEdge>.stride
        let written = withUnsafeBytes(of: &edges) { write(writeEnd, $0.baseAddress, size) }
        guard written == size else {
            dropped.add(1, ordering: .relaxed)
            return false
        }
        return true
    }

    public var pollDescriptors: [Int32] { [readEnd] }
    public var countsDrops: Bool { true }
    public var droppedEdges: UInt64 { dropped.load(ordering: .relaxed) }

    public func readEdges(descriptor index: Int, into buffer: UnsafeMutableBufferPointer<SensorEdge>) -> EdgeRead {
        let stride = MemoryLayout<SensorEdge>.stride
        let n = read(readEnd, buffer.baseAddress, buffer.count * stride)
        if n < 0 {
            let code = errno
            return code == EAGAIN || code == EWOULDBLOCK || code == EINTR ? .edges(0) : .failed(errno: code)
        }
        return .edges(n / stride)
    }

    public func lines(ofDescriptor index: Int) -> [UInt32] { buttonLines }

    /// A press leaves the button up: the page never holds a line down.
    public func level(of line: UInt32) -> Bool? { buttonLines.contains(line) ? false : nil }
}

/// Two edge sources polled as one: the board's (GPIO or simulated) first, then another's (the
/// page's buttons). Descriptor indexes run on from the first source's into the second's; a
/// line's level is the first source's.
public final class CombinedEdgeSource: EdgeSource, @unchecked Sendable {
    public let first: any EdgeSource
    public let second: any EdgeSource
    private let firstCount: Int

    public init(_ first: any EdgeSource, _ second: any EdgeSource) {
        self.first = first
        self.second = second
        firstCount = first.pollDescriptors.count
    }

    public var pollDescriptors: [Int32] { first.pollDescriptors + second.pollDescriptors }
    public var droppedEdges: UInt64 { first.droppedEdges + second.droppedEdges }
    public var countsDrops: Bool { first.countsDrops }

    public func readEdges(descriptor index: Int, into buffer: UnsafeMutableBufferPointer<SensorEdge>) -> EdgeRead {
        index < firstCount
            ? first.readEdges(descriptor: index, into: buffer)
            : second.readEdges(descriptor: index - firstCount, into: buffer)
    }

    public func lines(ofDescriptor index: Int) -> [UInt32] {
        index < firstCount ? first.lines(ofDescriptor: index) : second.lines(ofDescriptor: index - firstCount)
    }

    public func level(of line: UInt32) -> Bool? { first.level(of: line) }
}
