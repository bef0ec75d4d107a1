// Over 500 lines, and kept as one file: the hot loop's state (poll set, debouncer, handler,
// ring, timers) is private to one class and shared by every step of a pass; split across
// files it would have to be open to the whole module.
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
    /// Called after each decision was carried out (the click first, its record pushed): the
    /// moment for work that must not delay a click, such as setting output lines, and for
    /// pushing the handler's own records (`StationRecord.handler`) into the loop's ring. The
    /// ring has one producer, the hot thread: a handler pushes only here, or while the loop
    /// is not running.
    func afterDecision()
}

extension HotPathHandler {
    public func afterDecision() {}

    public func wokenUp(now: UInt64) -> HotPathDecision { .none }
}

/// A record the handler makes on the hot thread (the engine's notes, in the daemon), carried in
/// the loop's ring so it keeps its place among the edges and clicks. StationIO never reads it:
/// the handler encodes `kind` and the words, the log's consumer decodes them. Four words keep
/// `StationRecord` at the size a `ClickRecord` already gave it (40 bytes a slot).
public struct HandlerRecord: Sendable, BitwiseCopyable, Equatable {
    public var a: UInt64
    public var b: UInt64
    public var c: UInt64
    public var d: UInt64
    public var kind: UInt8

    public init(kind: UInt8, _ a: UInt64 = 0, _ b: UInt64 = 0, _ c: UInt64 = 0, _ d: UInt64 = 0) {
        self.kind = kind
        self.a = a
        self.b = b
        self.c = c
        self.d = d
    }
}

/// What the hot path hands to the log, through the one ring, in the order the hot thread made
/// it. For each input: the click's record first (if it clicked), then the input's own record
/// (its raw edge, or its settled level), then the handler's records (pushed in
/// `afterDecision`); so the log's consumer attributes everything by order alone.
public enum StationRecord: Sendable, BitwiseCopyable {
    /// A raw edge as the kernel stamped it; `acted` when the debouncer passed it on.
    /// `knownAt`: read after the handler had decided its timers up to that time, later than the
    /// edge's stamp (a descriptor that took the edge late: a loaded machine, an IRQ thread
    /// behind); 0 when read in its time. The log keeps it so a second scorer can decide as the
    /// station did.
    case edge(SensorEdge, acted: Bool, knownAt: UInt64)
    /// A level the debouncer settled at after chatter (stamped with its real time). `knownAt`:
    /// settled after the handler had decided its timers up to that time, past the window's end
    /// at which the settle fell due (chatter that set the level read late: the emulated tier's
    /// power-cut run held a nose's 46 ms sniff for an indication so); 0 when settled in its time.
    case settled(SensorEdge, knownAt: UInt64)
    case click(ClickRecord)
    case clickFailed(edgeTimestamp: UInt64, ClickFailure)
    /// The buzzer was switched on for the edge at `edgeTimestamp`, at `switchedAt`.
    case buzzer(edgeTimestamp: UInt64, switchedAt: UInt64)
    /// The handler's own record, pushed by the handler on the hot thread.
    case handler(HandlerRecord)
    /// A feeder pulse after a click, pushed when its line went off (or could not be set).
    case feeder(FeederPulse)
}

/// The station's one real-time loop: poll the edge descriptors, debounce, let the handler
/// decide, click, and only then hand records to the log through a lock-free ring.
///
/// Everything it touches is made before `run()`: the poll set, the edge batch, the click's
/// frames. It never waits on SQLite, a socket or a lock; the log writer wakes through an
/// eventfd it signals once per batch, after the click. It reads each readable descriptor once
/// per wake-up, never "until empty": a read after a full batch would block on a descriptor
/// that is not non-blocking, and the hold's deadline would wait for the next edge.
///
/// A descriptor whose read fails is reported once (`sourceFaults`, `linesOutOfService`) and
/// taken out of the poll set, since a broken descriptor polls readable at once for ever; it is
/// tried again after `readRetryNanoseconds`, doubled each time, and given up after
/// `readRetries` more failures. The other descriptors go on.
public final class HotLoop: @unchecked Sendable {
    private let source: any EdgeSource
    private var debouncer: Debouncer
    private let handler: any HotPathHandler
    private let player: ClickPlayer?
    private let buzzer: (any BuzzerLine)?
    private let buzzerPulse: UInt64
    private let records: EventRing<StationRecord>
    private let recordsReady: Int32
    /// Where the levels the loop acts on are published for `status` (nil: nowhere).
    private let levels: InputLevels?
    private let wakeFD: Int32
    private let stopRequested = Atomic<Bool>(false)

