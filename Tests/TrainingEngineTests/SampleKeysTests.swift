import ProgramFiles
import Testing

@testable import TrainingEngine

/// The program keys for usage limits and novel samples: read, defaulted from the program's top
/// level, and refused with the key and the reason when wrong.
@Suite struct SampleKeysTests {
    func program(top: String = "", lineup: String) -> String {
        """
        name = "p"
        title = "P"
        \(top)

        [[phases]]
        id = "a"
        title = "A"

        [[phases.steps]]
        id = "1"
        title = "S"
        mode = "double-blind"
        lineup = { stations = 3, targets = 1, controls = 2\(lineup) }

        [[phases.steps.exercises]]
        id = "1"
        title = "E"
        instruction = "I"

        [[phases.steps]]
        id = "2"
        title = "T"
        mode = "double-blind"
        lineup = { stations = 3, targets = 1, controls = 2, max_uses_per_dog = 4 }

        [[phases.steps.exercises]]
        id = "1"
        title = "E"
        instruction = "I"
        """
    }

    @Test func theKeysAreReadAndTheProgramsLimitsStandForStepsWithout() throws {
        let p = try Program.parse(
            toml: program(
                top: "max_uses = 50\nmax_uses_per_dog = 12",
                lineup: ", novel_target_share = 0.25, novel_only = false, max_uses = 9"),
            source: "p.toml")
        let first = try #require(p.step(phase: "a", step: "1")).lineup
        #expect(first.novelTargetShare == 0.25 && !first.novelOnly)
        #expect(first.maxUses == 9 && first.maxUsesPerDog == 12)
        let second = try #require(p.step(phase: "a", step: "2")).lineup
        #expect(second.maxUses == 50 && second.maxUsesPerDog == 4 && second.novelTargetShare == 0)
        let plain = try Program.parse(toml: program(lineup: ", novel_only = true"), source: "p.toml")
        let only = try #require(plain.step(phase: "a", step: "1")).lineup
        #expect(only.novelOnly && only.maxUses == nil && only.maxUsesPerDog == nil)
    }

    @Test func wrongValuesAreRefusedNamingTheKey() {
        let cases: [(String, String, String)] = [
            ("", ", novel_target_share = 1.5", "phases[0].steps[0].lineup.novel_target_share: must be within 0...1"),
            ("", ", novel_only = \"yes\"", "phases[0].steps[0].lineup.novel_only: must be true or false"),
            (
                "", ", max_uses = 0",
                "phases[0].steps[0].lineup.max_uses: must be 1 to 1000000 (the project's range), not 0"
            ),
            ("max_uses_per_dog = -2", "", "max_uses_per_dog: must be 1 to 1000000 (the project's range), not -2"),
        ]
        for (top, lineup, message) in cases {
            do {
                _ = try Program.parse(toml: program(top: top, lineup: lineup), source: "p.toml")
                Issue.record("accepted \(top) \(lineup)")
            } catch {
                #expect(error.description.contains(message), "\(error.description)")
            }
        }
    }
}
