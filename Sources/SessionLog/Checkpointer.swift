import Foundation
import GRDB
import GRDBSQLite

/// Moves the write-ahead log into the database file on its own thread and connection.
///
/// SQLite's default is to checkpoint inside whichever commit crosses 1000 WAL pages: that
/// commit then copies megabytes and syncs the database file, and at 20,000 events/s it
/// made the writer's worst batch ~110 ms (`lineup-bench log`), over the 100 ms
/// promised for raw events. A PASSIVE checkpoint on another connection never takes the
/// write lock, so the writer's commits go on beside it.
///
/// The WAL starts again from its beginning only when the writer begins a transaction with
/// every frame already copied. Under a sustained stream one passive checkpoint per tick never
/// catches the last frames, and the WAL grew without bound (158 MB after 20 s at 20,000
/// events/s). Past `walLimitFrames` the checkpointer therefore repeats the passive checkpoint
/// until it has caught up between two of the writer's commits (each repeat has only ~25 ms of
/// frames to copy); the writer's next commit then restarts the WAL and `journal_size_limit`
/// trims the file. A TRUNCATE checkpoint would do it in one call, but it takes the write
/// lock: measured, it added up to 60 ms to the writer's worst batch.
///
/// It checkpoints only once the WAL holds `checkpointFrames` frames (SQLite's own default
/// threshold, 1000), as the writer's connection reports after each commit (`watch`). Each
/// commit appends whole pages to the WAL, and a checkpoint writes each page it copies again:
/// checkpointing every tick wrote the same few pages (the last leaf of the event table and of
/// each index) to the database file after nearly every commit, a third of all the bytes a
/// session wrote to the card (`lineup-bench storage`). Waiting lets one copy serve many
/// commits. Durability is the WAL's, synced at each commit either way.
final class Checkpointer: @unchecked Sendable {
    private let queue: DatabaseQueue
    private let interval: Duration
    /// 4096 frames of 4 KiB pages: 16 MiB of WAL.
    private let walLimitFrames = 4_096
    private let checkpointFrames: Int
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var stopping = false
    /// Frames in the WAL after the writer's last commit (0 once it started over).
    private var walFrames = 0
    private var checkpoints = 0
    private var walFramesMax = 0
    private var lastError: String?
    private let stopped = DispatchSemaphore(value: 0)

    init(path: String, interval: Duration, checkpointFrames: Int = 1_000) throws {
        self.checkpointFrames = max(1, checkpointFrames)
        var config = Configuration()
        config.label = "lineup.log.checkpointer"
        // No busy handler: a checkpoint that cannot have its locks now gives up at once
        // (the data is safe in the WAL) rather than hold the writer up while it waits.
        config.busyMode = .immediateError
        config.prepareDatabase { db in
            // The same durability as the writer: each checkpoint syncs what it copies.
            try db.execute(sql: "PRAGMA synchronous = FULL")
            // It copies frames and keeps nothing: a small cache keeps the daemon small.
            try db.execute(sql: "PRAGMA cache_size = -256")
            var persist: CInt = 1
            _ = sqlite3_file_control(db.sqliteConnection, "main", SQLITE_FCNTL_PERSIST_WAL, &persist)
        }
        queue = try DatabaseQueue(path: path, configuration: config)
        self.interval = interval
        let thread = Thread { [self] in self.run() }
        thread.name = "lineup-log-checkpoint"
        thread.start()
    }

    /// Hooks the writer's connection: after each commit SQLite tells how many frames the WAL
    /// holds, and the connection no longer checkpoints in its commits (the hook replaces
    /// SQLite's automatic one, `PRAGMA wal_autocheckpoint` then reads 0). The checkpointer
    /// outlives the hook: its thread holds it until `stop`, and the writer sets
    /// `wal_autocheckpoint` again (which replaces this hook) after stopping it.
    func watch(_ db: Database) {
        sqlite3_wal_hook(
            db.sqliteConnection,
            { context, _, _, frames in
                guard let context else { return SQLITE_OK }
                Unmanaged<Checkpointer>.fromOpaque(context).takeUnretainedValue().committed(frames: Int(frames))
                return SQLITE_OK
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    private func committed(frames: Int) {
        condition.lock()
        walFrames = frames
        walFramesMax = max(walFramesMax, frames)
        condition.unlock()
    }

    /// Checkpoints done, and the longest the WAL was seen (in frames, one page each).
    var counts: (checkpoints: Int, walFramesMax: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (checkpoints, walFramesMax)
    }

    /// Stops the thread after one last checkpoint.
    func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
        stopped.wait()
    }

    private func run() {
        let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) * 1e-18
        while true {
            condition.lock()
            if !stopping { _ = condition.wait(until: Date(timeIntervalSinceNow: seconds)) }
            let work = walFrames >= checkpointFrames || (stopping && walFrames > 0)
            let last = stopping
            condition.unlock()
            if work {
                do {
                    try queue.writeWithoutTransaction { db in
                        var wal = try db.checkpoint(.passive)
                        var tries = 0
                        while wal.walFrameCount > walLimitFrames, wal.checkpointedFrameCount < wal.walFrameCount,
                            tries < 50
                        {
                            usleep(1_000)
                            wal = try db.checkpoint(.passive)
                            tries += 1
                        }
                    }
                    condition.lock()
                    checkpoints += 1
                    // Copied: not worth another until the writer reports a long WAL again.
                    walFrames = 0
                    condition.unlock()
                } catch {
                    // A busy or failed checkpoint only leaves the WAL longer: the next tick
                    // tries again, and the data is safe in the WAL meanwhile.
                    condition.lock()
                    lastError = String(describing: error)
                    condition.unlock()
                }
            }
            if last { break }
        }
        try? queue.close()
        stopped.signal()
    }
}
