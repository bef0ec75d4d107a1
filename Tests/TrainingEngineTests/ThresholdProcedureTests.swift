import ProgramFiles
import Testing
import Thresholds

@testable import TrainingEngine

/// A threshold step's procedure as the engine runs it (issue 38): the next rung is Thresholds'
/// staircase's answer to the outcomes so far, catch trials are decided ahead from the seed,
/// an aborted trial is no answer, and each trial leaves the state the log keeps.
@Suite struct ThresholdProcedureTests {
    static func staircase(
        down: Int = 2, start: Int = 4, reversals: Int? = 4, trials: Int? = nil, catchRate: Double = 0, rungs: Int = 8
    ) -> ThresholdProcedure {
        ThresholdProcedure(
            method: .staircase(
                StaircaseRules(
                    down: down, step: 1, startRung: start, stopAfterReversals: reversals, stopAfterTrials: trials,
                    catchTrialRate: catchRate)), ladderRungs: rungs)
    }

    /// `run.record`, which must answer.
    static func record(_ run: inout ThresholdRun, _ trial: Int, _ outcome: TrialOutcome) throws -> ProcedureTrialState {
        let state = run.record(trial: trial, outcome: outcome)
        return try #require(state)
    }

    @Test func twoDownOneUpFollowsTheOutcomes() throws {
        var run = try ThresholdRun(procedure: Self.staircase(), trials: 40, seed: 1)
        // hit hit (down to 3) hit hit (down to 2) miss (up to 3: a reversal) hit hit (down to 2: a reversal)
        let outcomes: [TrialOutcome] = [.hit, .hit, .hit, .hit, .miss, .hit, .hit]
        var rungs: [Int] = []
        var states: [ProcedureTrialState] = []
        for (i, o) in outcomes.enumerated() {
            guard case .target(let r) = run.next(trial: i) else {
                Issue.record("trial \(i) not a target")
                return
            }
            rungs.append(r)
            states.append(try Self.record(&run, i, o))
        }
        #expect(rungs == [4, 4, 3, 3, 2, 3, 3])
        #expect(states.map(\.direction) == [0, -1, 0, -1, 1, 0, -1])
        #expect(states.map(\.reversal) == [false, false, false, false, true, false, true])
        #expect(states.map(\.reversals) == [0, 0, 0, 0, 1, 1, 2])
        #expect(states.last?.nextRung == 2)
        #expect(states.allSatisfy { $0.procedure == "staircase" && !$0.catchTrial })
    }

    @Test func aFalseAlertOnATargetTrialIsAMissAndAnAbortIsNoAnswer() throws {
        var run = try ThresholdRun(procedure: Self.staircase(down: 3, start: 2), trials: 10, seed: 1)
        _ = run.record(trial: 0, outcome: .hit)
        let aborted = try Self.record(&run, 1, .aborted)
        #expect(aborted.direction == 0 && aborted.nextRung == 2)
        let wrong = try Self.record(&run, 2, .falseAlert)
        #expect(wrong.direction == 1 && wrong.nextRung == 3)
        #expect(run.next(trial: 3) == .target(rung: 3))
    }

    @Test func itStopsAtItsReversalsAndSaysSo() throws {
        var run = try ThresholdRun(procedure: Self.staircase(down: 1, start: 4, reversals: 3), trials: 50, seed: 1)
        var i = 0
        var last: ProcedureTrialState?
        while case .target = run.next(trial: i) {
            last = run.record(trial: i, outcome: i % 2 == 0 ? .hit : .miss)
            i += 1
        }
        #expect(i == 4)  // down, up (1), down (2), up (3): stopped
        #expect(last?.stopped == true && last?.reversals == 3 && last?.nextRung == nil)
        #expect(run.next(trial: i) == .stopped)
        #expect(run.record(trial: i, outcome: .hit) == nil)
    }

    @Test func catchTrialsAreDecidedAheadAndDoNotMoveTheStaircase() throws {
        let p = Self.staircase(reversals: nil, trials: 200, catchRate: 0.2)
        let a = try ThresholdRun(procedure: p, trials: 200, seed: 7)
        let b = try ThresholdRun(procedure: p, trials: 200, seed: 7)
        #expect(a.plan == b.plan)
        let catches = a.plan.filter { $0 == .catchTrial }.count
        #expect((20...60).contains(catches))
        var run = a
        let first = try #require(a.plan.firstIndex(of: .catchTrial))
        for i in 0..<first { _ = run.record(trial: i, outcome: .miss) }
        let before = run.next(trial: first + 1)
        let state = try Self.record(&run, first, .falseAlert)
        #expect(state.catchTrial && state.rung == nil && state.direction == 0)
        #expect(run.next(trial: first + 1) == before)
    }

    @Test func constantStimuliPresentEachRungOnceABlock() throws {
        let p = ThresholdProcedure(
            method: .constantStimuli(rungs: [1, 3, 5], blocks: 4, catchTrialsPerBlock: 1), ladderRungs: 6)
        #expect(p.trials(exerciseTrials: 20) == 16)
        var run = try ThresholdRun(procedure: p, trials: 16, seed: 3)
        var seen: [Int: Int] = [:]
        for i in 0..<16 {
            if case .target(let r) = run.next(trial: i) { seen[r, default: 0] += 1 }
            let s = try Self.record(&run, i, .hit)
            #expect(s.procedure == "constant-stimuli" && s.stopped == (i == 15))
        }
        #expect(seen == [1: 4, 3: 4, 5: 4])
        #expect(run.next(trial: 16) == .stopped)
    }

