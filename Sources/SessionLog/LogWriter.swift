import Figures
import Foundation
import GRDB
import GRDBSQLite
import Synchronization
import TrainingEngine

/// The one writer of the session log: a thread that drains a bounded queue of events
/// and writes them in batched transactions.
///
/// The durability contract:
/// - ``commitTrial(_:)`` returns only once the trial row (and every event submitted
///   before it) is committed, so a trial's outcome is durable before the next trial
///   starts;
/// - an event accepted by ``submit(_:)`` is committed within `batchInterval` plus one
///   transaction (25 ms plus the commit by default, to keep inside the 100 ms promised);
/// - a `kill -9` at any moment leaves a database that passes `PRAGMA integrity_check`
///   (SQLite's WAL guarantees it) and holds every trial whose commit had returned.
///
/// ``submit(_:)`` never waits for SQLite: when the queue is full the event is dropped,
/// counted in ``status``, and written as a `fault` event once room returns.
///
/// A failed write (a full disk, an I/O error) loses nothing at first: the batch's events
/// and records move to a bounded memory spool and are retried every `retryInterval`, so
/// space freed in time loses nothing. Only when the spool is full are its oldest events
/// dropped, and only what is still spooled when the writer closes is lost; both are
/// counted exactly (``LogWriterStatus/lost``, ``LogWriterStatus/lostRecords``) and the
/// dropped events are written as a `fault` event once the log is writable again.
///
/// So every record handed to ``commit(_:)`` ends as exactly one of: in the log, or counted
/// in ``LogWriterStatus/lostRecords`` (trials also in ``LogWriterStatus/lostTrials``): refused
/// by the schema, handed to a closed writer, or still spooled at the close.
public final class LogWriter: @unchecked Sendable {
    // Everything below `condition` is guarded by it, except the fields marked
    // "writer thread only".
    private let condition = NSCondition()
    private var pending: [LoggedEvent]
    private var requests: [CommitRequest] = []
    private var closing = false
    private var submitted = 0
    private var written = 0
    private var overflow = 0
    private var overflowUnreported = 0
    private var lost = 0
    private var batches = 0
    private var batchMillis: [Double] = []
    private var lagMillis: [Double] = []
    private var maxLag: Double = 0
    private var lastError: String?
    private var oldestPending: ContinuousClock.Instant?

    /// Records (trials, sessions...) whose write failed and is being retried.
    private var spooledNow = 0
    private var lostRecords = 0
    private var lostTrials = 0
    private var failedWrites = 0
    /// Set by the writer thread when a write fails, cleared when one succeeds: read without a
    /// lock (the hot thread asks it before starting a trial; see ``isFailing``).
    private let failing = Atomic<Bool>(false)

    private var spare: [LoggedEvent]  // writer thread only
    // The spool: writer thread only.
    private var spoolEvents: [LoggedEvent] = []
    private var spoolRecords: [[any AppendableRecord]] = []
    private let spoolCapacity: Int
    private let retryInterval: Double
    private let pool: DatabasePool
    private let path: String
    private let capacity: Int
    private let batchInterval: Duration
    private let batchSize: Int
    private let stopped = DispatchSemaphore(value: 0)
    /// Nil if its connection could not open: SQLite then checkpoints inside commits, as
    /// by default (slower worst batches, nothing lost).
    private let checkpointer: Checkpointer?
    private let pageSize: Int

    init(
        pool: DatabasePool, path: String, capacity: Int, batchInterval: Duration, batchSize: Int,
        checkpointFrames: Int = 1_000, spoolCapacity: Int = 200_000, retryInterval: Duration = .milliseconds(500)
    ) {
        self.spoolCapacity = max(1, spoolCapacity)
        self.retryInterval =
            Double(retryInterval.components.seconds) + Double(retryInterval.components.attoseconds) * 1e-18
        self.pool = pool
        self.path = path
        self.capacity = max(1, capacity)
        self.batchInterval = batchInterval
        self.batchSize = max(1, batchSize)
        // Both buffers are allocated once: submitting appends, the writer swaps them.
        pending = []
        pending.reserveCapacity(self.capacity)
        spare = []
        spare.reserveCapacity(self.capacity)
        // The timings keep at most 4,096 each: at their full size from the start, rather than
        // doubling into it over a station's first thousand sessions.
        batchMillis.reserveCapacity(4_096)
        lagMillis.reserveCapacity(4_096)
        pageSize = (try? pool.read { db in try Int.fetchOne(db, sql: "PRAGMA page_size") }) ?? 4096
        checkpointer = try? Checkpointer(
            path: path, interval: .milliseconds(250), checkpointFrames: checkpointFrames)
        if let checkpointer {
            // The writer's connection stops checkpointing in its commits; see Checkpointer.
            pool.writeWithoutTransaction { db in checkpointer.watch(db) }
        }
        let thread = Thread { [self] in self.run() }
        thread.name = "lineup-log-writer"
        thread.start()
    }

