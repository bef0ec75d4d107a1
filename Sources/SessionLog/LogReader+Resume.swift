import Foundation
import GRDB
import TrainingEngine

/// What the log holds of a session cut short, for lineupd to resume it (docs/trainer.md,
/// "A session cut short"). Read on lineupd's own connection, which withholds nothing.
public struct ResumeFacts: Sendable, Hashable {
    /// Whether the session is in the log, and whether it has an end.
    public var exists: Bool
    public var ended: Bool
    /// The station's own trial rows (not corrections): how many, and the highest number (0: none).
    public var trialsLogged: Int
    public var lastTrial: Int
    /// The wall clock (ns) of the session's last event: when lineupd was last heard of in it.
    public var lastEventWallNs: Int64?
    /// The trial (or round) that was running when lineupd stopped (its events are in the log,
    /// its row is not): set by lineupd once it has looked (nil: none, or not looked yet).
    public var cutShort: Int? = nil
}

/// One event of the trial that was running when lineupd was cut short.
public struct InterruptedTrialEvent: Sendable, Hashable {
    public var kind: String
    public var station: Int?
    public var detail: String?
    public var time: LogTime
}

extension LogReader {
    public func resumeFacts(session: UUID) throws -> ResumeFacts {
        try read { db in
            let id = session.logText
            let exists = try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM session WHERE id = ?)", arguments: [id])
            let ended = try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM session_end WHERE session_id = ?)", arguments: [id])
            let row = try Row.fetchOne(
                db,
                sql:
                    "SELECT count(*) AS n, coalesce(max(number), 0) AS last FROM trial WHERE session_id = ? AND corrects IS NULL",
                arguments: [id])
            let last = try Int64.fetchOne(
                db, sql: "SELECT max(wall_ns) FROM event WHERE session_id = ?", arguments: [id])
            return ResumeFacts(
                exists: exists ?? false, ended: ended ?? false, trialsLogged: row?["n"] ?? 0,
                lastTrial: row?["last"] ?? 0,
                lastEventWallNs: last)
        }
    }

    /// The events of the trial (or round) that was running when lineupd stopped: those logged
    /// against `trialId` (edges, indications, presses), in the order written, after its start
    /// cue. Start cues name no trial: the session's last one is this trial's unless a logged
    /// trial started at it. A trial whose start cue is logged started, even with nothing else
    /// logged of it (the dog not at a station yet): it is cut short, never run again. Empty:
    /// it never started.
    public func interruptedTrialEvents(session: UUID, trialId: UUID, trainerLed: Bool) throws -> [InterruptedTrialEvent]
    {
        try read { db in
            func event(_ row: Row) -> InterruptedTrialEvent {
                InterruptedTrialEvent(
                    kind: row["kind"], station: row["station"], detail: row["detail"],
                    time: LogTime(monoNs: row["mono_ns"], wallNs: row["wall_ns"]))
            }
            let rows = try Row.fetchAll(
                db,
                sql: "SELECT seq, kind, station, detail, mono_ns, wall_ns FROM event WHERE trial_id = ? ORDER BY seq",
                arguments: [trialId.logText])
            var events = rows.map(event)
            let start = trainerLed ? "exercise-start" : "trial-start"
            guard
                let cue = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT seq, kind, station, detail, mono_ns, wall_ns FROM event
                        WHERE session_id = ? AND kind = 'cue' AND detail LIKE ? ORDER BY seq DESC LIMIT 1
                        """, arguments: [session.logText, "%\"\(start)\"%"])
            else { return events }
            let startsALoggedTrial =
                try Bool.fetchOne(
                    db,
                    sql: """
                        SELECT EXISTS (SELECT 1 FROM trial WHERE session_id = ? AND corrects IS NULL
                            AND started_mono_ns = ? AND started_wall_ns = ?)
                        """, arguments: [session.logText, cue["mono_ns"] as Int64, cue["wall_ns"] as Int64]) ?? false
            let cueSeq: Int64 = cue["seq"]
            let firstSeq: Int64? = rows.first?["seq"]
            if !startsALoggedTrial, firstSeq.map({ cueSeq < $0 }) ?? true { events.insert(event(cue), at: 0) }
            return events
        }
    }
}

/// A threshold trial as the log holds it, for lineupd to recompute its procedure on resume
/// (issue 38): the trial's own outcome (not a correction's: the procedure took the answer as
/// the trial ended) and the state its procedure logged then.
public struct LoggedProcedureTrial: Sendable, Hashable {
    public var number: Int
    public var outcome: TrialOutcome
    /// Nil when the trial has no procedure row.
    public var state: ProcedureTrialState?
    /// The dilution its target held (the sample's id, lower-case; nil on a catch trial).
    public var sampleId: String?
}

extension LogReader {
    /// A session's trials (the station's own rows, by number) with their procedure states.
    public func procedureTrials(session: UUID) throws -> [LoggedProcedureTrial] {
        try read { db in
            guard try db.tableExists("trial_procedure") else { return [] }
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT t.number, t.outcome, p.procedure, p.rung, p.catch_trial, p.direction, p.reversal,
                        p.reversals, p.next_rung, p.stopped, p.sample_id
                    FROM trial t LEFT JOIN trial_procedure p ON p.session_id = t.session_id AND p.trial_number = t.number
                    WHERE t.session_id = ? AND t.corrects IS NULL ORDER BY t.number
                    """, arguments: [session.logText]
            ).map { row in
                let number: Int = row["number"]
                let outcome: TrialOutcome = try row.word("outcome", of: "trial", row: "\(number)")
                var state: ProcedureTrialState?
                if let procedure: String = row["procedure"] {
                    let direction: String = row["direction"]
                    state = ProcedureTrialState(
                        procedure: procedure, rung: row["rung"], catchTrial: (row["catch_trial"] as Int) != 0,
                        direction: direction == "down" ? -1 : direction == "up" ? 1 : 0,
                        reversal: (row["reversal"] as Int) != 0, reversals: row["reversals"],
                        nextRung: row["next_rung"],
                        stopped: (row["stopped"] as Int) != 0)
                }
                return LoggedProcedureTrial(
                    number: number, outcome: outcome, state: state,
                    sampleId: (row["sample_id"] as String?)?.lowercased())
            }
        }
    }
}
