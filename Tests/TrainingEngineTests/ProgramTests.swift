import ProgramFiles
import Testing

@testable import TrainingEngine

@Suite struct ProgramTests {
    @Test func shippedProgramsLoad() throws {
        let study = try #require(try Program.builtin(named: "study"))
        #expect(study.phases.map(\.id) == ["indicate", "target-scent", "discrimination"])
        #expect(study.phases[0].steps[0].exercises[0].durationSeconds == 10)
        #expect(study.phases[0].steps[0].exercises[0].repeats == 4)
        #expect(study.phases[1].steps[0].lineup.stations == 2)
        #expect(study.phases[1].steps[0].lineup.blanks == 1)
        let last = study.phases[2].steps[1]
        #expect(last.mode == .doubleBlind)
        #expect(
            last.criterion
                == .anyOf([
                    .accuracyWindow(accuracy: 0.95, window: 20), .accuracyWindow(accuracy: 0.85, window: 200),
                ]))

        let research = try #require(try Program.builtin(named: "research-5-station"))
        #expect(research.phases.count == 4)
        #expect(research.stationsNeeded == 5)
        #expect(
            research.phases[1].steps[0].criterion
                == .anyOf([.consecutiveCorrect(n: 30), .correctWithin(correct: 40, minTrials: 100)]))
        let rig = try #require(try Program.builtin(named: "olfactometer-rig"))
        #expect(rig.stationsNeeded == 3)
        #expect(rig.phases.flatMap(\.steps).allSatisfy { $0.ready == .auto && $0.stationOutputs == .search })
        let threshold = try #require(try Program.builtin(named: "threshold"))
        #expect(threshold.stationsNeeded == 3)
        #expect(threshold.phases[0].steps.map { $0.procedure?.name } == ["staircase", "staircase", "constant-stimuli"])
        #expect(try Program.builtins().count == 4)
        #expect(try Program.builtin(named: "nope") == nil)
    }

    @Test func boardTooSmallNamesTheStep() throws {
        let research = try #require(try Program.builtin(named: "research-5-station"))
        #expect(throws: Never.self) { try research.validate(stationCount: 5) }
        do {
            try research.validate(stationCount: 3)
            Issue.record("a 3-station board must be refused")
        } catch {
            #expect(error.keyPath == "phases[0].steps[0].lineup.stations")
            #expect(error.description.contains("needs 5 stations but the board has 3"))
        }
    }

    static let minimal = """
        name = "t"
        title = "T"
        [[phases]]
        id = "p"
        title = "P"
        [[phases.steps]]
        id = "s"
        title = "S"
        mode = "automated"
        lineup = { stations = 3, controls = 2 }
        criterion = CRITERION
        [[phases.steps.exercises]]
        id = "e"
        title = "E"
        instruction = "do it"
        duration_s = DURATION
        """

    func load(
        criterion: String = #"{ kind = "consecutive-correct", n = 3 }"#, duration: String = "10",
        extra: String = ""
    )
        throws(ProgramError) -> Program
    {
        let text =
            Self.minimal.replacingOccurrences(of: "CRITERION", with: criterion)
            .replacingOccurrences(of: "DURATION", with: duration) + "\n" + extra
        return try Program.parse(toml: text, source: "test.toml")
    }

    func error(
        criterion: String = #"{ kind = "consecutive-correct", n = 3 }"#, duration: String = "10",
        extra: String = ""
    )
        -> ProgramError?
    {
        do {
            _ = try load(criterion: criterion, duration: duration, extra: extra)
            return nil
        } catch { return error }
    }

    @Test func minimalProgramLoads() throws {
        let p = try load()
        #expect(
            p.phases[0].steps[0].lineup
                == LineupSetup(stations: 3, targets: 1, controls: 2, maxSameStationInARow: 2))
        #expect(p.phases[0].steps[0].criterion == .consecutiveCorrect(n: 3))
    }

    @Test func zeroDurationIsRefused() {
        let e = error(duration: "0")
        #expect(e?.keyPath == "phases[0].steps[0].exercises[0].duration_s")
        #expect(e?.problem.contains("greater than zero") == true)
        #expect(
            e?.description.hasPrefix("test.toml: phases[0].steps[0].exercises[0].duration_s:") == true)
    }

    @Test func unknownCriterionIsRefused() {
        let e = error(criterion: #"{ kind = "mostly-right", n = 3 }"#)
        #expect(e?.keyPath == "phases[0].steps[0].criterion.kind")
        #expect(e?.problem.contains("unknown criterion \"mostly-right\"") == true)
    }

    @Test func unknownKeyIsRefused() {
        let e = error(extra: "durations = 3")
        #expect(e?.keyPath == "phases[0].steps[0].exercises[0].durations")
        #expect(e?.problem.contains("unknown key") == true)
        let e2 = error(criterion: #"{ kind = "consecutive-correct", n = 3, m = 4 }"#)
        #expect(e2?.keyPath == "phases[0].steps[0].criterion.m")
    }

    @Test func lineupThatDoesNotAddUpIsRefused() {
        let text = ProgramTests.minimal.replacingOccurrences(
            of: "CRITERION", with: #"{ kind = "consecutive-correct", n = 3 }"#
        )
        .replacingOccurrences(of: "DURATION", with: "10")
        .replacingOccurrences(of: "controls = 2", with: "controls = 2, blanks = 3")
        #expect(throws: ProgramError.self) { try Program.parse(toml: text, source: "x") }
    }

    @Test func tomlSyntaxErrorGivesLine() {
        do {
            _ = try Program.parse(toml: "name = \"a\"\ntitle = \n", source: "bad.toml")
            Issue.record("must fail")
        } catch {
            #expect(error.description.hasPrefix("bad.toml: line 2"))
        }
    }

    @Test func criterionListIsAnyOf() throws {
        let p = try load(
            criterion:
                #"[{ kind = "correct-within", correct = 40, min_trials = 100 }, { kind = "accuracy-window", accuracy = 0.85, window = 200 }]"#
        )
        #expect(
            p.phases[0].steps[0].criterion
                == .anyOf([
                    .correctWithin(correct: 40, minTrials: 100), .accuracyWindow(accuracy: 0.85, window: 200),
                ]))
    }

    @Test func criteriaEvaluate() {
        let c = GraduationCriterion.consecutiveCorrect(n: 3)
        #expect(!c.isMet(by: [true, true, false, true, true]))
        #expect(c.isMet(by: [false, true, true, true]))
        #expect(c.progress([true, true, false, true]) == 1.0 / 3)
        let w = GraduationCriterion.correctWithin(correct: 4, minTrials: 10)
        #expect(!w.isMet(by: Array(repeating: true, count: 9)))
        #expect(w.isMet(by: [true, true, true, true] + Array(repeating: false, count: 6)))
        let a = GraduationCriterion.accuracyWindow(accuracy: 0.95, window: 20)
        #expect(a.isMet(by: Array(repeating: true, count: 19) + [false]))
        #expect(!a.isMet(by: Array(repeating: true, count: 18) + [false, false]))
        #expect(!a.isMet(by: Array(repeating: true, count: 19)))
        #expect(GraduationCriterion.anyOf([c, a]).isMet(by: [true, true, true]))
    }
}
