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

    /// Issue 36: a session resumed after lineupd stopped (a power cut: the monotonic clock starts
    /// again) takes the stations' levels from the resume, not from before it: the nose at
    /// station 2 when the power went is not there in the trial after (the emulated tier's
    /// power-cut run found the re-scorer seeing it hold there at 0.1 s).
    @Test func aResumeTakesTheLevelsItWentOnFrom() {
        let before: Int64 = 500 * s
        var cut = row(.aborted, start: before, end: before + 3 * s, target: 1, first: 2, indicated: [2])
        cut.number = 1
        var next = row(.miss, start: 12 * s, end: 42 * s, target: 1, first: nil, indicated: [])
        next.number = 2
        let inputs: [LoggedInput] = [
            .start(at: before), .level(station: 2, active: true, at: before + 1 * s),
            .indication(station: 2, at: before + 3 * s),
            // The power went with the nose at 2; the next boot's lineupd read no station active.
            .resumed(active: [], at: 10 * s), .start(at: 12 * s),
        ]
        let session = LoggedSession(session: "s", rules: rules(.automated), inputs: inputs, trials: [cut, next])
        #expect(Rescorer.verify(session).isEmpty, "\(Rescorer.verify(session).map(\.line))")
        // A station active as lineupd went on is active from then: held, 2 s after.
        var held = inputs
        held[3] = .resumed(active: [2], at: 10 * s)
        let found = Rescorer.verify(
            LoggedSession(session: "s", rules: rules(.automated), inputs: held, trials: [cut, next]))
        #expect(
            found.contains { $0.trial == 2 && $0.what == "indications" && $0.rescorerSays.contains("2 at 2.000 s") })
    }

    /// A trial cut short is re-scored up to the station's last decision logged in it: a power cut
    /// between the commit of a nose's fall (after its hold fell due) and the commit of the
    /// indication it brought due left the edge and not the indication (the emulated tier's
    /// power-cut run at d2af5cc: "the re-scorer says B, D, E"). A hold missing before a later
    /// logged decision is still found.
    @Test func aTrialCutShortIsRescoredUpToItsLastLoggedDecision() {
        let before: Int64 = 500 * s
        var next = row(.miss, start: 12 * s, end: 42 * s, target: 1, first: nil, indicated: [])
        next.number = 2
        func verify(_ cutInputs: [LoggedInput], _ cut: TrialAsLogged) -> [String] {
            let inputs = cutInputs + [.resumed(active: [], at: 10 * s), .start(at: 12 * s)]
            return Rescorer.verify(
                LoggedSession(session: "s", rules: rules(.automated), inputs: inputs, trials: [cut, next])
            ).map(\.line)
        }
        // The nose at 2 from 1 s; its hold fell due at 3 s; it left at 3.1 s; then the power went.
        let fall: [LoggedInput] = [
            .start(at: before), .level(station: 2, active: true, at: before + 1 * s),
            .level(station: 2, active: false, at: before + 3 * s + 100 * ms),
        ]
        var cut = row(.aborted, start: before, end: before + 3 * s + 100 * ms, target: 1, first: nil, indicated: [])
        cut.number = 1
        #expect(verify(fall, cut).isEmpty, "\(verify(fall, cut))")
        // The same, then an indication at 1 logged after it: the missing one at 2 is found.
        let later =
            fall + [
                .level(station: 1, active: true, at: before + 3 * s + 200 * ms),
                .indication(station: 1, at: before + 5 * s + 200 * ms),
            ]
        var cutLater = row(.aborted, start: before, end: before + 5 * s + 200 * ms, target: 1, first: 1, indicated: [1])
        cutLater.number = 1
        #expect(verify(later, cutLater).contains { $0.contains("indicated stations") }, "\(verify(later, cutLater))")
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

    /// A level settled after chatter is known when the debounce window closes: a hold that
    /// completed before then stands, though the level's own time is earlier (CI's served block
    /// once logged such an indication and the re-scorer, taking the level at its time, did not).
    @Test func aLevelSettledAfterChatterIsKnownWhenItsWindowCloses() {
        var rules = rules(.automated)
        rules.debounce = 5 * ms
        // A visit from 1 s, a 38 ms break from 2.960 s, back at 2.998 s (a window to 3.003 s),
        // gone at 2.999 s inside it: that level is known at 3.003 s, after the hold's 3 s.
        let inputs: [LoggedInput] = [
            .start(at: 0), .level(station: 2, active: true, at: 1 * s),
            .level(station: 2, active: false, at: 2 * s + 960 * ms),
            .level(station: 2, active: true, at: 2 * s + 998 * ms),
            .indication(station: 2, at: 3 * s),
            .settled(station: 2, active: false, at: 2 * s + 999 * ms),
        ]
        let hit = row(.hit, start: 0, end: 3 * s, target: 2, first: 2, indicated: [2])
        #expect(
            Rescorer.verify(LoggedSession(session: "s", rules: rules, inputs: inputs, trials: [hit])).isEmpty)
        // Without the window (a log from before `debounce_ns`), the level is taken at its time.
        var unknown = rules
        unknown.debounce = 0
        let found = Rescorer.verify(LoggedSession(session: "s", rules: unknown, inputs: inputs, trials: [hit]))
        #expect(found.contains { $0.what == "indications" }, "\(found)")
    }

    /// A leaving the station read after it had decided the hold (`known_ns`) does not undo the
    /// hold, though stamped before it: the station could not know it.
    @Test func aLevelReadLateIsTakenWhenTheStationKnewIt() {
        let inputs: [LoggedInput] = [
            .start(at: 0), .level(station: 2, active: true, at: 1 * s), .indication(station: 2, at: 3 * s),
            .level(station: 2, active: false, at: 3 * s - 5 * ms, known: 3 * s),
        ]
        let hit = row(.hit, start: 0, end: 3 * s, target: 2, first: 2, indicated: [2])
        #expect(
            Rescorer.verify(LoggedSession(session: "s", rules: rules(.automated), inputs: inputs, trials: [hit]))
                .isEmpty)
        // Read in its time, the same leaving breaks the hold.
        var inTime = inputs
        inTime[3] = .level(station: 2, active: false, at: 3 * s - 5 * ms)
        let found = Rescorer.verify(
            LoggedSession(session: "s", rules: rules(.automated), inputs: inTime, trials: [hit]))
        #expect(found.contains { $0.what == "indications" }, "\(found)")
    }

    /// A level settled after chatter the station read late (`known_ns`, past the window's end)
    /// does not undo a hold decided before it: the emulated tier's power-cut run (seed 870930,
    /// trial 21) logged a false alert at A at 0.460 s, the nose's first chatter toggle stamped 1 ms
    /// after its arrival, and the re-scorer, settling it when its window closed, said "miss".
    @Test func aLevelSettledLateIsTakenWhenTheStationKnewIt() {
        var rules = rules(.automated)
        rules.debounce = 5 * ms
        let inputs: [LoggedInput] = [
            .start(at: 0), .level(station: 1, active: true, at: 360 * ms),
            .indication(station: 1, at: 2 * s + 360 * ms),
            .settled(station: 1, active: false, at: 361 * ms, known: 2 * s + 365 * ms),
        ]
        let falseAlert = row(.falseAlert, start: 0, end: 30 * s, target: 2, first: 1, indicated: [1])
        #expect(
            Rescorer.verify(LoggedSession(session: "s", rules: rules, inputs: inputs, trials: [falseAlert]))
                .isEmpty)
        // Settled in its time, the same level breaks the hold: a miss with no indication.
        var inTime = inputs
        inTime[3] = .settled(station: 1, active: false, at: 361 * ms)
        let found = Rescorer.verify(LoggedSession(session: "s", rules: rules, inputs: inTime, trials: [falseAlert]))
        #expect(found.contains { $0.what == "outcome" && $0.rescorerSays == "miss" }, "\(found)")
        #expect(found.contains { $0.what == "indications" && $0.rescorerSays == "none" }, "\(found)")
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
