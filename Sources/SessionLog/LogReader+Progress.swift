import Figures
import Foundation
import GRDB
import ProgramFiles
import TrainingEngine

extension LogReader {
    // MARK: Progress

    /// A dog's progress, program by program and phase by phase: every phase of the program
    /// (those not started at 0 %), each step's share done, counted by `ProgramProgress` (the
    /// one definition). With `program`, that program only; else each program the dog has
    /// sessions in (the one of its latest session first, each read from the text the log
    /// keeps), then its sessions without a program. A program's phases count only that
    /// program's sessions, trials and milestones. Accuracy figures come straight from the
    /// trials; phases the log holds that the program lacks follow, counted from milestones only.
    public func progress(dogId: String, program given: Program? = nil, window: Int = 20) throws -> [PhaseProgress] {
        try read { db in
            guard
                try String.fetchOne(db, sql: "SELECT id FROM dog WHERE id = ?", arguments: [dogId]) != nil
            else {
                throw SessionLogError.unknownDog(dogId)
            }
            if let given {
                return try Self.progress(db, dogId: dogId, name: given.name, program: given, window: window)
            }
            let names = try String.fetchAll(
                db,
                sql: """
                    SELECT p.name FROM session s JOIN program p ON p.id = s.program_id WHERE s.dog_id = ?
                    GROUP BY p.name ORDER BY max(s.wall_ns) DESC, p.name
                    """, arguments: [dogId])
            var phases: [PhaseProgress] = []
            for name in names {
                phases += try Self.progress(
                    db, dogId: dogId, name: name, program: Self.latestProgram(db, dogId: dogId, named: name),
                    window: window)
            }
            let withoutProgram = try Int.fetchOne(
                db,
                sql: """
                    SELECT (SELECT count(*) FROM session WHERE dog_id = ?1 AND program_id IS NULL)
                        + (SELECT count(*) FROM milestone m LEFT JOIN session s ON s.id = m.session_id
                           WHERE m.dog_id = ?1 AND s.program_id IS NULL)
                    """, arguments: [dogId])
            if withoutProgram ?? 0 > 0 {
                phases += try Self.progress(db, dogId: dogId, name: nil, program: nil, window: window)
            }
            return phases
        }
    }

