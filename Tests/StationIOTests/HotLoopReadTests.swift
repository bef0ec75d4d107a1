import Foundation
import Synchronization
import Testing

@testable import StationIO

/// Edges through a pipe left blocking, as libgpiod's request descriptors were: a read with
/// nothing waiting waits for the next edge. Read errors can be staged per read.
final class PipeSource: EdgeSource, @unchecked Sendable {
    let readEnd: Int32
    private(set) var writeEnd: Int32
    let lineCount: Int
    /// Reads that fail with EIO before reads work again.
    let failingReads = Atomic<Int>(0)
    let reads = Atomic<Int>(0)

    init(lineCount: Int) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw POSIXError(.EMFILE) }
        readEnd = fds[0]
        writeEnd = fds[1]
        self.lineCount = lineCount
    }

    deinit {
        close(readEnd)
        if writeEnd >= 0 { close(writeEnd) }
    }

    var pollDescriptors: [Int32] { [readEnd] }
    var droppedEdges: UInt64 { 0 }
    var countsDrops: Bool { false }
    func level(of line: UInt32) -> Bool? { Int(line) < lineCount ? false : nil }
    func lines(ofDescriptor index: Int) -> [UInt32] { (0..<lineCount).map(UInt32.init) }

    func readEdges(descriptor index: Int, into buffer: UnsafeMutableBufferPointer<SensorEdge>) -> EdgeRead {
        reads.add(1, ordering: .relaxed)
        if failingReads.load(ordering: .relaxed) > 0 {
            failingReads.subtract(1, ordering: .relaxed)
            return .failed(errno: EIO)
        }
        let stride = MemoryLayout<SensorEdge>.stride
        let n = read(readEnd, buffer.baseAddress, buffer.count * stride)
        return n < 0 ? .failed(errno: errno) : .edges(n / stride)
    }

    /// Writes the edges in one write (atomic up to PIPE_BUF): the loop finds them all waiting.
    func put(_ edges: [SensorEdge]) {
        precondition(edges.count * MemoryLayout<SensorEdge>.stride <= 4096)
        let written = edges.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) }
        precondition(written == edges.count * MemoryLayout<SensorEdge>.stride)
    }

    /// The writer goes away: the read end polls POLLHUP and reads nothing, for ever.
    func hangUp() {
        close(writeEnd)
        writeEnd = -1
    }
}

/// A source whose first descriptor is broken (it polls readable for ever and every read fails,
/// as a GPIO request does once its chip is gone) beside a healthy simulated lineup.
final class HalfBrokenSource: EdgeSource, @unchecked Sendable {
    let healthy: SimulatedLineup
    private let brokenRead: Int32
    private let brokenWrite: Int32
    let brokenReads = Atomic<Int>(0)

    init() throws {
        healthy = try SimulatedLineup(lineCount: 4)
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw POSIXError(.EMFILE) }
        brokenRead = fds[0]
        brokenWrite = fds[1]
        var byte: UInt8 = 1
        _ = write(brokenWrite, &byte, 1)  // never read: readable for ever
    }

    deinit {
        close(brokenRead)
        close(brokenWrite)
    }

    var pollDescriptors: [Int32] { [brokenRead] + healthy.pollDescriptors }
    var droppedEdges: UInt64 { 0 }
    var countsDrops: Bool { true }
    func level(of line: UInt32) -> Bool? { healthy.level(of: line) }
    /// The broken descriptor serves lines 2 and 3 (a second chip, say); the pipe lines 0 and 1.
    func lines(ofDescriptor index: Int) -> [UInt32] { index == 0 ? [2, 3] : [0, 1] }

    func readEdges(descriptor index: Int, into buffer: UnsafeMutableBufferPointer<SensorEdge>) -> EdgeRead {
        guard index == 0 else { return healthy.readEdges(descriptor: 0, into: buffer) }
        brokenReads.add(1, ordering: .relaxed)
        return .failed(errno: EIO)
    }
}

