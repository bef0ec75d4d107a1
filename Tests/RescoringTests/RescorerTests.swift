import Rescoring
import Testing

/// The re-scorer's rules on hand-made logs (docs/figures.md, "How the re-scorer decides").
@Suite struct RescorerTests {
    let ms: Int64 = 1_000_000
    let s: Int64 = 1_000_000_000

    func rules(_ mode: ScoringRules.Mode) -> ScoringRules {
        ScoringRules(
            mode: mode, hold: 2 * s, holdTolerance: 150 * ms, searchTimeout: 30 * s, roundLength: 10 * s,
            endOnFalseAlert: false, stuckAfter: 20 * s)
    }

    func row(_ outcome: Verdict, start: Int64, end: Int64, target: Int?, first: Int?, indicated: Set<Int>)
        -> TrialAsLogged
    {
        TrialAsLogged(
            number: 1, startedAt: start, endedAt: end, stations: [1, 2], target: target, outcome: outcome,
            indicatedStation: first, indicated: indicated)
    }

    @Test func aBreakShorterThanTheToleranceKeepsTheHold() {
        let inputs: [LoggedInput] = [
            .start(at: 0), .level(station: 2, active: true, at: 1 * s), .level(station: 2, active: false, at: 2 * s),
            .level(station: 2, active: true, at: 2 * s + 100 * ms), .indication(station: 2, at: 3 * s),
        ]
        let hit = row(.hit, start: 0, end: 3 * s, target: 2, first: 2, indicated: [2])
        #expect(
            Rescorer.verify(LoggedSession(session: "s", rules: rules(.automated), inputs: inputs, trials: [hit]))
                .isEmpty)
        // A break of exactly the tolerance ends the visit: no indication by 3 s.
        var broken = inputs
        broken[3] = .level(station: 2, active: true, at: 2 * s + 150 * ms)
        let found = Rescorer.verify(
            LoggedSession(session: "s", rules: rules(.automated), inputs: broken, trials: [hit]))
        #expect(found.contains { $0.what == "end" })
        #expect(found.contains { $0.what == "indications" })
    }

    @Test func aNoseAtTheBlankBeforeTheRoundIsAFalseAlertWhenClickedAndNoStationIsAHit() {
        let round = rules(.trainerLed)
        let atBlank: [LoggedInput] = [
            .level(station: 1, active: true, at: 0), .start(at: 1 * s), .press(click: true, station: 1, at: 2 * s),
        ]
        let fa = row(.falseAlert, start: 1 * s, end: 11 * s, target: 2, first: 1, indicated: [1])
        #expect(
            Rescorer.verify(
                LoggedSession(
                    session: "s", rules: round, inputs: atBlank + [.indication(station: 1, at: 3 * s)], trials: [fa])
            )
            .isEmpty)
        // The same log scored a miss (the engine before issue 32's fix) is named.
        var miss = fa
        miss.outcome = .miss
        let named = Rescorer.verify(
            LoggedSession(
                session: "abcdef12", rules: round, inputs: atBlank + [.indication(station: 1, at: 3 * s)],
                trials: [miss]))
        #expect(
            named.contains {
                $0.line == "session abcdef12 trial 1: outcome: the log says miss, the re-scorer says false-alert"
            })
        // A click at no station: the trainer's judgement, a hit at the target.
        let nowhere: [LoggedInput] = [.start(at: 0), .press(click: true, station: nil, at: 2 * s)]
        let hit = row(.hit, start: 0, end: 10 * s, target: 2, first: 2, indicated: [2])
        #expect(Rescorer.verify(LoggedSession(session: "s", rules: round, inputs: nowhere, trials: [hit])).isEmpty)
    }
}
