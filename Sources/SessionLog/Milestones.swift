import Foundation
import GRDB
import TrainingEngine

// Graduation and progress, as the station logs them. When a session ends, the dog's trials
// and trainer-led rounds on the program (all its sessions of that program, in order, after
// corrections) are read into `ProgramProgress`, the one definition of progress. The first
// time the session's step is passed (its criterion met, or without one every exercise done
// as often as required) a milestone is written, and once every step of the phase has one,
// the phase's own. `lineupctl progress` reads the same way.

extension ProgramProgress {
    /// The dog's progress on `program` from the log: its scored trials and rounds by step and
    /// exercise, and the steps its milestones say were passed.
    static func read(_ db: Database, dogId: String, program: Program) throws -> ProgramProgress {
        var progress = ProgramProgress(program: program)
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT s.phase, s.step, s.exercise, t.outcome FROM trial_current t
                JOIN session s ON s.id = t.session_id JOIN program p ON p.id = s.program_id
                WHERE s.dog_id = ? AND p.name = ? ORDER BY t.wall_ns, t.number
                """, arguments: [dogId, program.name])
        for row in rows {
            guard let phase: String = row["phase"], let step: String = row["step"],
                let outcome = TrialOutcome(rawValue: row["outcome"])
            else { continue }
            progress.record(outcome, phase: phase, step: step, exercise: row["exercise"])
        }
        for row in try Row.fetchAll(
            db, sql: "SELECT phase, step FROM milestone WHERE dog_id = ? AND step IS NOT NULL", arguments: [dogId])
        {
            progress.milestone(phase: row["phase"], step: row["step"])
        }
        return progress
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
                        db, sql: "SELECT step FROM milestone WHERE dog_id = ? AND phase = ? AND step IS NOT NULL",
                        arguments: [dogId.logText, phase]))
                guard !passed.contains(step) else { return }
                let progress = try ProgramProgress.read(db, dogId: dogId.logText, program: program)
                guard progress.passed(phase: phaseDef, step: stepDef) else { return }
                let rule =
                    stepDef.criterion.map { criterion in
                        let after = progress.steps["\(phase)/\(step)"]?.tracker.graduatedAfter
                        return "\(criterion)\(after.map { " (met after \($0) scored trials)" } ?? "")"
                    } ?? stepDef.completionRule
                let stepMilestone = MilestoneRecord(
                    dogId: dogId, sessionId: sessionId, phase: phase, step: step, criterion: rule)
                try stepMilestone.append(to: db)
                written.append(stepMilestone)
                let phaseDone = try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM milestone WHERE dog_id = ? AND phase = ? AND step IS NULL",
                    arguments: [dogId.logText, phase])
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