    private let pollSet: UnsafeMutablePointer<pollfd>
    private let pollCapacity: Int
    private let sourceCount: Int
    private let batch: UnsafeMutableBufferPointer<SensorEdge>
    private var buzzerOffAt: UInt64 = .max
    private let feeder: (any FeederLine)?
    private var feederSchedule: FeederSchedule
    private var pushedThisRound = false
    /// The latest time the handler's timers were decided up to (`deadline(now:)`'s argument).
    private var decidedUpTo: UInt64 = 0

    private let edgesRead = Atomic<UInt64>(0)
    private let clicksPlayed = Atomic<UInt64>(0)
    private let wakeUps = Atomic<UInt64>(0)

    // Per edge descriptor: its lines, and its state after a failed read.
    private let descriptors: [Int32]
    private let sourceLines: UnsafeMutablePointer<UInt64>
    /// Failed reads in a row (0: healthy).
    private let failedReads: UnsafeMutablePointer<Int>
    /// Readable polls in a row whose read found nothing.
    private let emptyReads: UnsafeMutablePointer<Int>
    private let lastErrno: UnsafeMutablePointer<Int32>
    /// When a paused descriptor goes back into the poll set; .max: not paused.
    private let retryAt: UnsafeMutablePointer<UInt64>
    private var nextRetry: UInt64 = .max
    private let readRetryPause: UInt64
    private let readRetryLimit: Int
    private let readErrors = Atomic<UInt64>(0)
    private let outOfService = Atomic<UInt64>(0)
    /// The broken descriptors' reports, for the daemon (one consumer), beside `records`.
    public let sourceFaults = EventRing<EdgeSourceFault>(capacity: 64)

    /// - Parameters:
    ///   - recordsReady: an eventfd the log consumer waits on (also signalled for
    ///     `sourceFaults`), or -1.
    ///   - readRetryNanoseconds: the pause before a descriptor whose read failed is polled
    ///     again; doubled after each further failure.
    ///   - readRetries: failed retries after which a descriptor is given up.
    ///   - levels: where each debounced level the loop acts on is published, after its decision.
    ///   - feeder: the feeder's line, pulsed `feederDelayNanoseconds` after each click for
    ///     `feederPulseNanoseconds`; nil: no feeder.
    public init(
        source: any EdgeSource, debouncer: Debouncer, handler: any HotPathHandler, player: ClickPlayer?,
        buzzer: (any BuzzerLine)? = nil, buzzerPulseNanoseconds: UInt64 = 15_000_000,
        records: EventRing<StationRecord>, recordsReady: Int32 = -1,
        readRetryNanoseconds: UInt64 = 100_000_000, readRetries: Int = 4, levels: InputLevels? = nil,
        feeder: (any FeederLine)? = nil, feederDelayNanoseconds: UInt64 = 0,
        feederPulseNanoseconds: UInt64 = 100_000_000
    ) throws(StationIOError) {
        self.feeder = feeder
        self.feederSchedule = FeederSchedule(
            delayNanoseconds: feederDelayNanoseconds, widthNanoseconds: feederPulseNanoseconds)
        self.levels = levels
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
        descriptors = source.pollDescriptors
        let slots = max(1, sourceCount)
        sourceLines = .allocate(capacity: slots)
        failedReads = .allocate(capacity: slots)
        emptyReads = .allocate(capacity: slots)
        lastErrno = .allocate(capacity: slots)
        retryAt = .allocate(capacity: slots)
        for i in 0..<slots {
            (sourceLines + i).initialize(to: i < sourceCount ? lineMask(source.lines(ofDescriptor: i)) : 0)
            (failedReads + i).initialize(to: 0)
            (emptyReads + i).initialize(to: 0)
            (lastErrno + i).initialize(to: 0)
            (retryAt + i).initialize(to: .max)
        }
        readRetryPause = max(1, readRetryNanoseconds)
        readRetryLimit = max(0, readRetries)
    }

