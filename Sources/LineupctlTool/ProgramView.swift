import ArgumentParser
import Foundation
import StationControl
import TrainingEngine

// MARK: - A program as shown: one model for the text and the JSON

/// A program as `program show` prints it. A field added to a step is added to `StepView` and
/// one line of `facts`, and both the text and the JSON carry it.
struct ProgramView: Encodable {
    var name: String
    var title: String
    var description: String
    var source: String
    var stationsNeeded: Int
    var phases: [PhaseView]

    init(_ program: Program) {
        name = program.name
        title = program.title
        description = program.description
        source = program.source
        stationsNeeded = program.stationsNeeded
        phases = program.phases.map { PhaseView($0) }
    }

    var text: String {
        let steps = phases.map(\.steps.count).reduce(0, +)
        var out = "\(name): \(title)\n"
        if !description.isEmpty { out += "  \(description)\n" }
        out +=
            "  From \(source); \(count(phases.count, "phase")), \(count(steps, "step")), "
            + "up to \(count(stationsNeeded, "station")).\n"
        for phase in phases {
            out += "\nPhase \(phase.id): \(phase.title)\n"
            if !phase.description.isEmpty { out += "  \(phase.description)\n" }
            for step in phase.steps {
                out += "\n  Step \(step.step): \(step.title)\n"
                if !step.description.isEmpty { out += "    \(step.description)\n" }
                for (label, value) in step.facts {
                    out += "    " + label.padding(toLength: 14, withPad: " ", startingAt: 0) + value + "\n"
                }
                for exercise in step.exercises {
                    out += "    Exercise \(exercise.id): \(exercise.title), \(exercise.measure)\n"
                    out += "      \(exercise.instruction)\n"
                }
            }
        }
        return out
    }
}

struct PhaseView: Encodable {
    var id: String
    var title: String
    var description: String
    var steps: [StepView]

    init(_ phase: Phase) {
        id = phase.id
        title = phase.title
        description = phase.description
        steps = phase.steps.map { StepView($0, phase: phase.id) }
    }
}

struct StepView: Encodable {
    var id: String
    /// As `session start --step` takes it: `phase/step`.
    var step: String
    var title: String
    var description: String
    var mode: String
    var lineup: LineupView
    /// Absent: the board's hold time.
    var holdS: Double?
    /// Automated steps only: the pause between trials.
    var interTrialS: Double?
    var criterion: String
    /// How each trial or round starts, in words; and the step's `ready` (automated steps).
    var starts: String
    var ready: String?
    /// Automated steps: `end` or `continue` (what a false alert does to the trial).
    var afterFalseAlert: String?
    var exercises: [ExerciseView]

    init(_ step: Step, phase: String) {
        id = step.id
        self.step = "\(phase)/\(step.id)"
        title = step.title
        description = step.description
        mode = step.mode.rawValue
        lineup = LineupView(step.lineup)
        holdS = step.holdSeconds
        interTrialS = step.mode == .trainerLed ? nil : step.interTrialSeconds
        criterion = step.completionRule
        starts =
            step.mode == .trainerLed
            ? "by the trainer (ready), each repetition a round"
            : step.ready == .auto ? "by itself after the interval (ready = auto)" : "at the assistant's ready press"
        ready = step.mode == .trainerLed ? nil : step.ready.rawValue
        afterFalseAlert = step.mode == .trainerLed ? nil : step.afterFalseAlert.rawValue
        exercises = step.exercises.map { ExerciseView($0, mode: step.mode) }
    }

    /// The step's settings as label and words, in the order the text shows them.
    var facts: [(String, String)] {
        var facts = [("Mode", mode), ("Lineup", lineup.inWords)]
        // Trainer-led rounds are laid out like trials: the rule applies to both.
        if let run = lineup.maxSameStationInARow {
            facts.append(("Same station", "the target at most \(count(run, "trial")) in a row in one station"))
        }
        if let samples = lineup.samplesInWords { facts.append(("Samples", samples)) }
        facts.append(("Hold", holdS.map { "\(seconds($0)) at one station" } ?? "the board's hold time"))
        if let interTrialS { facts.append(("Interval", "\(seconds(interTrialS)) between trials")) }
        facts.append(("Starts", starts))
        if let afterFalseAlert {
            facts.append(
                (
                    "False alert",
                    afterFalseAlert == AfterFalseAlert.end.rawValue
                        ? "ends the trial (after_false_alert = end)"
                        : "the dog may search on and be clicked at the target; still scored a false alert (after_false_alert = continue)"
                ))
        }
        facts.append(("Criterion", criterion))
        return facts
    }
}

struct LineupView: Encodable {
    var inWords: String
    var stations: Int
    var targets: Int
    var controls: Int
    var blanks: Int
    var distractors: Int
    var noTargetShare: Double
    /// Absent for a one-station lineup, where it cannot apply.
    var maxSameStationInARow: Int?
    /// Usage limits for samples without their own, and novel-sample rounds (absent: none).
    var maxUses: Int?
    var maxUsesPerDog: Int?
    var novelTargetShare: Double?
    var novelOnly: Bool?

    init(_ setup: LineupSetup) {
        inWords = setup.inWords
        stations = setup.stations
        targets = setup.targets
        controls = setup.controls
        blanks = setup.blanks
        distractors = setup.distractors
        noTargetShare = setup.noTargetShare
        maxSameStationInARow = setup.stations > 1 && setup.targets > 0 ? setup.maxSameStationInARow : nil
        maxUses = setup.maxUses
        maxUsesPerDog = setup.maxUsesPerDog
        novelTargetShare = setup.novelTargetShare > 0 ? setup.novelTargetShare : nil
        novelOnly = setup.novelOnly ? true : nil
    }

    /// The sample rules in words, or nil when the step sets none.
    var samplesInWords: String? {
        var parts: [String] = []
        if novelOnly == true { parts.append("every sample new to the dog (novel_only)") }
        if let share = novelTargetShare {
            parts.append("a share of \(share) of the targets new to the dog (novel_target_share)")
        }
        if let maxUses { parts.append("each at most \(maxUses) trials in all (max_uses)") }
        if let maxUsesPerDog { parts.append("at most \(maxUsesPerDog) with each dog (max_uses_per_dog)") }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }
}

struct ExerciseView: Encodable {
    var id: String
    var title: String
    var instruction: String
    /// Trainer-led: how long the exercise lasts, and how often it may be done in a session.
    var durationS: Double?
    var repeats: Int?
    /// Automated: trials in a block, and each trial's search time-out.
    var trials: Int?
    var searchTimeoutS: Double?

    init(_ exercise: Exercise, mode: TrainingMode) {
        id = exercise.id
        title = exercise.title
        instruction = exercise.instruction
        if mode == .trainerLed {
            durationS = exercise.durationSeconds
            repeats = exercise.repeats
        } else {
            trials = exercise.trials
            searchTimeoutS = exercise.durationSeconds
        }
    }

    /// "10 s, up to 4 times" or "20 trials a block, 60 s to search each".
    var measure: String {
        if let trials, let searchTimeoutS {
            return "\(count(trials, "trial")) a block, \(seconds(searchTimeoutS)) to search each"
        }
        return "\(seconds(durationS ?? 0)), up to \(count(repeats ?? 0, "time")) in a session"
    }
}

/// `10 s`, `2.5 s`.
private func seconds(_ value: Double) -> String {
    String(format: "%g s", value)
}
