import CStationShim
import Glibc
import Synchronization

/// What the hot path decided about an input.
public enum HotPathDecision: Sendable, BitwiseCopyable {
    case none
    /// Reward now: the click sounds for the edge with this timestamp.
    case click
    /// Sound the trainer's timer cue (never the click; a click sounding is not cut for it).
    case cue(CueSound)
}

/// The decision-maker the hot loop calls: the training engine in the daemon, a fixed rule in
/// the benchmark. Called only on the hot thread; must not block or allocate.
public protocol HotPathHandler: AnyObject {
    /// A debounced change of an input, or a level that settled after chatter.
    func handle(_ edge: SensorEdge) -> HotPathDecision
    /// The earliest time the handler wants `deadline(now:)`, or `.max`.
    var nextDeadline: UInt64 { get }
    /// Called at or after `nextDeadline`.
    func deadline(now: UInt64) -> HotPathDecision
    /// Called on the hot thread after `HotLoop.wake()`: the moment to take commands another
    /// thread queued for the handler (start, ready, abort).
    func wokenUp(now: UInt64) -> HotPathDecision
    /// Called after each decision was carried out (the click first): the moment for work
    /// that must not delay a click, such as setting output lines.
    func afterDecision()
}

extension HotPathHandler {
    public func afterDecision() {}

    public func wokenUp(now: UInt64) -> HotPathDecision { .none }
}

/// What the hot path hands to the log, through the ring, after it has acted.
public enum StationRecord: Sendable, BitwiseCopyable {
    /// A raw edge as the kernel stamped it; `acted` when the debouncer passed it on.
    case edge(SensorEdge, acted: Bool)
    /// A level the debouncer settled at after chatter (stamped with its real time).
    case settled(SensorEdge)
    case click(ClickRecord)
    case clickFailed(edgeTimestamp: UInt64, ClickFailure)
    /// The buzzer was switched on for the edge at `edgeTimestamp`, at `switchedAt`.
    case buzzer(edgeTimestamp: UInt64, switchedAt: UInt64)
}

/// The station's one real-time loop: poll the edge descriptors, debounce, let the handler
/// decide, click, and only then hand records to the log through a lock-free ring.
///
/// Everything it touches is made before `run()`: the poll set, the edge batch, the click's
/// frames. It never waits on SQLite, a socket or a lock; the log writer wakes through an
/// eventfd it signals once per batch, after the click.
public final class HotLoop: @unchecked Sendable {
    private let source: any EdgeSource
    private var debouncer: Debouncer
    private let handler: any HotPathHandler
    private let player: ClickPlayer?
    private let buzzer: (any BuzzerLine)?
    private let buzzerPulse: UInt64
    private let records: EventRing<StationRecord>
    private let recordsReady: Int32
    private let wakeFD: Int32
    private let stopRequested = Atomic<Bool>(false)

    private let pollSet: UnsafeMutablePointer<pollfd>
    private let pollCapacity: Int
    private let sourceCount: Int
    private let batch: UnsafeMutableBufferPointer<SensorEdge>
    private var buzzerOffAt: UInt64 = .max
    private var pushedThisRound = false

    private let edgesRead = Atomic<UInt64>(0)
    private let clicksPlayed = Atomic<UInt64>(0)

