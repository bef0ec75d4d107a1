import ProgramFiles
import Testing

@testable import TrainingEngine

/// Every number of a program file within the project's range (ProgramLimits): the values
/// issue 23 found bringing lineupd or lineupctl down are refused in one line naming the file,
/// the key and the range.
@Suite struct ProgramRangesTests {
    /// A small valid program; `replacing` swaps one of its lines (matched from its start) for another.
    static func text(_ replacing: [String: String] = [:], mode: String = "automated") -> String {
        var lines = [
            "name = \"edges\"", "title = \"Edges\"",
            "[[phases]]", "id = \"p\"", "title = \"P\"",
            "[[phases.steps]]", "id = \"1\"", "title = \"S\"", "mode = \"\(mode)\"",
            "lineup = { stations = 5, targets = 1, controls = 4 }",
            "hold_s = 2.0", "inter_trial_s = 5",
            "criterion = { kind = \"consecutive-correct\", n = 30 }",
            "[[phases.steps.exercises]]", "id = \"1\"", "title = \"E\"", "instruction = \"I\"",
            "duration_s = 30", "repeats = 4", "trials = 20",
        ]
        for (key, line) in replacing {
            let index = lines.firstIndex { $0.hasPrefix(key + " ") }!
            lines[index] = line
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The loader's refusal of `text`, or nil if it loads.
    static func refusal(_ text: String, source: String = "edges.toml") -> String? {
        do {
            _ = try Program.parse(toml: text, source: source)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func theTemplateLoads() {
        #expect(Self.refusal(Self.text()) == nil)
        #expect(Self.refusal(Self.text(mode: "trainer-led")) == nil)
    }

    /// Issue 23's crashes, each now one line with the key and the range.
    @Test(
        arguments: [
            ("trials", "trials = 1000000000", "phases[0].steps[0].exercises[0].trials: must be 1 to 10000"),
            ("repeats", "repeats = 1000000000", "phases[0].steps[0].exercises[0].repeats: must be 1 to 100"),
            (
                "duration_s", "duration_s = 1e300",
                "phases[0].steps[0].exercises[0].duration_s: must be above 0 and at most 3600 seconds"
            ),
            ("hold_s", "hold_s = 1e300", "phases[0].steps[0].hold_s: must be above 0 and at most 60 seconds"),
            (
                "inter_trial_s", "inter_trial_s = 1e300",
                "phases[0].steps[0].inter_trial_s: must be above 0 and at most 3600 seconds"
            ),
            (
                "lineup", "lineup = { stations = 5, targets = 1, controls = 9223372036854775807 }",
                "phases[0].steps[0].lineup.controls: must be 0 to 5"
            ),
            (
                "lineup", "lineup = { stations = 5, targets = 1, blanks = 9223372036854775807, controls = 1 }",
                "phases[0].steps[0].lineup.blanks: must be 0 to 5"
            ),
            (
                "lineup", "lineup = { stations = 9223372036854775807, targets = 1 }",
                "phases[0].steps[0].lineup.stations: must be 1 to 16"
            ),
            (
                "lineup", "lineup = { stations = 5, targets = 1, distractors = -9223372036854775808 }",
                "phases[0].steps[0].lineup.distractors: must be 0 to 5"
            ),
            (
                "lineup", "lineup = { stations = 5, targets = 1, controls = 4, max_same_station_in_a_row = 0 }",
                "phases[0].steps[0].lineup.max_same_station_in_a_row: must be 1 to 10000"
            ),
            (
                "lineup", "lineup = { stations = 5, targets = 1, controls = 4, max_uses = 9223372036854775807 }",
                "phases[0].steps[0].lineup.max_uses: must be 1 to 1000000"
            ),
            (
                "criterion", "criterion = { kind = \"consecutive-correct\", n = 9223372036854775807 }",
                "phases[0].steps[0].criterion.n: must be 1 to 1000"
            ),
            (
                "criterion", "criterion = { kind = \"accuracy-window\", accuracy = 0.9, window = 1000000000 }",
                "phases[0].steps[0].criterion.window: must be 1 to 1000"
            ),
            (
                "criterion", "criterion = [{ kind = \"correct-within\", correct = 40, min_trials = 4000000000 }]",
                "phases[0].steps[0].criterion[0].min_trials: must be 1 to 1000"
            ),
        ])
    func anOutOfRangeNumberIsOneLineNamingTheKeyAndRange(key: String, line: String, expected: String) throws {
        let message = try #require(Self.refusal(Self.text([key: line])), "\(line) loaded")
        #expect(message.hasPrefix("edges.toml: " + expected), "\(message)")
        #expect(message.contains("(the project's range)"), "\(message)")
        #expect(!message.contains("\n"), "\(message)")
    }

    @Test func theRangesOwnEdgesLoad() {
        for line in [
            "trials = 10000", "trials = 1", "duration_s = 3600", "duration_s = 0.001",
        ] {
            #expect(Self.refusal(Self.text([String(line.prefix { $0 != " " }): line])) == nil, "\(line)")
        }
        #expect(Self.refusal(Self.text(["repeats": "repeats = 100"], mode: "trainer-led")) == nil)
        #expect(Self.refusal(Self.text(["hold_s": "hold_s = 60"])) == nil)
        #expect(Self.refusal(Self.text(["lineup": "lineup = { stations = 16, targets = 1, controls = 15 }"])) == nil)
        #expect(Self.refusal(Self.text(["trials": "trials = 10001"])) != nil)
        #expect(Self.refusal(Self.text(["duration_s": "duration_s = 3600.5"])) != nil)
    }

    /// One station holds the target on every trial that has one: a run limit below them can
    /// never be laid out, and the step is refused rather than a session start.
    @Test func aOneStationLineupThatCannotBeLaidOutIsRefused() throws {
        let message = try #require(
            Self.refusal(
                Self.text(["lineup": "lineup = { stations = 1, targets = 1, max_same_station_in_a_row = 3 }"])))
        #expect(
            message
                == "edges.toml: phases[0].steps[0].lineup.max_same_station_in_a_row: on one station the target is there on each of the 20 trials with a target of exercises[0], more than 3 in a row: its blocks cannot always be laid out (leave the key out on one station)"
        )
        // Left out, one station's run is unlimited; enough no-target trials also fit.
        #expect(Self.refusal(Self.text(["lineup": "lineup = { stations = 1, targets = 1 }"])) == nil)
        #expect(
            Self.refusal(
                Self.text([
                    "lineup": "lineup = { stations = 1, targets = 1, max_same_station_in_a_row = 20 }"
                ])) == nil)
        // A trainer-led step lays out its repeats.
        #expect(
            Self.refusal(
                Self.text(
                    ["lineup": "lineup = { stations = 1, targets = 1, max_same_station_in_a_row = 4 }"],
                    mode: "trainer-led")) == nil)
        // What the loader accepts the engine lays out.
        let program = try Program.parse(
            toml: Self.text(["lineup": "lineup = { stations = 1, targets = 1, max_same_station_in_a_row = 20 }"]),
            source: "edges.toml")
        var generator = LayoutGenerator(setup: program.phases[0].steps[0].lineup, samples: [], seed: 1)
        #expect(try generator.targetStations(count: 20).count == 20)
    }

