import Foundation
import Logging
import SessionLog
import StationControl

// The log's disk: its free space at a session's start, and a block that stops when it cannot
// record (docs/daemon.md, "When the log cannot be written"): the log's writer says when a write
// failed; the engine then starts no trial (the one running finishes and is counted), and every
// surface says why.
extension StationService {
    /// Why no trial starts while the log's writer fails, in the trainer's words.
    public static func logPausedWords(_ problem: String?) -> String {
        "the log cannot be written (\(problem ?? "a write failed")), so no trial starts that it could not record: "
            + "free space on the log's disk (lineupctl backup, then remove old copies)"
    }

    /// The engine's gate for a segment: open while the log takes writes and has the trials
    /// begun before (committed, or kept in the writer's spool and counted).
    func logGate(for feeder: LogFeeder) -> @Sendable (Int) -> LogGate {
        { [writer] begun in
            if writer.isFailing { return .unwritable }
            return feeder.committed.load(ordering: .acquiring) < begun ? .behind : .open
        }
    }

    /// Free space on the log's disk at a session's start: below `[log] min_free_mb` the
    /// session is refused before anything is written (a full disk loses trials); below
    /// `warn_free_mb` it starts with a warning, in its answer and the journal.
    func checkFreeSpace() throws(ControlRefusal) -> String? {
        // A log that cannot be written records nothing: asked directly, before anything starts.
        if let problem = logWriteProblem(forFileAt: options.databasePath) {
            Log.sessionLog.error("session refused: \(problem)")
            throw ControlRefusal(
                .failed, "\(problem): no trial could be recorded; a session starts once the log can be written")
        }
        let spec = options.board.log
        let directory = logDirectory(of: options.databasePath)
        guard let free = freeMegabytes(forFileAt: options.databasePath) else {
            let warning = "cannot tell the free space on \(directory) (the log's disk)"
            Log.station.warning("warning: \(warning)")
            return warning
        }
        if free < spec.minFreeMegabytes {
            let why =
                "only \(free) MB free on \(directory) (the log's disk); a session needs \(spec.minFreeMegabytes) MB "
                + "([log] min_free_mb): free some space first (lineupctl backup, then remove old copies)"
            Log.sessionLog.error("session refused: \(why)")
            throw ControlRefusal(.failed, why)
        }
        guard free < spec.warnFreeMegabytes else { return nil }
        let warning =
            "only \(free) MB free on \(directory) (the log's disk; [log] warn_free_mb is \(spec.warnFreeMegabytes) MB): "
            + "free some space before it fills"
        Log.station.warning("warning: \(warning)")
        return warning
    }

    /// Whether the log's last write failed (a simulated block pauses on it as the engine does).
    public var logFailing: Bool { writer.isFailing }

    /// Whether a trial (or a trainer-led round) of the session is running now.
    public var isTrialRunning: Bool {
        switching.lock()
        defer { switching.unlock() }
        guard let segment else { return false }
        return segment.feeder.searching.load(ordering: .acquiring) >= 0
            || segment.feeder.exercising.load(ordering: .acquiring) >= 0
    }

    /// `status`'s log fields: writable or not (a failed write, or the system asked directly), and
    /// while a write fails, why the block is paused.
    func describeLogPause(into status: inout StationStatus, lastError: String?) {
        let failing = writer.isFailing
        status.logUnwritable = logWriteProblem(forFileAt: options.databasePath)
        status.logWritable = !failing && status.logUnwritable == nil
        guard failing else { return }
        status.logPaused = Self.logPausedWords(lastError)
    }
}

extension LogFeeder {
    /// Says once, in the journal and to watchers, that the log stopped taking writes, and once
    /// that it takes them again. Called at each pass of the feeder's thread (at least once a
    /// second).
    func watchLogHealth() {
        let failing = writer.isFailing
        guard failing != logFailingSaid else { return }
        logFailingSaid = failing
        if failing {
            let why = writer.status.lastError ?? "a write failed"
            Log.sessionLog.error(
                Logger.Message(stringLiteral: "block paused: \(StationService.logPausedWords(why))"))
            settings.watch?(.logPaused(why: why))
        } else {
            Log.sessionLog.notice("the log takes writes again: the block can go on")
            settings.watch?(.logWritable)
        }
    }
}

/// Whether the log lets the next trial start: it takes writes, and the trial before is
/// committed (written, or kept in the writer's spool and counted), so a full disk costs at
/// most the one trial running when it filled.
enum LogGate: Sendable {
    case open
    /// The trial before has not come back from the writer yet.
    case behind
    /// The writer's last write failed: nothing new may start until one succeeds.
    case unwritable
}