    deinit {
        close(wakeFD)
        pollSet.deallocate()
        batch.deallocate()
        sourceLines.deallocate()
        failedReads.deallocate()
        emptyReads.deallocate()
        lastErrno.deallocate()
        retryAt.deallocate()
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
    /// The debouncer as the loop left it: read only after `run()` has returned.
    public var debouncerAfterRun: Debouncer { debouncer }
    /// Passes of the loop (each poll's return): a loop that spins shows here.
    public var wakeUpCount: UInt64 { wakeUps.load(ordering: .relaxed) }
    /// Failed reads of edge descriptors, retries included.
    public var readErrorCount: UInt64 { readErrors.load(ordering: .relaxed) }
    /// The input lines whose descriptor is failing or was given up, one bit per line index
    /// (below 64): their levels are unknown and their edges are not seen.
    public var linesOutOfService: UInt64 { outOfService.load(ordering: .relaxed) }

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
            wakeUps.add(1, ordering: .relaxed)
            var count = sourceCount + 1
            if let player, player.isWritingClick, let fds = player.pollDescriptors {
                for k in 0..<min(fds.count, pollCapacity - count) {
                    pollSet[count] = fds[k]
                    count += 1
                }
            }
            for i in 0..<count { pollSet[i].revents = 0 }
            // Pairs, not one four-argument min: its variadic tail is an array, allocated on
            // every pass (the bench counted 0.8 allocations an edge).
            let deadline = min(
                min(min(debouncer.nextDeadline, handler.nextDeadline), min(buzzerOffAt, nextRetry)),
                min(feederSchedule.nextDeadline, player?.streamCheckDue ?? .max))
            var timeout: Int64 = -1
            if deadline != .max {
                let now = MonotonicClock.now()
                timeout = deadline > now ? Int64(clamping: deadline - now) : 0
            }
            let ready = lineup_ppoll(pollSet, UInt(count), timeout)
            if ready == 0 && sourceCount > 0 {
                // A deadline came. An edge stamped before it may have reached its descriptor
                // just as poll timed out: look once more without waiting, so that edge is
                // judged before the deadline is (a break within the hold's tolerance must not
                // end the hold because the timer was read first).
                for i in 0..<sourceCount { pollSet[i].revents = 0 }
                if lineup_ppoll(pollSet, UInt(sourceCount), 0) > 0 {
                    for i in 0..<sourceCount where pollSet[i].revents != 0 {
                        readSource(i, events: pollSet[i].revents)
                    }
                }
            }
            if ready > 0 {
                for i in 0..<sourceCount where pollSet[i].revents != 0 { readSource(i, events: pollSet[i].revents) }
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
        finishFeeding()
    }

    /// One read per wake-up: a storm's next batch waits for the next pass, after the
    /// deadlines, so neither a blocking descriptor nor a long storm can hold a click back.
    @inline(__always)
    private func readSource(_ index: Int, events: Int16) {
        let n: Int
        switch source.readEdges(descriptor: index, into: batch) {
        case .failed(let code):
            sourceFailed(index, errno: code)
            return
        case .edges(let count):
            n = count
        }
        guard n > 0 else {
            // Readable yet nothing to read: an error or hang-up would wake poll at once, for
            // ever; so would a descriptor that keeps polling readable with nothing behind it.
            emptyReads[index] += 1
            if events & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 || emptyReads[index] >= 16 {
                sourceFailed(index, errno: EIO)
            }
            return
        }
        emptyReads[index] = 0
        if failedReads[index] != 0 { sourceRecovered(index) }
        edgesRead.add(UInt64(n), ordering: .relaxed)
        for k in 0..<min(n, batch.count) {
            let edge = batch[k]
            judgeWhatCameBefore(edge.timestamp)
            let knownAt = decidedUpTo > edge.timestamp ? decidedUpTo : 0
            if let acted = debouncer.accept(edge) {
                act(on: acted, record: .edge(edge, acted: true, knownAt: knownAt))
            } else {
                push(.edge(edge, acted: false, knownAt: 0))  // chatter: nothing was decided on it
            }
        }
    }

    /// A read failed: out of the poll set (a broken descriptor polls readable at once, for
    /// ever), reported the first time, retried after a pause that doubles, then given up.
    private func sourceFailed(_ index: Int, errno code: Int32) {
        readErrors.add(1, ordering: .relaxed)
        let now = MonotonicClock.now()
        pollSet[index].fd = -1
        emptyReads[index] = 0
        failedReads[index] += 1
        lastErrno[index] = code
        if failedReads[index] == 1 {
            outOfService.bitwiseOr(sourceLines[index], ordering: .relaxed)
            reportSource(.failed, index, at: now)
        }
        if failedReads[index] > readRetryLimit {
            retryAt[index] = .max
            reportSource(.abandoned, index, at: now)
        } else {
            let shift = UInt64(min(failedReads[index] - 1, 20))
            retryAt[index] = now &+ (readRetryPause << shift)
        }
        nextRetry = .max
        for i in 0..<sourceCount { nextRetry = min(nextRetry, retryAt[i]) }
    }

    private func sourceRecovered(_ index: Int) {
        failedReads[index] = 0
        outOfService.bitwiseAnd(~sourceLines[index], ordering: .relaxed)
        reportSource(.recovered, index, at: MonotonicClock.now())
    }

    private func reportSource(_ kind: EdgeSourceFault.Kind, _ index: Int, at now: UInt64) {
        sourceFaults.push(
            EdgeSourceFault(
                kind: kind, descriptor: index, errno: lastErrno[index], lines: sourceLines[index], timestamp: now))
        pushedThisRound = true
    }

    /// Paused descriptors whose pause is over go back into the poll set.
    private func retrySources(now: UInt64) {
        nextRetry = .max
        for i in 0..<sourceCount {
            if retryAt[i] <= now {
                retryAt[i] = .max
                pollSet[i].fd = descriptors[i]
            }
            nextRetry = min(nextRetry, retryAt[i])
        }
    }

    @inline(__always)
    private func act(on edge: SensorEdge, record: StationRecord) {
        decide(handler.handle(edge), edgeTimestamp: edge.timestamp, record: record)
        // After the click: the level is for a person reading `status`, never before a reward.
        levels?.record(edge)
    }

    @inline(__always)
    /// `record`: the input's own record (its raw edge, or the level it settled at), pushed
    /// after the click's and before the handler's, so the log reads the input, then what it
    /// caused.
    private func decide(_ decision: HotPathDecision, edgeTimestamp: UInt64, record: StationRecord? = nil) {
        switch decision {
        case .none: break
        case .click: reward(edgeTimestamp: edgeTimestamp)
        case .cue(let cue): player?.cue(cue)
        }
        if let record { push(record) }
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
        // The feeder after the click and the buzzer: only scheduled here, its line is set from
        // the loop's deadlines (at once, in this same pass, when its delay is 0).
        if feeder != nil { _ = feederSchedule.clicked(clickEdge: edgeTimestamp, at: MonotonicClock.now()) }
    }

    /// A pulse still due when the loop stops (a session ended within its delay) is delivered,
    /// not dropped: the dog earned it with the last click, and a dispenser's trigger is never
    /// left held on. The stop waits for it, at most `delay_ms` + `pulse_ms` (10 s).
    private func finishFeeding() {
        guard feeder != nil, feederSchedule.nextDeadline != .max else { return }
        while feederSchedule.nextDeadline != .max {
            let next = feederSchedule.nextDeadline
            let now = MonotonicClock.now()
            if next > now {
                var pause = timespec(tv_sec: Int(next - now) / 1_000_000_000, tv_nsec: Int(next - now) % 1_000_000_000)
                _ = nanosleep(&pause, nil)
                continue
            }
            runFeeder(now: now)
        }
        if recordsReady >= 0 {
            var one: UInt64 = 1
            _ = write(recordsReady, &one, 8)
        }
    }

    private func runFeeder(now: UInt64) {
        guard let feeder else { return }
        switch feederSchedule.due(now: now) {
        case .none: break
        case .switchOn:
            let ok = feeder.set(active: true)
            if let failed = feederSchedule.switchedOn(at: MonotonicClock.now(), ok: ok) { push(.feeder(failed)) }
        case .switchOff:
            _ = feeder.set(active: false)
            push(.feeder(feederSchedule.switchedOff(at: MonotonicClock.now())))
        }
    }

    /// Everything due before an edge stamped `time`, in time order, before that edge: the
    /// debouncer's settled levels and the handler's timers. When the loop was late (a loaded
    /// machine, no realtime), an edge can be read together with a timer that fell before it:
    /// a nose's hold that completed at t must be complete when a press stamped t + 100 ms is
    /// judged (LivePageTests once saw the page's error press land before the hold it followed).
    @inline(__always)
    private func judgeWhatCameBefore(_ time: UInt64) {
        // Bounded: a handler that re-arms a timer at once is left to `runDeadlines`, as before.
        for _ in 0..<64 {
            // A timer of 0 means "at once" (an automated block's first start): at this edge's time.
            let timer = handler.nextDeadline == 0 ? time : handler.nextDeadline
            if timer <= time && timer <= debouncer.nextDeadline {
                pushedThisRound = true
                decide(deadline(timer), edgeTimestamp: timer)
            } else if let settled = debouncer.settleWhenDue(now: time) {
                actSettled(settled)
            } else if timer <= time {
                pushedThisRound = true
                decide(deadline(timer), edgeTimestamp: timer)
            } else {
                return
            }
        }
    }

    /// A settled level, after the timers due by its window's end (`judgeWhatCameBefore`); when
    /// the chatter that set it came late, timers past that end were decided before it, and its
    /// record says up to when (as an edge read late), so the re-scorer decides as the station did.
    @inline(__always)
    private func actSettled(_ settled: (edge: SensorEdge, due: UInt64)) {
        let knownAt = decidedUpTo > settled.due ? decidedUpTo : 0
        act(on: settled.edge, record: .settled(settled.edge, knownAt: knownAt))
    }

    /// The handler's timers, decided up to `now`.
    @inline(__always)
    private func deadline(_ now: UInt64) -> HotPathDecision {
        if now > decidedUpTo { decidedUpTo = now }
        return handler.deadline(now: now)
    }

    private func runDeadlines(now: UInt64) {
        if nextRetry <= now { retrySources(now: now) }
        // The settles and the timers due by now in their own order, as before an edge: a late
        // wake-up must decide as an early one would (a hold that completed before a window
        // closed is complete before the level it settled at), which `verify-scoring` checks.
        judgeWhatCameBefore(now)
        while let settled = debouncer.settleWhenDue(now: now) { actSettled(settled) }
        if handler.nextDeadline <= now {
            // The handler may have queued records of its own: wake the log's consumer too.
            pushedThisRound = true
            decide(deadline(now), edgeTimestamp: now)
        }
        if buzzerOffAt <= now {
            _ = buzzer?.set(active: false)
            buzzerOffAt = .max
        }
        if feederSchedule.nextDeadline <= now { runFeeder(now: now) }
        // Last: whether the last click's stream played it (ClickPlayer.checkStream).
        if let player, player.streamCheckDue <= now, player.checkStream(now: now) { pushedThisRound = true }
    }

    @inline(__always)
    private func push(_ record: StationRecord) {
        records.push(record)
        pushedThisRound = true
    }
}
