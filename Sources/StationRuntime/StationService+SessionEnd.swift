import Foundation
import Glibc
import Logging
import SessionLog
import StationConfig
import StationControl
import StationIO
import Synchronization
import TrainingEngine
import VirtualDog

// The end of a session: milestones earned, how it ended, the trainer's suggestions, and a
// simulated block's summary.
extension StationService {
    /// Holds the dog's trials on the session's step against its criterion and logs the
    /// milestones met (step passed, phase graduated); says so in the journal and to watchers.
    func recordGraduation(_ session: Current) {
        let parts = session.step.split(separator: "/").map(String.init)
        guard parts.count == 2, let program = session.program else { return }
        do {
            try writer.flush()
            let earned = try log.recordGraduation(
                dogId: session.dogId, sessionId: session.sessionId, program: program, phase: parts[0],
                step: parts[1])
            for milestone in earned {
                let what = milestone.step.map { "passed step \(parts[0])/\($0)" } ?? "graduated phase \(parts[0])"
                print("lineupd: \(session.dog) \(what): \(milestone.criterion ?? "")")
                broadcast(
                    .milestone(
                        dog: session.dog, phase: parts[0], step: milestone.step ?? "",
                        criterion: milestone.criterion ?? ""))
            }
        } catch {
            Log.sessionLog.error("cannot record the dog's progress: \(error)")
        }
    }

    /// How the session ended, through the log's writer like its trials: it lands after them,
    /// waits in the writer's spool with them on a full disk, and if it is never written it is
    /// counted lost with them (`LogWriterStatus.lostRecords`). Written beside the writer, it
    /// could land before trials still spooled, or fail and be counted nowhere.
    func appendEnd(_ session: UUID, _ how: SessionEnd.How, _ detail: String) {
        do {
            try writer.commit([SessionEnd(sessionId: session, how: how, detail: detail)])
        } catch SessionLogError.notYetOnDisk(let reason) {
            Log.sessionLog.warning(
                "how the session ended is not on disk yet (\(reason)); the log keeps it in memory and retries")
        } catch {
            Log.sessionLog.error("cannot record how the session ended: \(error)")
        }
    }

    /// The trainer's note at the session's end, through the writer for the same reasons.
    func appendNote(_ session: UUID, _ text: String, kind: SessionNote.Kind) {
        do {
            try writer.commit([SessionNote(sessionId: session, kind: kind, text: text)])
        } catch SessionLogError.notYetOnDisk(let reason) {
            Log.sessionLog.warning(
                "the session's note is not on disk yet (\(reason)); the log keeps it in memory and retries")
        } catch {
            Log.sessionLog.error("cannot record the session's note: \(error)")
        }
    }

    /// What the block's summary reads, from the segment that ran it.
    public struct BlockSummary {
        public let feeder: LogFeeder
        public let chatter: UInt64
        public let ringOverflows: UInt64
    }

    /// Ends the block: finished, or stopped (`stopped` says why; its running trial is logged
    /// aborted). Returns what the summary needs; the log stays open until `shutdown`.
    public func endBlock(stopped: String?) -> BlockSummary? {
        dogStop.store(true, ordering: .releasing)
        while let thread = dogThread, !thread.isFinished { usleep(1000) }
        dogThread = nil
        switching.lock()
        defer { switching.unlock() }
        guard let ending = current, let segment else { return nil }
        stopSegment(aborting: stopped != nil)
        appendEnd(ending.sessionId, stopped == nil ? .ended : .stopped, stopped ?? "the simulated block finished")
        ResumableSession.remove(forLog: options.databasePath)
        current = nil
        return BlockSummary(
            feeder: segment.feeder, chatter: segment.loop.chatterCount,
            ringOverflows: ring.overflowCount)
    }

    /// The session log's writer now (after `shutdown`, what was still spooled counts as lost).
    public var logStatus: LogWriterStatus { writer.status }

    /// Once the writer is closed, what the log never got, in one line (the journal, or the
    /// simulated block's stderr): with the log's rows it makes up every trial announced.
    func reportLogLosses() {
        let s = writer.status
        guard s.lost > 0 || s.lostRecords > 0 else { return }
        Log.sessionLog.error(
            Logger.Message(
                stringLiteral:
                    "the session log lost \(s.lost) event(s), \(s.lostTrials) trial(s) and \(s.lostRecords - s.lostTrials) "
                    + "other record(s) (\(s.lastError ?? "write failed")): free space on the log's disk"))
    }
}
