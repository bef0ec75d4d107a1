import Foundation
import GRDB
import TrainingEngine

// Graduation, as the station logs it: when a session ends, the dog's scored trials on the
// session's step (all its sessions of that program, in order, after corrections) are held
// against the step's criterion; the first time it is met a milestone is written, and once
// every step of the phase has one, the phase's own. `lineupctl progress` reads them.

extension SessionLog {
    /// The milestones this session's end earns (already written), oldest first; none when the
    /// step has no criterion, the criterion is not met, or it was met before.
    public func recordGraduation(
        dogId: UUID, sessionId: UUID, program: String, phase: String, step: String,
        criterion: GraduationCriterion?, phaseSteps: [String]
    ) throws -> [MilestoneRecord] {
        guard let criterion else { return [] }
        var written: [MilestoneRecord] = []
        do {
            try pool.write { db in
                let passed = try Set(
                    String.fetchAll(
                        db, sql: "SELECT step FROM milestone WHERE dog_id = ? AND phase = ? AND step IS NOT NULL",
                        arguments: [dogId.logText, phase]))
                guard !passed.contains(step) else { return }
                let outcomes = try String.fetchAll(
                    db,
                    sql: """
                        SELECT t.outcome FROM trial_current t
                        JOIN session s ON s.id = t.session_id JOIN program p ON p.id = s.program_id
                        WHERE s.dog_id = ? AND p.name = ? AND s.phase = ? AND s.step = ? AND t.outcome != 'aborted'
                        ORDER BY t.wall_ns, t.number
                        """, arguments: [dogId.logText, program, phase, step])
                let tracker = GraduationTracker(
                    criterion: criterion,
                    results: outcomes.compactMap { TrialOutcome(rawValue: $0)?.isCorrect })
                guard let after = tracker.graduatedAfter else { return }
                let stepMilestone = MilestoneRecord(
                    dogId: dogId, sessionId: sessionId, phase: phase, step: step,
                    criterion: "\(criterion) (met after \(after) scored trials)")
                try stepMilestone.append(to: db)
                written.append(stepMilestone)
                let phaseDone = try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM milestone WHERE dog_id = ? AND phase = ? AND step IS NULL",
                    arguments: [dogId.logText, phase])
                if phaseDone == 0, Set(phaseSteps).isSubset(of: passed.union([step])) {
                    let phaseMilestone = MilestoneRecord(
                        dogId: dogId, sessionId: sessionId, phase: phase,
                        criterion: "every step of the phase passed (\(phaseSteps.count))")
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