    /// Queues an event. Returns false, and counts an overflow, when the queue is full
    /// or the writer is closed; never waits for the database.
    @discardableResult
    public func submit(_ event: LoggedEvent) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !closing, pending.count < capacity else {
            overflow += 1
            overflowUnreported += 1
            return false
        }
        let wasEmpty = pending.isEmpty
        if wasEmpty { oldestPending = .now }
        pending.append(event)
        submitted += 1
        // Wake the writer to start the batch's clock, and again when the batch is full.
        if wasEmpty || pending.count == batchSize { condition.signal() }
        return true
    }

    /// Commits a trial, with every event submitted before it, and returns once it is
    /// on disk. Call it before the next trial starts.
    public func commitTrial(_ trial: TrialRecord) throws {
        try commit([trial])
    }

    /// Commits records (sessions, notes, milestones...) after every event submitted
    /// before them; returns once they are on disk. A record that violates the schema
    /// is refused alone: the events and other records still commit.
    public func commit(_ records: [any AppendableRecord]) throws {
        let request = CommitRequest(records: records)
        condition.lock()
        guard !closing else {
            // Not in the log, and never will be: counted, as every record that is not.
            countLost(records)
            condition.unlock()
            throw SessionLogError.writerClosed
        }
        requests.append(request)
        condition.signal()
        condition.unlock()
        request.done.wait()
        if let error = request.error { throw SessionLogError.from(error, path: path) }
    }

    /// Returns once every event submitted so far is on disk; throws
    /// ``SessionLogError/notYetOnDisk(reason:)`` when they wait in the spool.
    public func flush() throws {
        try commit([])
    }

    /// Writes what is queued and stops the writer thread. Later submits are refused.
    public func close() {
        condition.lock()
        let alreadyClosing = closing
        closing = true
        condition.signal()
        condition.unlock()
        guard !alreadyClosing else { return }
        stopped.wait()
        if let checkpointer {
            checkpointer.stop()
            // Direct writes on this log after the writer checkpoint as SQLite does by default.
            try? pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_autocheckpoint = 1000") }
        }
    }

    /// True from a failed write (a full disk, a read-only card, an I/O error) until a write
    /// succeeds again: what is spooled waits in memory, and the station starts no trial it could
    /// not record. Lock-free: the hot thread may ask it.
    public var isFailing: Bool { failing.load(ordering: .acquiring) }

    /// Counters for the station's status.
    public var status: LogWriterStatus {
        condition.lock()
        defer { condition.unlock() }
        let sorted = batchMillis.sorted()
        let lags = lagMillis.sorted()
        let checkpoints = checkpointer?.counts ?? (checkpoints: 0, walFramesMax: 0)
        return LogWriterStatus(
            submitted: submitted, written: written, queued: pending.count, overflow: overflow,
            lost: lost, batches: batches, batchMillisP50: Self.percentile(sorted, 0.5),
            batchMillisP99: Self.percentile(sorted, 0.99), batchMillisMax: sorted.last,
            durableLagMillisP99: Self.percentile(lags, 0.99),
            durableLagMillisMax: lags.isEmpty ? nil : maxLag, checkpoints: checkpoints.checkpoints,
            walMegabytesMax: Double(checkpoints.walFramesMax) * Double(pageSize) / 1_048_576, lastError: lastError,
            spooled: spooledNow, lostRecords: lostRecords, lostTrials: lostTrials, failedWrites: failedWrites)
    }

    /// Puts known batch and durability times behind `status`, under the lock as the writer
    /// thread keeps them: for the test that the status's percentiles are the engine's.
    func replaceTimings(batchMillis: [Double], lagMillis: [Double]) {
        condition.lock()
        defer { condition.unlock() }
        self.batchMillis = batchMillis
        self.lagMillis = lagMillis
    }

    /// The status's p50 and p99: the engine's one quantile (type 7), as every figure with a
    /// percentile in it; nil when nothing was measured yet.
    static func percentile(_ sorted: [Double], _ p: Double) -> Double? {
        sorted.isEmpty ? nil : quantile(sorted, p)
    }

    // MARK: The writer thread

    private func run() {
        while true {
            condition.lock()
            while pending.isEmpty && requests.isEmpty && overflowUnreported == 0 && !closing {
                if spoolEvents.isEmpty && spoolRecords.isEmpty {
                    condition.wait()
                } else if !condition.wait(until: Date(timeIntervalSinceNow: retryInterval)) {
                    break  // time to retry the spool
                }
            }
            // Let a batch gather for up to batchInterval, unless someone waits on it.
            while requests.isEmpty && !closing && pending.count < batchSize, let oldest = oldestPending {
                let deadline = oldest + batchInterval
                let left = ContinuousClock.now.duration(to: deadline)
                if left <= .zero { break }
                let seconds = Double(left.components.seconds) + Double(left.components.attoseconds) * 1e-18
                _ = condition.wait(until: Date(timeIntervalSinceNow: seconds))
            }
            swap(&pending, &spare)
            let batchOldest = oldestPending
            oldestPending = nil
            let batchRequests = requests
            requests.removeAll()
            let dropped = overflowUnreported
            overflowUnreported = 0
            let isLast = closing
            condition.unlock()

            writeBatch(events: spare, requests: batchRequests, dropped: dropped, oldest: batchOldest)
            spare.removeAll(keepingCapacity: true)
            for request in batchRequests { request.done.signal() }
            if isLast {
                condition.lock()
                let drained = pending.isEmpty && requests.isEmpty
                if drained {
                    // Closing with the log still failing: what is spooled is lost, and counted.
                    lost += spoolEvents.count
                    for records in spoolRecords { countLost(records) }
                    spooledNow = 0
                }
                condition.unlock()
                if drained { break }
            }
        }
        stopped.signal()
    }

    /// Counts records that will never be in the log. Call with `condition` held.
    private func countLost(_ records: [any AppendableRecord]) {
        lostRecords += records.count
        lostTrials += records.filter { $0 is TrialRecord }.count
    }

    /// A record the log's schema refuses (a constraint, a value it cannot hold) is refused at
    /// every retry: it is dropped alone, and counted lost. Anything else is the disk's (full,
    /// an I/O error) and fails the whole batch, to be retried: SQLite rolls the whole
    /// transaction back on SQLITE_FULL, so a record caught alone there would have vanished with
    /// it, neither written nor counted.
    static func isRefusal(_ error: any Error, in db: Database) -> Bool {
        guard sqlite3_get_autocommit(db.sqliteConnection) == 0, let error = error as? DatabaseError else {
            return false
        }
        switch error.resultCode {
        case .SQLITE_CONSTRAINT, .SQLITE_MISMATCH, .SQLITE_TOOBIG: return true
        default: return false
        }
    }

    private func writeBatch(
        events: [LoggedEvent], requests: [CommitRequest], dropped: Int, oldest: ContinuousClock.Instant?
    ) {
        if events.isEmpty && requests.allSatisfy({ $0.records.isEmpty }) && dropped == 0 && spoolEvents.isEmpty
            && spoolRecords.isEmpty
        {
            return
        }
        let start = ContinuousClock.now
        let retried = spoolEvents.count
        // What the schema refused in this attempt: spooled records (by index) and requests.
        var refusedSpool: [Int] = []
        var refused: [CommitRequest] = []
        do {
            try pool.write { db in
                refusedSpool.removeAll()
                refused.removeAll()
                // What a failed write left, first, in the order it came.
                for event in spoolEvents { try event.append(to: db) }
                for (index, records) in spoolRecords.enumerated() {
                    do {
                        try db.inSavepoint {
                            for record in records { try record.append(to: db) }
                            return .commit
                        }
                    } catch let error where Self.isRefusal(error, in: db) {
                        refusedSpool.append(index)
                    }
                }
                for event in events { try event.append(to: db) }
                if dropped > 0 {
                    // The gap is part of the record: a researcher must see it.
                    try LoggedEvent(
                        kind: .fault,
                        detail: #"{"fault":"log-events-dropped","dropped_events":\#(dropped)}"#
                    ).append(to: db)
                }
                for request in requests where !request.records.isEmpty {
                    do {
                        try db.inSavepoint {
                            for record in request.records { try record.append(to: db) }
                            return .commit
                        }
                    } catch let error where Self.isRefusal(error, in: db) {
                        request.error = error
                        refused.append(request)
                    }
                }
            }
            let elapsed = start.duration(to: .now)
            let millis =
                Double(elapsed.components.attoseconds) * 1e-15 + Double(elapsed.components.seconds) * 1e3
            let refusedRecords = refusedSpool.map { spoolRecords[$0] } + refused.map(\.records)
            spoolEvents.removeAll()
            spoolRecords.removeAll()
            failing.store(false, ordering: .releasing)
            condition.lock()
            written += events.count + retried
            for records in refusedRecords { countLost(records) }
            spooledNow = 0
            batches += 1
            if batchMillis.count >= 4_096 { batchMillis.removeFirst(2_048) }
            batchMillis.append(millis)
            if let oldest {
                // How long the oldest event of the batch waited to be durable.
                let lag = oldest.duration(to: .now)
                let lagMs = Double(lag.components.attoseconds) * 1e-15 + Double(lag.components.seconds) * 1e3
                if lagMillis.count >= 4_096 { lagMillis.removeFirst(2_048) }
                lagMillis.append(lagMs)
                maxLag = max(maxLag, lagMs)
            }
            condition.unlock()
        } catch {
            // Nothing is lost yet: the batch waits in the spool and is retried. Only what the
            // schema refused leaves it (it would be refused again), counted lost.
            let reason = SessionLogError.from(error, path: path).description
            var refusedRecords = refused.map(\.records)
            for index in refusedSpool.reversed() { refusedRecords.append(spoolRecords.remove(at: index)) }
            spoolEvents.append(contentsOf: events)
            var droppedNow = 0
            if spoolEvents.count > spoolCapacity {
                droppedNow = spoolEvents.count - spoolCapacity
                spoolEvents.removeFirst(droppedNow)
            }
            for request in requests where request.error == nil {
                if !request.records.isEmpty { spoolRecords.append(request.records) }
                // A flush too: the events before it are not on disk.
                request.error = SessionLogError.notYetOnDisk(reason: reason)
            }
            // Before the requests waiting on this batch are answered: a trial whose commit
            // failed finds the station already refusing the next start.
            failing.store(true, ordering: .releasing)
            condition.lock()
            failedWrites += 1
            lost += droppedNow
            for records in refusedRecords { countLost(records) }
            // Report what was dropped (now, and this batch's own fault row) once a write succeeds.
            overflowUnreported += droppedNow + dropped
            spooledNow = spoolEvents.count + spoolRecords.reduce(0) { $0 + $1.count }
            lastError = reason
            condition.unlock()
        }
    }
}