    @Test func aStaircaseCapsTheBlockAtItsTrials() {
        #expect(Self.staircase(trials: 30).trials(exerciseTrials: 40) == 30)
        #expect(Self.staircase(trials: nil).trials(exerciseTrials: 40) == 40)
    }
}

/// The program file's `procedure` table: each mistake one message naming the file, the step's
/// key path and the key.
@Suite struct ProcedureFileTests {
    static func text(
        _ procedure: String, lineup: String = "{ stations = 3, targets = 1, controls = 1 }",
        mode: String = "double-blind", exercise: String = "trials = 40"
    ) -> String {
        """
        name = "t"
        title = "T"
        [[phases]]
        id = "p"
        title = "P"
        [[phases.steps]]
        id = "s"
        title = "S"
        mode = "\(mode)"
        lineup = \(lineup)
        procedure = \(procedure)
        [[phases.steps.exercises]]
        id = "1"
        title = "E"
        instruction = "I"
        \(exercise)

        """
    }

    static func refusal(_ text: String) -> String? {
        do {
            _ = try Program.parse(toml: text, source: "t.toml")
            return nil
        } catch {
            return error.description
        }
    }

    @Test func aStaircaseLoads() throws {
        let p = try Program.parse(
            toml: Self.text(
                #"{ kind = "staircase", ladder_rungs = 8, down = 3, start_rung = 5, stop_after_reversals = 8, catch_trial_rate = 0.1 }"#
            ), source: "t.toml")
        let procedure = try #require(p.phases[0].steps[0].procedure)
        #expect(
            procedure
                == ThresholdProcedure(
                    method: .staircase(
                        StaircaseRules(down: 3, step: 1, startRung: 5, stopAfterReversals: 8, catchTrialRate: 0.1)),
                    ladderRungs: 8))
    }

    @Test func constantStimuliLoad() throws {
        let p = try Program.parse(
            toml: Self.text(
                #"{ kind = "constant-stimuli", ladder_rungs = 6, rungs = [0, 2, 4], blocks = 5 }"#, exercise: ""),
            source: "t.toml")
        #expect(
            p.phases[0].steps[0].procedure
                == ThresholdProcedure(
                    method: .constantStimuli(rungs: [0, 2, 4], blocks: 5, catchTrialsPerBlock: 0), ladderRungs: 6))
    }

    @Test(
        arguments: [
            (
                #"{ kind = "stairs", ladder_rungs = 8 }"#, "",
                "t.toml: phases[0].steps[0].procedure.kind: unknown procedure \"stairs\""
            ),
            (
                #"{ kind = "staircase", ladder_rungs = 8, down = 2, start_rung = 8, stop_after_reversals = 8 }"#, "",
                "t.toml: phases[0].steps[0].procedure.start_rung: must be 0 to 7"
            ),
            (
                #"{ kind = "staircase", ladder_rungs = 8, down = 0, start_rung = 2, stop_after_reversals = 8 }"#, "",
                "t.toml: phases[0].steps[0].procedure.down: must be 1 to 10"
            ),
            (
                #"{ kind = "staircase", ladder_rungs = 8, down = 2, start_rung = 2 }"#, "",
                "t.toml: phases[0].steps[0].procedure: a staircase needs a stop rule"
            ),
            (
                #"{ kind = "staircase", ladder_rungs = 8, down = 2, start_rung = 2, stop_after_trials = 9, catch_trial_rate = 1 }"#,
                "", "t.toml: phases[0].steps[0].procedure.catch_trial_rate: must be at least 0 and below 1"
            ),
            (
                #"{ kind = "staircase", ladder_rungs = 8, down = 2, start_rung = 2, stop_after_trials = 9, stepsize = 1 }"#,
                "", "t.toml: phases[0].steps[0].procedure.stepsize: unknown key"
            ),
            (
                #"{ kind = "constant-stimuli", ladder_rungs = 6, rungs = [0, 6], blocks = 5 }"#, "",
                "t.toml: phases[0].steps[0].procedure.rungs[1]: must be a rung from 0 to 5"
            ),
            (
                #"{ kind = "constant-stimuli", ladder_rungs = 6, rungs = [0, 2], blocks = 5 }"#, "trials = 40",
                "t.toml: phases[0].steps[0].exercises[0].trials: the method of constant stimuli fixes the block"
            ),
            (
                #"{ kind = "staircase", ladder_rungs = 8, down = 2, start_rung = 2, stop_after_trials = 9 }"#,
                "lineup = { stations = 3, targets = 1, controls = 1, no_target_share = 0.2 }",
                "t.toml: phases[0].steps[0].lineup.no_target_share: a threshold step's trials without a target"
            ),
            (
                #"{ kind = "staircase", ladder_rungs = 8, down = 2, start_rung = 2, stop_after_trials = 9 }"#,
                "mode = trainer-led",
                "t.toml: phases[0].steps[0].procedure: a threshold procedure runs automated or double-blind trials"
            ),
        ])
    func eachMistakeNamesItsKey(procedure: String, change: String, expected: String) {
        let text: String
        if change.hasPrefix("lineup = ") {
            text = Self.text(procedure, lineup: String(change.dropFirst("lineup = ".count)))
        } else if change.hasPrefix("mode = ") {
            text = Self.text(procedure, mode: String(change.dropFirst("mode = ".count)))
        } else {
            text = Self.text(procedure, exercise: change)
        }
        let got = Self.refusal(text)
        #expect(got?.hasPrefix(expected) == true, "got \(got ?? "no refusal")")
    }
}
