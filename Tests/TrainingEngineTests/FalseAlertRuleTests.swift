import ProgramFiles
import Testing

@testable import TrainingEngine

/// What a false alert does to an automated trial is the step's (`after_false_alert`); a
/// trainer-led hold is recorded against the round's target.
@Suite struct FalseAlertRuleTests {
    func program(mode: String, after: String?) -> String {
        """
        name = "rule"
        title = "Rule"
        [[phases]]
        id = "p"
        title = "P"
        [[phases.steps]]
        id = "1"
        title = "S"
        mode = "\(mode)"
        \(after.map { "after_false_alert = \"\($0)\"" } ?? "")
        lineup = { stations = 3, targets = 1 }
        [[phases.steps.exercises]]
        id = "1"
        title = "E"
        instruction = "Search."
        """
    }

    func configuration(_ text: String) throws -> LineupMachine.Configuration {
        let step = try Program.parse(toml: text, source: "rule.toml").phases[0].steps[0]
        return LineupMachine.Configuration(
            step: step, exercise: step.exercises[0], stationCount: 3, hold: 2 * sec, holdTolerance: 150 * ms)
    }

    /// A hold at A (not the target), then a hold at the target C.
    func falseAlertThenTarget(_ c: LineupMachine.Configuration) -> Driver {
        var d = Driver(c)
        startTrial(&d, kinds: [.blank, .blank, .target])
        d.edge(0, true, at: 1 * sec)
        d.edge(0, false, at: 4 * sec)
        if d.machine.activity == .searching {
            d.edge(2, true, at: 5 * sec)
            d.edge(2, false, at: 8 * sec)
        }
        d.advance(to: 40 * sec)
        return d
    }

    @Test func theDefaultEndsTheTrialAtTheFalseAlertWithNoClick() throws {
        let c = try configuration(program(mode: "automated", after: nil))
        #expect(c.endOnFalseAlert)
        let d = falseAlertThenTarget(c)
        #expect(d.clicks.isEmpty)
        #expect(d.outcomes == [.falseAlert])
        #expect(d.machine.lastTrial?.firstIndicationStation == 0)
        #expect(!(d.machine.lastTrial?.indicated(2) ?? true))
    }

    @Test func continueLetsTheDogBeClickedAtTheTargetAndStillScoresAFalseAlert() throws {
        let c = try configuration(program(mode: "double-blind", after: "continue"))
        #expect(!c.endOnFalseAlert)
        let d = falseAlertThenTarget(c)
        #expect(d.clicks.count == 1)
        if case .click(let station, _, let automatic) = d.clicks.first {
            #expect(station == 2 && automatic)
        }
        #expect(d.outcomes == [.falseAlert])
        #expect(d.machine.lastTrial?.indicated(0) == true && d.machine.lastTrial?.indicated(2) == true)
    }

    @Test func aBadValueOrATrainerLedStepIsRefusedNamingTheKey() {
        for text in [program(mode: "automated", after: "maybe"), program(mode: "trainer-led", after: "end")] {
            do {
                _ = try Program.parse(toml: text, source: "rule.toml")
                Issue.record("accepted: \(text)")
            } catch {
                #expect("\(error)".contains("after_false_alert"))
            }
        }
    }

    @Test func aTrainerLedHoldAtTheTargetIsRecordedAtTheTarget() {
        var d = Driver(
            LineupMachine.Configuration(
                mode: .trainerLed, stationCount: 2, hold: 2 * sec, holdTolerance: 150 * ms,
                exerciseDuration: 10 * sec, exerciseRepeats: 2))
        d.take(d.machine.start(round: TrialLayout(kinds: [.blank, .target], trialIndex: 0), at: 0))
        d.edge(0, true, at: 1 * sec)
        d.edge(0, false, at: 3_500 * ms)
        d.edge(1, true, at: 4 * sec)
        d.edge(1, false, at: 7 * sec)
        d.advance(to: 11 * sec)
        let holds = d.records.compactMap { r -> (Int, Bool)? in
            if case .indication(let station, _, _, let atTarget) = r { (station, atTarget) } else { nil }
        }
        #expect(holds.map(\.0) == [0, 1])
        #expect(holds.map(\.1) == [false, true])
    }
}
