import Foundation
import GRDB
import TrainingEngine

// Graduation and progress, as the station logs them. When a session ends, the dog's trials
// and trainer-led rounds on the program (all its sessions of that program run in each step's
// own mode, in order, after corrections) are read into `ProgramProgress`, the one definition
// of progress. The first time the session's step is passed (its criterion met, or without one
// every exercise done correctly as often as required, in a row) a milestone is written, and once every step of
// the phase has one, the phase's own. `lineupctl progress` reads the same way.

extension ProgramProgress {
    /// The dog's progress on `program` from the log: its scored trials and rounds by step and
    /// exercise, and the steps its milestones (earned in sessions of this program) say were
    /// passed. A step fixes its mode (trainer-led, automated or double-blind): a session run
    /// on it in another mode is left out, so trainer-led rounds never count toward a step the
    /// program tests double-blind.
    static func read(_ db: Database, dogId: String, program: Program) throws -> ProgramProgress {
        var progress = ProgramProgress(program: program)
        // A cursor, not an array: every session's end reads the dog's whole history on the
        // program, and an array of it grew the daemon's peak (and with its memory locked, its
        // size) with each session (`lineup-bench sessions`).
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT s.phase, s.step, s.exercise, s.mode, t.outcome FROM trial_current t
                JOIN session s ON s.id = t.session_id JOIN program p ON p.id = s.program_id
                WHERE s.dog_id = ? AND p.name = ? ORDER BY t.wall_ns, t.number
                """, arguments: [dogId, program.name])
        while let row = try rows.next() {
            guard let phase: String = row["phase"], let step: String = row["step"],
                let outcome = TrialOutcome(rawValue: row["outcome"]),
                program.step(phase: phase, step: step)?.mode.rawValue == row["mode"]
            else { continue }
            progress.record(outcome, phase: phase, step: step, exercise: row["exercise"])
        }
        for row in try Row.fetchAll(
            db, sql: "SELECT m.phase, m.step FROM \(milestonesOfProgram) AND m.step IS NOT NULL",
            arguments: [dogId, program.name])
        {
            progress.milestone(phase: row["phase"], step: row["step"])
        }
        return progress
    }

    /// The dog's (`?1`) milestones earned in sessions of the program named `?2`: milestones
    /// carry no program of their own, their session does. (`FROM` onwards, alias `m`.)
    static let milestonesOfProgram = """
        milestone m JOIN session s ON s.id = m.session_id JOIN program p ON p.id = s.program_id
        WHERE m.dog_id = ?1 AND p.name = ?2
        """

    /// Scored trials the dog ran on each step (`phase/step`) of `program` in another mode than
    /// the step's: in the log, and left out of the step's progress.
    static func otherModeTrials(_ db: Database, dogId: String, program: Program) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in try Row.fetchAll(
            db,
            sql: """
                SELECT s.phase, s.step, s.mode, count(*) AS n FROM trial_current t
                JOIN session s ON s.id = t.session_id JOIN program p ON p.id = s.program_id
                WHERE s.dog_id = ? AND p.name = ? AND t.outcome <> 'aborted' GROUP BY s.phase, s.step, s.mode
                """, arguments: [dogId, program.name])
        {
            guard let phase: String = row["phase"], let step: String = row["step"],
                let defined = program.step(phase: phase, step: step), defined.mode.rawValue != row["mode"]
            else { continue }
            counts["\(phase)/\(step)", default: 0] += row["n"]
        }
        return counts
    }
}

extension SessionLog {
    /// The milestones this session's end earns (already written), oldest first; none when the
    /// step is not passed yet, or was passed before.
    public func recordGraduation(dogId: UUID, sessionId: UUID, program: Program, phase: String, step: String) throws
        -> [MilestoneRecord]
    {
        guard let phaseDef = program.phases.first(where: { $0.id == phase }),
            let stepDef = phaseDef.steps.first(where: { $0.id == step })
        else { return [] }
        var written: [MilestoneRecord] = []
        do {
            try pool.write { db in
                let passed = try Set(
                    String.fetchAll(
                        db,
                        sql:
                            "SELECT m.step FROM \(ProgramProgress.milestonesOfProgram) AND m.phase = ?3 AND m.step IS NOT NULL",
                        arguments: [dogId.logText, program.name, phase]))
                guard !passed.contains(step) else { return }
                let progress = try ProgramProgress.read(db, dogId: dogId.logText, program: program)
                // The step's own verdict on the trials: the milestone names its criterion and the
                // counts that met it (never a passed step its trials do not meet).
                let verdict = progress.verdict(phase: phaseDef, step: stepDef)
                guard verdict.verdict.met else { return }
                let rule = "\(verdict.rule): \(verdict.verdict.evidence)"
                let stepMilestone = MilestoneRecord(
                    dogId: dogId, sessionId: sessionId, phase: phase, step: step, criterion: rule)
                try stepMilestone.append(to: db)
                written.append(stepMilestone)
                let phaseDone = try Int.fetchOne(
                    db,
                    sql:
                        "SELECT count(*) FROM \(ProgramProgress.milestonesOfProgram) AND m.phase = ?3 AND m.step IS NULL",
                    arguments: [dogId.logText, program.name, phase])
                let steps = phaseDef.steps.map(\.id)
                if phaseDone == 0, Set(steps).isSubset(of: passed.union([step])) {
                    let phaseMilestone = MilestoneRecord(
                        dogId: dogId, sessionId: sessionId, phase: phase,
                        criterion: "every step of the phase passed (\(steps.count))")
                    try phaseMilestone.append(to: db)
                    written.append(phaseMilestone)
                }
            }
        } catch {
            throw SessionLogError.from(error, path: path)
        }
        return written
    }
}