    /// One program's phases (`name`; nil: the sessions logged without a program), from that
    /// program's sessions, trials and milestones only.
    static func progress(_ db: Database, dogId: String, name: String?, program: Program?, window: Int) throws
        -> [PhaseProgress]
    {
        var iso = ISOTimeFormatter()
        // The sessions of this program (or of none): ?2 the program's name; ?1 the dog.
        let programOf = """
            (CASE WHEN ?2 IS NULL THEN s.program_id IS NULL
                ELSE s.program_id IN (SELECT id FROM program WHERE name = ?2) END)
            """
        let ofProgram = "s.dog_id = ?1 AND \(programOf)"
        let arguments: StatementArguments = [dogId, name]
        var order: [String] = program?.phases.map(\.id) ?? []
        var phases: [String: PhaseProgress] = [:]
        for phase in program?.phases ?? [] {
            var entry = PhaseProgress(phase: phase.id)
            entry.title = phase.title
            entry.phaseSteps = phase.steps.count
            phases[phase.id] = entry
        }
        var outcomes: [String: [Bool]] = [:]
        let sessionRows = try Row.fetchAll(
            db, sql: "SELECT s.phase, s.phase_steps FROM session s WHERE \(ofProgram) ORDER BY s.wall_ns, s.mono_ns",
            arguments: arguments)
        for row in sessionRows {
            let phase: String = row["phase"] ?? "(no phase)"
            if phases[phase] == nil {
                order.append(phase)
                phases[phase] = PhaseProgress(phase: phase)
            }
            phases[phase]?.sessions += 1
            if phases[phase]?.phaseSteps == nil, let steps: Int = row["phase_steps"] {
                phases[phase]?.phaseSteps = steps
            }
        }
        let trialRows = try Row.fetchAll(
            db,
            sql: """
                SELECT s.phase, t.outcome FROM trial_current t JOIN session s ON s.id = t.session_id
                WHERE \(ofProgram) AND t.outcome <> 'aborted' ORDER BY t.wall_ns, t.number
                """, arguments: arguments)
        for row in trialRows {
            let phase: String = row["phase"] ?? "(no phase)"
            let outcome = TrialOutcome(rawValue: row["outcome"]) ?? .aborted
            outcomes[phase, default: []].append(outcome.isCorrect)
        }
        var passedSteps: [String: Set<String>] = [:]
        var passedOn: [String: String] = [:]
        var passedBy: [String: String] = [:]
        for row in try Row.fetchAll(
            db,
            // A milestone's program is its session's; one logged without a session has none.
            sql: """
                SELECT m.phase, m.step, m.criterion, m.wall_ns FROM milestone m LEFT JOIN session s ON s.id = m.session_id
                WHERE m.dog_id = ?1 AND \(programOf) ORDER BY m.wall_ns
                """, arguments: arguments)
        {
            let phase: String = row["phase"]
            if phases[phase] == nil {
                order.append(phase)
                phases[phase] = PhaseProgress(phase: phase)
            }
            if let step: String = row["step"] {
                passedSteps[phase, default: []].insert(step)
                if passedOn["\(phase)/\(step)"] == nil {
                    passedOn["\(phase)/\(step)"] = iso.string(wallNs: row["wall_ns"])
                    passedBy["\(phase)/\(step)"] = row["criterion"]
                }
            } else if phases[phase]?.graduated == nil {
                phases[phase]?.graduated = iso.string(wallNs: row["wall_ns"])
                phases[phase]?.criterion = row["criterion"]
            }
        }
        let progress = try program.map { try ProgramProgress.read(db, dogId: dogId, program: $0) }
        let otherMode = try program.map { try ProgramProgress.otherModeTrials(db, dogId: dogId, program: $0) } ?? [:]
        return order.compactMap { phase in
            guard var entry = phases[phase] else { return nil }
            entry.program = name
            let results = outcomes[phase] ?? []
            entry.trials = results.count
            entry.correct = Proportion(successes: results.filter { $0 }.count, trials: results.count)
            let recent = results.suffix(window)
            entry.recentWindow = recent.count
            entry.recentCorrectPercent =
                recent.isEmpty ? nil : 100 * Double(recent.filter { $0 }.count) / Double(recent.count)
            entry.stepsPassed = passedSteps[phase]?.count ?? 0
            if let progress, let definition = program?.phases.first(where: { $0.id == phase }) {
                entry.steps = definition.steps.map { step in
                    let record = progress.steps["\(phase)/\(step.id)"]
                    let verdict = progress.verdict(phase: definition, step: step)
                    return StepProgress(
                        step: step.id, title: step.title, mode: step.mode,
                        percent: Int((progress.stepProgress(phase: definition, step: step) * 100).rounded(.down)),
                        passed: passedOn["\(phase)/\(step.id)"], passedCriterion: passedBy["\(phase)/\(step.id)"],
                        rule: verdict.rule, verdict: verdict.verdict, trials: record?.tracker.results.count ?? 0,
                        otherModeTrials: otherMode["\(phase)/\(step.id)"] ?? 0,
                        exercises: step.exercises.map { exercise in
                            let tracker = record?.exerciseTrackers[exercise.id]
                            let required = step.criterion == nil ? step.rounds(for: exercise) : nil
                            return ExerciseProgress(
                                exercise: exercise.id, title: exercise.title, done: tracker?.results.count ?? 0,
                                required: required,
                                inARow: required.map { _ in verdict.inARow[exercise.id] ?? 0 })
                        })
                }
                entry.stepsPassed = definition.steps.filter { progress.passed(phase: definition, step: $0) }.count
                entry.progressPercent =
                    entry.graduated != nil
                    ? 100 : Double(Int((progress.phaseProgress(definition) * 100).rounded(.down)))
            } else if entry.graduated != nil {
                entry.progressPercent = 100
            } else if let steps = entry.phaseSteps, steps > 0 {
                // Not in the program: only the milestones are known.
                entry.progressPercent = min(100, 100 * Double(entry.stepsPassed) / Double(steps))
            }
            return entry
        }
    }

    /// The dog's next step in `program`: the first step its progress (the verdicts `progress`
    /// shows) has not passed, with the exercise to do next (`ProgramProgress.next`); nil once
    /// every step is passed. `lineupctl progress` says it, and the page's queue starts it.
    public func nextStep(dogId: String, program: Program) throws -> NextStep? {
        try read { db in
            guard
                try String.fetchOne(db, sql: "SELECT id FROM dog WHERE id = ?", arguments: [dogId]) != nil
            else {
                throw SessionLogError.unknownDog(dogId)
            }
            return try ProgramProgress.read(db, dogId: dogId, program: program).next
        }
    }

    /// As `nextStep(dogId:program:)`, in the program of that name as the dog's latest session
    /// in it ran it (the copy `progress` reads); nil when the log holds no session of it.
    public func nextStep(dogId: String, programNamed name: String) throws -> NextStep? {
        guard let program = try read({ db in try Self.latestProgram(db, dogId: dogId, named: name) }) else {
            return nil
        }
        return try nextStep(dogId: dogId, program: program)
    }

    /// The program the dog's latest session ran, from the text the log keeps (or a built-in
    /// program's, for sessions logged with only its name); nil when none can be read.
    static func latestProgram(_ db: Database, dogId: String, named: String? = nil) throws -> Program? {
        guard
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT p.name, p.content FROM session s JOIN program p ON p.id = s.program_id
                    WHERE s.dog_id = ?1 AND (?2 IS NULL OR p.name = ?2) ORDER BY s.wall_ns DESC, s.mono_ns DESC LIMIT 1
                    """, arguments: [dogId, named])
        else { return nil }
        let name: String = row["name"]
        let content: String = row["content"]
        if let parsed = try? Program.parse(toml: content, source: "the log's copy of \(name)") { return parsed }
        return try? Program.builtin(named: name)
    }
}
