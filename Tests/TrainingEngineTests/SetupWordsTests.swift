import ProgramFiles
import Testing

@testable import TrainingEngine

/// The set-up in words is what the loading assistant reads: each kind counted, plurals right,
/// the target-free share as trainers count it.
@Suite struct SetupWordsTests {
    @Test(arguments: [
        (LineupSetup(stations: 1), "target alone"),
        (LineupSetup(stations: 2, blanks: 1), "target + 1 empty container"),
        (
            LineupSetup(stations: 5, controls: 4, noTargetShare: 0.1),
            "target + 4 controls, 1 trial in 10 without target"
        ),
        (LineupSetup(stations: 3, controls: 1, blanks: 1), "target + 1 control + 1 empty container"),
        (LineupSetup(stations: 4, controls: 2, distractors: 1), "target + 2 controls + 1 distractor"),
        (
            LineupSetup(stations: 5, controls: 4, noTargetShare: 0.25),
            "target + 4 controls, 1 trial in 4 without target"
        ),
        (
            LineupSetup(stations: 5, controls: 4, noTargetShare: 0.3),
            "target + 4 controls, 30 % of trials without target"
        ),
        (
            LineupSetup(stations: 5, controls: 4, noTargetShare: 0.125),
            "target + 4 controls, 1 trial in 8 without target"
        ),
        (
            LineupSetup(stations: 5, controls: 4, noTargetShare: 0.333),
            "target + 4 controls, 33.3 % of trials without target"
        ),
        (LineupSetup(stations: 3, targets: 0, controls: 2, blanks: 1), "no target: 2 controls + 1 empty container"),
    ])
    func setUpInWords(_ setup: LineupSetup, _ words: String) {
        #expect(setup.inWords == words)
    }

    @Test func shippedStepsInWords() throws {
        let study = try #require(try Program.builtin(named: "study"))
        let words = study.phases.flatMap(\.steps).map(\.lineup.inWords)
        #expect(
            words == [
                "target alone", "target alone", "target + 1 empty container", "target + 2 empty containers",
                "target + 1 control + 1 empty container", "target + 4 controls, 1 trial in 10 without target",
            ])
        #expect(
            study.phases[0].steps[0].completionRule
                == "each exercise done correctly (exercise 1: 4 correct rounds in a row, exercise 2: 4 correct rounds in a row)"
        )
        #expect(
            study.phases[2].steps[1].completionRule
                == "95 % of the last 20 trials correct, or 85 % of the last 200 trials correct")
    }
}