    /// A time no program may give is still converted without a trap (the daemon's requests
    /// and a `Program` built in code pass through here).
    @Test func secondsBeyondNanosecondsSaturate() {
        #expect(nanoseconds(seconds: 1e300) == .max)
        #expect(nanoseconds(seconds: 18_446_744_074) == .max)
        #expect(nanoseconds(seconds: 18_000_000_000) == 18_000_000_000_000_000_000)
        #expect(nanoseconds(seconds: .infinity) == 0 && nanoseconds(seconds: -.infinity) == 0)
        #expect(nanoseconds(seconds: .nan) == 0)
        #expect(nanoseconds(milliseconds: 1e300) == .max)
        #expect(nanoseconds(seconds: 1.5) == 1_500_000_000)
    }

    /// ProgramLimits.outOfRange is the daemon's check on a program it did not read itself.
    @Test func outOfRangeNamesTheKeyOfAProgramBuiltInCode() {
        let setup = LineupSetup(stations: 2, targets: 1, blanks: 1)
        var step = Step(id: "1", title: "S", mode: .automated, lineup: setup, exercises: [])
        var exercise = Exercise(id: "1", title: "E", instruction: "I")
        #expect(ProgramLimits.outOfRange(step: step, exercise: exercise) == nil)
        exercise.durationSeconds = 1e300
        #expect(ProgramLimits.outOfRange(step: step, exercise: exercise)?.hasPrefix("duration_s is 1e+300") == true)
        exercise.durationSeconds = 10
        exercise.trials = 1_000_000_000
        #expect(ProgramLimits.outOfRange(step: step, exercise: exercise)?.hasPrefix("trials is 1000000000") == true)
        exercise.trials = 20
        step.holdSeconds = .infinity
        #expect(ProgramLimits.outOfRange(step: step, exercise: exercise)?.hasPrefix("hold_s is inf") == true)
    }
}

/// What TOMLKit's parser would abort on (a debug build's assertion, a release build's undefined
/// behaviour) is refused before it: found by ProgramLoaderFuzzTests.
@Suite struct TOMLPrecheckTests {
    @Test(
        arguments: [
            ("name = \"a\"\n[/phases]\n", "a.toml: line 2, column 2: a table's name cannot start with '/'"),
            (
                "name = \"a\"\n[[ \u{FFFD}phases]]\n",
                "a.toml: line 2, column 4: a table's name cannot start with U+FFFD"
            ),
            ("[\n", "a.toml: line 1, column 2: a table's name cannot start with U+000A"),
            (
                "hold_s = 1979-05-27T-inf:32:00Z\n",
                "a.toml: line 1, column 14: '-' outside quotes makes a date or a time"
            ),
            ("hold_s = 07:32:00\n", "a.toml: line 1, column 12: ':' outside quotes makes a date or a time"),
            (
                "title = caf\u{E9}\n",
                "a.toml: line 1, column 12: the character U+00E9 may only be in quotes or a comment"
            ),
        ])
    func refusedInOneLine(text: String, expected: String) {
        let message = ProgramRangesTests.refusal(text, source: "a.toml")
        #expect(message?.hasPrefix(expected) == true, "\(message ?? "loaded")")
        #expect(message?.contains("\n") == false)
    }

    /// Quotes, comments, inline arrays and numbers with exponents are left to the parser.
    @Test func whatTOMLAllowsIsLeftAlone() throws {
        let text = ProgramRangesTests.text([
            "name": "name = \"caf\u{E9}:[/x] 1979-05-27\" # caf\u{E9} 07:32",
            "title": "title = '''T\u{E9}\n[/not a header]'''",
            "duration_s": "duration_s = 1e-1",
        ])
        let program = try Program.parse(toml: text, source: "a.toml")
        #expect(program.name == "caf\u{E9}:[/x] 1979-05-27")
        #expect(program.phases[0].steps[0].exercises[0].durationSeconds == 0.1)
    }
}