/// The engine's part, reduced to a hold: the nose at `target` for `hold` clicks at the
/// hold's deadline. Counts the debounced edges it is handed.
final class HoldAtTarget: HotPathHandler, @unchecked Sendable {
    let target: UInt32
    let hold: UInt64
    private(set) var nextDeadline: UInt64 = .max
    let holdStart = Atomic<UInt64>(0)
    let clickedAt = Atomic<UInt64>(0)
    let handled = Atomic<Int>(0)

    init(target: UInt32, hold: UInt64) {
        self.target = target
        self.hold = hold
    }

    func handle(_ edge: SensorEdge) -> HotPathDecision {
        handled.add(1, ordering: .relaxed)
        guard edge.line == target else { return .none }
        if edge.isActive {
            holdStart.store(edge.timestamp, ordering: .relaxed)
            nextDeadline = edge.timestamp &+ hold
        } else {
            nextDeadline = .max
        }
        return .none
    }

    func deadline(now: UInt64) -> HotPathDecision {
        nextDeadline = .max
        clickedAt.store(now, ordering: .relaxed)
        return .click
    }
}

private func drainFaults(_ loop: HotLoop, into faults: inout [EdgeSourceFault]) {
    loop.sourceFaults.drain { faults.append($0) }
}

@Suite struct HotLoopReadTests {
    /// libgpiod v2's kernel buffer holds exactly one batch (64): a loop that read on while a
    /// read came back full blocked in the next read, on a blocking descriptor, until another
    /// edge came; the hold at the target got no click while the nose stayed.
    @Test(arguments: [64, 128])
    func aFullBatchAndThenQuietStillClicksTheHoldAtItsDeadline(burst: Int) throws {
        let source = try PipeSource(lineCount: 2)
        let hold: UInt64 = 20_000_000
        let handler = HoldAtTarget(target: 0, hold: hold)
        let loop = try HotLoop(
            source: source, debouncer: Debouncer(lineCount: 2, windowNanoseconds: 5_000_000), handler: handler,
            player: nil, records: EventRing<StationRecord>(capacity: 1024))
        let thread = Thread { loop.run() }
        thread.start()

        // A storm on station 2, and as its last edge the nose arriving at station 1 (the
        // target): exactly `burst` edges, all waiting when the loop wakes. Then nothing.
        let t0 = MonotonicClock.now()
        var edges = (0..<(burst - 1)).map {
            SensorEdge(timestamp: t0 &+ UInt64($0) * 10_000, line: 1, isActive: $0 % 2 == 0)
        }
        let arrival = t0 &+ UInt64(burst - 1) * 10_000
        edges.append(SensorEdge(timestamp: arrival, line: 0, isActive: true))
        source.put(edges)

        // Only the hold's deadline can click now: no edge follows. The bound only keeps a
        // failing run from hanging.
        let clicked = eventually(10) { handler.clickedAt.load(ordering: .relaxed) != 0 }
        #expect(clicked, "no click while the nose held the target after a burst of \(burst) edges")
        if !clicked {
            // Free a loop stuck in read(), so it can stop.
            source.put([SensorEdge(timestamp: MonotonicClock.now(), line: 1, isActive: false)])
        }
        loop.stop()
        #expect(eventually { thread.isFinished })
        #expect(handler.holdStart.load(ordering: .relaxed) == arrival)
        if clicked {
            #expect(loop.edgeCount == UInt64(burst))
            #expect(handler.clickedAt.load(ordering: .relaxed) >= arrival &+ hold)
        }
    }