/// The writer's counters, for `lineupctl status` and benchmarks.
public struct LogWriterStatus: Sendable, Hashable, Codable {
    /// Events accepted into the queue.
    public var submitted: Int
    /// Events committed to the database.
    public var written: Int
    /// Events waiting in the queue now.
    public var queued: Int
    /// Events refused because the queue was full (or the writer closed).
    public var overflow: Int
    /// Events accepted but lost for good: dropped from a full spool, or still spooled when
    /// the writer closed (the disk stayed full).
    public var lost: Int
    /// Transactions committed.
    public var batches: Int
    public var batchMillisP50: Double?
    public var batchMillisP99: Double?
    public var batchMillisMax: Double?
    /// From an event's batch starting to gather to its commit (recent batches): the
    /// "durable within 100 ms" figure.
    public var durableLagMillisP99: Double?
    /// The same, worst since the writer started.
    public var durableLagMillisMax: Double?
    /// WAL checkpoints done beside the writer (0 when SQLite checkpoints in commits).
    public var checkpoints: Int
    /// The longest the write-ahead log was seen, in MiB (bounded near 16 MiB).
    public var walMegabytesMax: Double
    public var lastError: String?
    /// Events and records waiting in memory after a failed write, retried every half second.
    public var spooled: Int = 0
    /// Records (trials, sessions' ends, notes) handed to the writer and never written: still
    /// spooled when the writer closed, refused by the log's schema, or handed to a closed
    /// writer. Each record handed is in the log or counted here, never both.
    public var lostRecords: Int = 0
    /// Of those, trials.
    public var lostTrials: Int = 0
    /// Transactions that failed (and were kept for retry).
    public var failedWrites: Int = 0
}

/// A synchronous commit handed to the writer thread; `error` is written by the writer
/// thread before `done` is signalled and read by the caller after.
private final class CommitRequest: @unchecked Sendable {
    let records: [any AppendableRecord]
    var error: (any Error)?
    let done = DispatchSemaphore(value: 0)

    init(records: [any AppendableRecord]) { self.records = records }
}
