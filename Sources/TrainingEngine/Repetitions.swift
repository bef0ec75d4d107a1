// How many times a session does a trainer-led exercise, and the dog's next step: rules every
// surface (lineupd's session start, lineupctl, the page's queue) takes from here.

/// Why a session may not do an exercise the number of times asked.
public enum RepetitionsRefused: Error, Sendable, Hashable, CustomStringConvertible {
    /// Repetitions asked of a step that is not trainer-led (its trials are a block's).
    case notTrainerLed(TrainingMode)
    /// Outside the exercise's bounds.
    case outOfBounds(asked: Int, exercise: String, bounds: ClosedRange<Int>)

    public var description: String {
        switch self {
        case .notTrainerLed(let mode):
            return
                "repetitions are chosen for a trainer-led exercise; this step is \(mode.rawValue) (choose its trials)"
        case .outOfBounds(let asked, let exercise, let bounds):
            return
                "exercise \(exercise) may be done \(bounds.lowerBound) to \(bounds.upperBound) times in a session "
                + "(the program's repeats), not \(asked)"
        }
    }
}

extension Exercise {
    /// The repetitions a session of this exercise may choose: at most `repeats`, the program's
    /// (the study's exercises are performed "up to four times"), and at least one, the
    /// project's (a session that does the exercise no time is no session of it).
    public var repetitionBounds: ClosedRange<Int> { 1...max(1, repeats) }
}

extension Step {
    /// `exercise` as a session does it `repetitions` times (nil: as often as the program
    /// allows), or why not. The one check of the count: lineupd's session start applies it to
    /// whatever asks (lineupctl, the page, the page's queue).
    public func exercise(_ exercise: Exercise, repetitions: Int?) throws(RepetitionsRefused) -> Exercise {
        guard let repetitions else { return exercise }
        guard mode == .trainerLed else { throw .notTrainerLed(mode) }
        let bounds = exercise.repetitionBounds
        guard bounds.contains(repetitions) else {
            throw .outOfBounds(asked: repetitions, exercise: exercise.id, bounds: bounds)
        }
        var chosen = exercise
        chosen.repeats = repetitions
        return chosen
    }
}

/// A dog's next step in a program, as its progress decides it (`ProgramProgress.next`).
public struct NextStep: Sendable, Hashable, Codable {
    /// `phase/step`, as `session start --step` takes it.
    public var step: String
    public var title: String
    public var mode: TrainingMode
    /// The exercise to do next: the step's first not yet done (a step without a criterion),
    /// else its first.
    public var exercise: String?
    public var exerciseTitle: String?
    /// The repetitions a session of that exercise may choose (trainer-led steps): from, to.
    public var fewestRepetitions: Int?
    public var mostRepetitions: Int?

    public init(
        step: String, title: String, mode: TrainingMode, exercise: String?, exerciseTitle: String?,
        repetitions: ClosedRange<Int>?
    ) {
        self.step = step
        self.title = title
        self.mode = mode
        self.exercise = exercise
        self.exerciseTitle = exerciseTitle
        fewestRepetitions = repetitions?.lowerBound
        mostRepetitions = repetitions?.upperBound
    }
}

extension ProgramProgress {
    /// The dog's next step: the program's first step, in order, that is not passed (the same
    /// verdict `lineupctl progress` shows), with its first exercise not yet done; nil once
    /// every step is passed.
    public var next: NextStep? {
        for phase in program.phases {
            for step in phase.steps where !passed(phase: phase, step: step) {
                let inARow = verdict(phase: phase, step: step).inARow
                let exercise =
                    step.criterion == nil
                    ? step.exercises.first { (inARow[$0.id] ?? 0) < step.rounds(for: $0) } ?? step.exercises.first
                    : step.exercises.first
                return NextStep(
                    step: "\(phase.id)/\(step.id)", title: step.title, mode: step.mode, exercise: exercise?.id,
                    exerciseTitle: exercise?.title,
                    repetitions: step.mode == .trainerLed ? exercise?.repetitionBounds : nil)
            }
        }
        return nil
    }
}