    @Test func aBrokenDescriptorIsReportedOnceRetriedThenGivenUpWhileTheOtherLinesGoOn() throws {
        let source = try HalfBrokenSource()
        let handler = HoldAtTarget(target: 0, hold: 1_000_000)
        let loop = try HotLoop(
            source: source, debouncer: Debouncer(lineCount: 4, windowNanoseconds: 1_000_000), handler: handler,
            player: nil, records: EventRing<StationRecord>(capacity: 64), readRetryNanoseconds: 1_000_000,
            readRetries: 3)
        let thread = Thread { loop.run() }
        thread.start()

        var faults: [EdgeSourceFault] = []
        #expect(
            eventually {
                drainFaults(loop, into: &faults)
                return faults.contains { $0.kind == .abandoned }
            })
        // The first failure and three retries (1, 2 and 4 ms after), then given up.
        #expect(faults.map(\.kind) == [.failed, .abandoned])
        #expect(faults.allSatisfy { $0.descriptor == 0 && $0.errno == EIO && $0.lines == 0b1100 })
        #expect(faults.first?.lineIndexes == [2, 3])
        #expect(source.brokenReads.load(ordering: .relaxed) == 4)
        #expect(loop.readErrorCount == 4)
        #expect(loop.linesOutOfService == 0b1100)

        // The healthy lines go on: the nose at station 1 is held and clicked.
        source.healthy.inject(line: 0, active: true)
        #expect(eventually { handler.clickedAt.load(ordering: .relaxed) != 0 })
        loop.stop()
        #expect(eventually { thread.isFinished })
        drainFaults(loop, into: &faults)
        #expect(faults.count == 2)
        #expect(source.brokenReads.load(ordering: .relaxed) == 4)
        // A loop that spun on the broken descriptor would pass millions of times; this one
        // passed about a dozen: four failed reads, three pauses, an edge, its debounce window,
        // the hold's deadline and the stop.
        #expect(loop.wakeUpCount < 40, "the loop passed \(loop.wakeUpCount) times")
    }

    @Test func aDescriptorThatFailsOnceIsBackAfterItsPause() throws {
        let source = try PipeSource(lineCount: 2)
        source.failingReads.store(1, ordering: .relaxed)
        let handler = HoldAtTarget(target: 0, hold: 1_000_000)
        let loop = try HotLoop(
            source: source, debouncer: Debouncer(lineCount: 2, windowNanoseconds: 1_000_000), handler: handler,
            player: nil, records: EventRing<StationRecord>(capacity: 64), readRetryNanoseconds: 1_000_000)
        let thread = Thread { loop.run() }
        thread.start()
        let t = MonotonicClock.now()
        source.put([SensorEdge(timestamp: t, line: 0, isActive: true)])
        // The first read fails; the retry reads the edge, and the hold clicks.
        #expect(eventually { handler.clickedAt.load(ordering: .relaxed) != 0 })
        loop.stop()
        #expect(eventually { thread.isFinished })
        var faults: [EdgeSourceFault] = []
        drainFaults(loop, into: &faults)
        #expect(faults.map(\.kind) == [.failed, .recovered])
        #expect(faults.allSatisfy { $0.errno == EIO && $0.lines == 0b11 })
        #expect(loop.linesOutOfService == 0)
        #expect(loop.readErrorCount == 1)
        #expect(handler.holdStart.load(ordering: .relaxed) == t)
    }

    @Test func aDescriptorThatHangsUpIsNotSpunOn() throws {
        let source = try PipeSource(lineCount: 1)
        let loop = try HotLoop(
            source: source, debouncer: Debouncer(lineCount: 1, windowNanoseconds: 1_000_000),
            handler: HoldAtTarget(target: 0, hold: 1_000_000), player: nil,
            records: EventRing<StationRecord>(capacity: 64), readRetryNanoseconds: 1_000_000, readRetries: 2)
        let thread = Thread { loop.run() }
        thread.start()
        source.hangUp()  // POLLHUP, and reads of nothing, for ever
        var faults: [EdgeSourceFault] = []
        #expect(
            eventually {
                drainFaults(loop, into: &faults)
                return faults.contains { $0.kind == .abandoned }
            })
        let reads = source.reads.load(ordering: .relaxed)
        loop.stop()
        #expect(eventually { thread.isFinished })
        #expect(faults.map(\.kind) == [.failed, .abandoned])
        #expect(faults.first?.errno == EIO)
        #expect(reads == 3)  // the first and two retries
        #expect(loop.wakeUpCount < 20, "the loop passed \(loop.wakeUpCount) times")
    }
}