    /// - Parameters:
    ///   - recordsReady: an eventfd the log consumer waits on, or -1.
    public init(
        source: any EdgeSource, debouncer: Debouncer, handler: any HotPathHandler, player: ClickPlayer?,
        buzzer: (any BuzzerLine)? = nil, buzzerPulseNanoseconds: UInt64 = 15_000_000,
        records: EventRing<StationRecord>, recordsReady: Int32 = -1
    ) throws(StationIOError) {
        self.source = source
        self.debouncer = debouncer
        self.handler = handler
        self.player = player
        self.buzzer = buzzer
        self.buzzerPulse = buzzerPulseNanoseconds
        self.records = records
        self.recordsReady = recordsReady
        let fd = lineup_eventfd()
        guard fd >= 0 else { throw .system("making the hot loop's wake-up eventfd", errno: -fd) }
        wakeFD = fd
        sourceCount = source.pollDescriptors.count
        pollCapacity = sourceCount + 1 + 8  // edges, wake-up, the audio device's descriptors
        pollSet = .allocate(capacity: pollCapacity)
        pollSet.initialize(repeating: pollfd(), count: pollCapacity)
        for (i, d) in source.pollDescriptors.enumerated() {
            pollSet[i] = pollfd(fd: d, events: Int16(POLLIN), revents: 0)
        }
        pollSet[sourceCount] = pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)
        batch = .allocate(capacity: 64)
    }

    deinit {
        close(wakeFD)
        pollSet.deallocate()
        batch.deallocate()
    }

    /// Asks `run()` to return. Safe from any thread and from a signal handler's thread.
    public func stop() {
        stopRequested.store(true, ordering: .relaxed)
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// Wakes the loop so it calls the handler's `wokenUp(now:)`. Safe from any thread; never blocks.
    public func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// Raw edges read so far.
    public var edgeCount: UInt64 { edgesRead.load(ordering: .relaxed) }
    /// Clicks that sounded.
    public var clickCount: UInt64 { clicksPlayed.load(ordering: .relaxed) }
    /// Raw edges the debouncer treated as chatter.
    public var chatterCount: UInt64 { debouncer.chatterCount }

    /// Asks for SCHED_FIFO at `priority` for the calling thread and locks the process's memory
    /// as it is touched (MCL_ONFAULT: what is used stays resident, nothing more is faulted in),
    /// so a page fault cannot delay a click. Returns nil, or why it could not (not root, no
    /// CAP_SYS_NICE / CAP_IPC_LOCK, or RLIMIT_MEMLOCK too small).
    public static func makeCurrentThreadRealtime(priority: Int32 = 80, lockMemory: Bool = true) -> String? {
        var problems: [String] = []
        var param = sched_param()
        param.sched_priority = priority
        let rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param)
        if rc != 0 { problems.append("SCHED_FIFO \(priority): \(String(cString: strerror(rc)))") }
        if lockMemory, mlockall(MCL_CURRENT | MCL_FUTURE | 4 /* MCL_ONFAULT */) != 0 {
            problems.append("mlockall: \(String(cString: strerror(errno)))")
        }
        return problems.isEmpty ? nil : problems.joined(separator: "; ")
    }

    /// Runs until `stop()`. Call on the thread that owns the hot path.
    public func run() {
        while !stopRequested.load(ordering: .relaxed) {
            var count = sourceCount + 1
            if let player, player.isWritingClick, let fds = player.pollDescriptors {
                for k in 0..<min(fds.count, pollCapacity - count) {
                    pollSet[count] = fds[k]
                    count += 1
                }
            }
            for i in 0..<count { pollSet[i].revents = 0 }
            let deadline = min(debouncer.nextDeadline, handler.nextDeadline, buzzerOffAt)
            var timeout: Int64 = -1
            if deadline != .max {
                let now = MonotonicClock.now()
                timeout = deadline > now ? Int64(clamping: deadline - now) : 0
            }
            let ready = lineup_ppoll(pollSet, UInt(count), timeout)
            if ready > 0 {
                for i in 0..<sourceCount where pollSet[i].revents != 0 { readSource(i) }
                if count > sourceCount + 1, let player, let fds = player.pollDescriptors {
                    // ALSA reads the events back from its own descriptors.
                    for k in 0..<min(fds.count, count - sourceCount - 1) {
                        fds[k].revents = pollSet[sourceCount + 1 + k].revents
                    }
                    player.continueClick()
                }
                if pollSet[sourceCount].revents != 0 {
                    var value: UInt64 = 0
                    _ = read(wakeFD, &value, 8)
                    let now = MonotonicClock.now()
                    pushedThisRound = true
                    decide(handler.wokenUp(now: now), edgeTimestamp: now)
                }
            }
            runDeadlines(now: MonotonicClock.now())
            if pushedThisRound {
                pushedThisRound = false
                if recordsReady >= 0 {
                    var one: UInt64 = 1
                    _ = write(recordsReady, &one, 8)
                }
            }
        }
    }

    @inline(__always)
    private func readSource(_ index: Int) {
        // Drain the descriptor: a storm may have left more than one batch waiting.
        while true {
            let n = source.readEdges(descriptor: index, into: batch)
            guard n > 0 else { return }
            edgesRead.add(UInt64(n), ordering: .relaxed)
            for k in 0..<n {
                let edge = batch[k]
                while let settled = debouncer.settle(now: edge.timestamp) { act(on: settled, settled: true) }
                if let acted = debouncer.accept(edge) {
                    act(on: acted, settled: false)
                    push(.edge(edge, acted: true))
                } else {
                    push(.edge(edge, acted: false))
                }
            }
            if n < batch.count { return }
        }
    }

    @inline(__always)
    private func act(on edge: SensorEdge, settled: Bool) {
        decide(handler.handle(edge), edgeTimestamp: edge.timestamp)
        if settled { push(.settled(edge)) }
    }

    @inline(__always)
    private func decide(_ decision: HotPathDecision, edgeTimestamp: UInt64) {
        switch decision {
        case .none: break
        case .click: reward(edgeTimestamp: edgeTimestamp)
        case .cue(let cue): player?.cue(cue)
        }
        handler.afterDecision()
    }

    @inline(__always)
    private func reward(edgeTimestamp: UInt64) {
        // The click first; everything else waits until it is in ALSA's hands.
        if let player {
            let outcome = player.click(edgeTimestamp: edgeTimestamp)
            switch outcome {
            case .played(let record):
                clicksPlayed.add(1, ordering: .relaxed)
                push(.click(record))
            case .failed(let ts, let why):
                push(.clickFailed(edgeTimestamp: ts, why))
            }
        }
        if let buzzer, buzzer.set(active: true) {
            let now = MonotonicClock.now()
            buzzerOffAt = now &+ buzzerPulse
            if player == nil { clicksPlayed.add(1, ordering: .relaxed) }
            push(.buzzer(edgeTimestamp: edgeTimestamp, switchedAt: now))
        }
    }

    private func runDeadlines(now: UInt64) {
        while let settled = debouncer.settle(now: now) { act(on: settled, settled: true) }
        if handler.nextDeadline <= now {
            // The handler may have queued records of its own: wake the log's consumer too.
            pushedThisRound = true
            decide(handler.deadline(now: now), edgeTimestamp: now)
        }
        if buzzerOffAt <= now {
            _ = buzzer?.set(active: false)
            buzzerOffAt = .max
        }
    }

    @inline(__always)
    private func push(_ record: StationRecord) {
        records.push(record)
        pushedThisRound = true
    }
}
