import Figures
import ProgramFiles
import Testing
import TrainingEngine

/// Issue 37: the rules the page's queue and lineupd's session start take from the engine: an
/// exercise's repetitions within the program's bounds, and a dog's next step from its progress.
@Suite struct NextStepTests {
    @Test func repetitionsWithinTheProgramsBounds() throws {
        let study = try #require(try Program.builtin(named: "study"))
        let led = try #require(study.step(phase: "target-scent", step: "1"))
        let exercise = try #require(led.exercises.first)
        #expect(exercise.repetitionBounds == 1...4)
        #expect(try led.exercise(exercise, repetitions: nil).repeats == 4)
        #expect(try led.exercise(exercise, repetitions: 2).repeats == 2)
        #expect(try led.exercise(exercise, repetitions: 4).repeats == 4)
        for n in [0, 5, -1, 100] {
            #expect(throws: RepetitionsRefused.outOfBounds(asked: n, exercise: "1", bounds: 1...4)) {
                try led.exercise(exercise, repetitions: n)
            }
        }
        let automated = try #require(study.step(phase: "target-scent", step: "2"))
        #expect(throws: RepetitionsRefused.notTrainerLed(.automated)) {
            try automated.exercise(automated.exercises[0], repetitions: 2)
        }
    }

    @Test func theNextStepIsTheFirstNotPassedWithItsFirstExerciseNotDone() throws {
        let study = try #require(try Program.builtin(named: "study"))
        var progress = ProgramProgress(program: study)
        #expect(progress.next?.step == "indicate/1")
        #expect(progress.next?.exercise == "1")
        #expect(progress.next?.mostRepetitions == 4 && progress.next?.fewestRepetitions == 1)
        // Exercise 1 done (four correct in a row): exercise 2 is next, the step not yet passed.
        for _ in 0..<4 { progress.record(.hit, phase: "indicate", step: "1", exercise: "1") }
        #expect(progress.next?.step == "indicate/1" && progress.next?.exercise == "2")
        // Three hits and a miss of exercise 2 complete nothing: still exercise 2.
        for outcome: TrialOutcome in [.hit, .hit, .hit, .miss] {
            progress.record(outcome, phase: "indicate", step: "1", exercise: "2")
        }
        #expect(progress.next?.step == "indicate/1" && progress.next?.exercise == "2")
        for _ in 0..<4 { progress.record(.hit, phase: "indicate", step: "1", exercise: "2") }
        #expect(progress.next?.step == "indicate/2" && progress.next?.exercise == "1")
        // A milestone passes a step whatever its trials: the next one follows.
        progress.milestone(phase: "indicate", step: "2")
        let next = try #require(progress.next)
        #expect(
            next.step == "target-scent/1" && next.mode == .trainerLed && next.title == "Target and one empty container")
        // A step with a criterion: its first exercise, no repetitions (its trials are a block's).
        progress.milestone(phase: "target-scent", step: "1")
        #expect(progress.next?.step == "target-scent/2" && progress.next?.mostRepetitions == nil)
        // Every step passed: no next step.
        for phase in study.phases {
            for step in phase.steps { progress.milestone(phase: phase.id, step: step.id) }
        }
        #expect(progress.next == nil)
    }
}
