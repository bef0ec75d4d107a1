import Glibc
import Synchronization

/// A lineup with no hardware: edges written by simulated sensors (a virtual dog, a storm
/// generator, a test) reach the hot loop through a pipe, so it polls and reads them exactly
/// as it does the kernel's GPIO request descriptors. Each edge is stamped when it is
/// injected, as the kernel stamps an edge in its interrupt handler.
///
/// Like the kernel's per-line buffer, the pipe is bounded: when the loop falls behind and
/// it is full, the edge is dropped and counted rather than blocking the sensor.
///
/// A line can be given a fault (`setFault`), as a broken sensor would have: while it lasts the
/// line no longer follows what the world (the virtual dog) does; lifted, it reads the world's
/// level again.
public final class SimulatedLineup: EdgeSource, OutputDriver, @unchecked Sendable {
    /// A broken sensor on one line.
    public enum LineFault: Sendable, Hashable {
        /// Active, whatever the dog does.
        case stuck
        /// Never active, whatever the dog does.
        case dead
        /// Only a storm moves it (`startStorm`).
        case chatter
    }

    private let readEnd: Int32
    private let writeEnd: Int32
    private let levels: UnsafeMutablePointer<UInt8>
    private let lineCount: Int
    private let dropped = Atomic<UInt64>(0)
    private let injected = Atomic<UInt64>(0)
    /// Simulated output lines: the level, and how many times each went active.
    private let outputLevels: UnsafeMutablePointer<Atomic<Bool>>
    private let outputPulses: UnsafeMutablePointer<Atomic<UInt64>>
    public let outputCount: Int
    /// Per line: its fault, and the level the world asks for (what it reads once the fault is lifted).
    private let faults: Mutex<(fault: [LineFault?], wanted: [Bool])>

    public init(lineCount: Int, outputCount: Int = 0) throws(StationIOError) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw .system("making the simulated lineup's pipe") }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        readEnd = fds[0]
        writeEnd = fds[1]
        self.lineCount = lineCount
        levels = .allocate(capacity: max(1, lineCount))
        levels.initialize(repeating: 0, count: max(1, lineCount))
        self.outputCount = outputCount
        outputLevels = .allocate(capacity: max(1, outputCount))
        outputPulses = .allocate(capacity: max(1, outputCount))
        for i in 0..<max(1, outputCount) {
            (outputLevels + i).initialize(to: Atomic(false))
            (outputPulses + i).initialize(to: Atomic(0))
        }
        faults = Mutex((Array(repeating: nil, count: lineCount), Array(repeating: false, count: lineCount)))
    }

    deinit {
        close(readEnd)
        close(writeEnd)
        levels.deallocate()
        outputLevels.deinitialize(count: max(1, outputCount))
        outputLevels.deallocate()
        outputPulses.deinitialize(count: max(1, outputCount))
        outputPulses.deallocate()
    }

    /// Sets a simulated output; counts each change to active. Safe from any thread.
    @discardableResult
    public func setOutput(_ index: Int, active: Bool) -> Bool {
        guard index >= 0 && index < outputCount else { return false }
        let was = outputLevels[index].exchange(active, ordering: .relaxed)
        if active && !was { outputPulses[index].add(1, ordering: .relaxed) }
        return true
    }

    /// An output's level now, and how many times it went active.
    public func output(_ index: Int) -> (active: Bool, pulses: UInt64)? {
        guard index >= 0 && index < outputCount else { return nil }
        return (outputLevels[index].load(ordering: .relaxed), outputPulses[index].load(ordering: .relaxed))
    }

    public var pollDescriptors: [Int32] { [readEnd] }
    public var countsDrops: Bool { true }
    public var droppedEdges: UInt64 { dropped.load(ordering: .relaxed) }
    /// Edges that entered the pipe.
    public var injectedEdges: UInt64 { injected.load(ordering: .relaxed) }

    public func readEdges(descriptor index: Int, into buffer: UnsafeMutableBufferPointer<SensorEdge>) -> EdgeRead {
        let stride = MemoryLayout<SensorEdge>.stride
        let n = read(readEnd, buffer.baseAddress, buffer.count * stride)
        if n < 0 {
            let code = errno
            return code == EAGAIN || code == EWOULDBLOCK || code == EINTR ? .edges(0) : .failed(errno: code)
        }
        // Writes of one record are atomic (smaller than PIPE_BUF), so reads come in whole records.
        return .edges(n / stride)
    }

    /// The one pipe carries every line.
    public func lines(ofDescriptor index: Int) -> [UInt32] { (0..<lineCount).map(UInt32.init) }

    public func level(of line: UInt32) -> Bool? {
        Int(line) < lineCount ? levels[Int(line)] != 0 : nil
    }

    /// Puts an edge on the lineup, stamped now unless a time is given. Safe from any thread.
    /// Returns false when the edge was dropped because the loop is behind. On a faulty line the
    /// edge is only remembered (the world's level), nothing reaches the loop.
    @discardableResult
    public func inject(line: UInt32, active: Bool, at timestamp: UInt64 = MonotonicClock.now()) -> Bool {
        let faulty = faults.withLock { state -> Bool in
            guard Int(line) < state.wanted.count else { return false }
            state.wanted[Int(line)] = active
            return state.fault[Int(line)] != nil
        }
        if faulty { return true }
        return put(line: line, active: active, at: timestamp)
    }

    /// The line's fault now, if any.
    public func fault(of line: UInt32) -> LineFault? {
        faults.withLock { Int(line) < $0.fault.count ? $0.fault[Int(line)] : nil }
    }

    /// Gives `line` a fault (nil lifts it). A stuck line goes active now, a dead one inactive;
    /// lifted, the line goes to the world's level. Each change is one edge, stamped `now`.
    public func setFault(_ fault: LineFault?, line: UInt32, at now: UInt64 = MonotonicClock.now()) {
        guard Int(line) < lineCount else { return }
        let target: Bool? = faults.withLock { state in
            state.fault[Int(line)] = fault
            switch fault {
            case .stuck: return true
            case .dead: return false
            case .chatter: return nil
            case nil: return state.wanted[Int(line)]
            }
        }
        if let target, (levels[Int(line)] != 0) != target { put(line: line, active: target, at: now) }
    }

    // MARK: A storm

    /// Lines in a storm (bit i: line i) and the time of their next toggle; every write to the
    /// pipe is made under this lock, after the storm's toggles due before its stamp.
    private let writing = Mutex<(lines: UInt64, next: UInt64)>((0, 0))
    /// A storm toggles its lines this often.
    public static let stormPeriod: UInt64 = 1_000_000

    /// `line` storms from `now`: it flips every `stormPeriod`, whatever the world does, each
    /// toggle stamped at its own time, as the kernel stamps a real line's edges. Give the line
    /// the `.chatter` fault first, so the world's edges do not reach it meanwhile.
    public func startStorm(line: UInt32, at now: UInt64 = MonotonicClock.now()) {
        guard Int(line) < lineCount, line < 64 else { return }
        writing.withLock { storm in
            putStorm(&storm, upTo: now)
            if storm.lines == 0 { storm.next = now &+ Self.stormPeriod }
            storm.lines |= 1 << UInt64(line)
        }
    }

    /// The storm on `line` ends at `now` (its toggles due by then are put first).
    public func stopStorm(line: UInt32, at now: UInt64 = MonotonicClock.now()) {
        guard line < 64 else { return }
        writing.withLock { storm in
            putStorm(&storm, upTo: now)
            storm.lines &= ~(1 << UInt64(line))
        }
    }

    /// Puts the storm's toggles due by `now`; returns when the next is due, or nil when no
    /// line storms. The storm's own thread calls this; a thread that runs late (a loaded
    /// machine) puts what it missed, stamped when each was due, so a storm has no gaps.
    @discardableResult
    public func runStorm(upTo now: UInt64 = MonotonicClock.now()) -> UInt64? {
        writing.withLock { storm in
            putStorm(&storm, upTo: now)
            return storm.lines == 0 ? nil : storm.next
        }
    }

    /// Call with `writing` held.
    private func putStorm(_ storm: inout (lines: UInt64, next: UInt64), upTo now: UInt64) {
        while storm.lines != 0 && storm.next <= now {
            var lines = storm.lines
            while lines != 0 {
                let line = lines.trailingZeroBitCount
                lines &= ~(1 << UInt64(line))
                write(line: UInt32(line), active: levels[line] == 0, at: storm.next)
            }
            storm.next &+= Self.stormPeriod
        }
    }

    @discardableResult
    private func put(line: UInt32, active: Bool, at timestamp: UInt64) -> Bool {
        writing.withLock { storm in
            // A storm's toggles stamped before this edge go first: the pipe stays in the order
            // of its stamps (an edge stamped before one already read is time running backwards).
            putStorm(&storm, upTo: timestamp)
            return write(line: line, active: active, at: timestamp)
        }
    }

    /// Call with `writing` held.
    @discardableResult
    private func write(line: UInt32, active: Bool, at timestamp: UInt64) -> Bool {
        var edge = SensorEdge(timestamp: timestamp, line: line, isActive: active)
        if Int(line) < lineCount { levels[Int(line)] = active ? 1 : 0 }
        let written = Glibc.write(writeEnd, &edge, MemoryLayout<SensorEdge>.stride)
        guard written == MemoryLayout<SensorEdge>.stride else {
            dropped.add(1, ordering: .relaxed)
            return false
        }
        injected.add(1, ordering: .relaxed)
        return true
    }
}
