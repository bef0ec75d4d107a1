import ProgramFiles
import Testing

@testable import TrainingEngine

/// Trainer-led repetitions are rounds: trials judged by the trainer's buttons, with the nose's
/// station at each press (the project's rule, `LineupMachine.roundOutcome`).
@Suite struct TrainerRoundTests {
    func trainerLed(repeats: Int = 4) -> Driver {
        Driver(
            LineupMachine.Configuration(
                mode: .trainerLed, stationCount: 2, hold: 2 * sec, holdTolerance: 150 * ms,
                exerciseDuration: 10 * sec, exerciseRepeats: repeats))
    }

    /// One round: the target at `target`, the nose at `station` while `presses` happen.
    func round(
        _ d: inout Driver, index: Int, target: Int, at t: Nanoseconds, station: Int?, presses: [Bool]
    ) -> TrialSummary? {
        var kinds: [SampleKind] = [.blank, .blank]
        kinds[target] = .target
        d.advance(to: t)
        d.take(d.machine.start(round: TrialLayout(kinds: kinds, trialIndex: index), at: t))
        #expect(d.machine.activity == .exercise)
        if let station { d.edge(station, true, at: t + 1 * sec) }
        for (i, click) in presses.enumerated() {
            let at = t + 2 * sec + Nanoseconds(i) * 100 * ms
            d.advance(to: at)
            d.take(click ? d.machine.clicker(at: at) : d.machine.errorButton(at: at))
        }
        if let station { d.edge(station, false, at: t + 3 * sec) }
        d.advance(to: t + 11 * sec)
        return d.machine.lastTrial
    }

    @Test func eachRepetitionIsATrialJudgedByTheTrainer() throws {
        var d = trainerLed()
        // A click with the nose at the target: a hit, latency from the round's start.
        let hit = try #require(round(&d, index: 0, target: 1, at: 0, station: 1, presses: [true]))
        #expect(hit.outcome == .hit)
        #expect(hit.trialIndex == 0 && hit.targetStation == 1)
        #expect(hit.indicated(1) && hit.visited(1) && !hit.visited(0))
        #expect(hit.latency == 2 * sec)
        #expect(d.records.contains(.trialEnded(trial: 0, outcome: .hit, at: 10 * sec)))
        // An error press at the other station: a false alert there.
        let wrong = try #require(round(&d, index: 1, target: 0, at: 20 * sec, station: 1, presses: [false]))
        #expect(wrong.outcome == .falseAlert)
        #expect(wrong.indicated(1) && !wrong.indicated(0))
        // An error press at the target (the wrong behaviour there), then a click: not correct.
        let notYet = try #require(round(&d, index: 2, target: 1, at: 40 * sec, station: 1, presses: [false, true]))
        #expect(notYet.outcome == .miss)
        // Nothing pressed: a miss; the visit is still seen.
        let nothing = try #require(round(&d, index: 3, target: 0, at: 60 * sec, station: 0, presses: []))
        #expect(nothing.outcome == .miss)
        #expect(nothing.visited(0) && !nothing.indicated(0))
        #expect(d.outcomes == [.hit, .falseAlert, .miss, .miss])
        #expect(d.machine.activity == .ended)
    }

    @Test func aClickAwayFromEveryStationIsTheTrainersJudgementAtTheTarget() throws {
        // The indication may be one no sensor sees (lying down in front of the container).
        var d = trainerLed()
        let r = try #require(round(&d, index: 0, target: 0, at: 0, station: nil, presses: [true]))
        #expect(r.outcome == .hit)
        #expect(r.indicated(0) && !r.visited(0))
        #expect(r.firstIndicationStation == 0 && r.latency == 2 * sec)
        // The click's own record keeps the station unknown: the sensors did not see it.
        #expect(d.records.contains(.manualClick(station: nil, at: 2 * sec)))
        // An error press too, at no station: not correct (a miss, never a hit).
        let wrong = try #require(round(&d, index: 1, target: 1, at: 20 * sec, station: nil, presses: [true, false]))
        #expect(wrong.outcome == .miss)
    }

    @Test func aClickAtNoStationInARoundWithoutTargetIsAFalseAlert() throws {
        var d = trainerLed()
        d.take(d.machine.start(round: TrialLayout(kinds: [.blank, .blank], trialIndex: 0), at: 0))
        d.take(d.machine.clicker(at: 2 * sec))
        d.advance(to: 11 * sec)
        let r = try #require(d.machine.lastTrial)
        #expect(r.outcome == .falseAlert)
        #expect(r.indicatedMask == 0)  // where the dog indicated is unknown to the sensors
        // Without a click the same round is a correct rejection.
        d.take(d.machine.start(round: TrialLayout(kinds: [.blank, .blank], trialIndex: 1), at: 20 * sec))
        d.advance(to: 31 * sec)
        #expect(d.outcomes == [.falseAlert, .correctRejection])
    }

    /// Issue 32: the nose already at a station when the round starts is part of the round.
    @Test func aNoseAtAStationWhenTheRoundStartsIsAVisitFromTheStart() throws {
        var d = trainerLed()
        d.edge(0, true, at: 0)  // the dog rests at the target's can before the round
        d.take(d.machine.start(round: TrialLayout(kinds: [.target, .blank], trialIndex: 0), at: 1 * sec))
        #expect(d.machine.noseAtStation)
        d.advance(to: 2 * sec)
        d.take(d.machine.clicker(at: 2 * sec))
        #expect(d.records.contains(.manualClick(station: 0, at: 2 * sec)))
        d.edge(0, false, at: 4 * sec)
        d.advance(to: 12 * sec)
        let hit = try #require(d.machine.lastTrial)
        #expect(hit.outcome == .hit && hit.visited(0) && hit.indicated(0))
        // Its hold counts from the round's start, not from the arrival before it.
        #expect(d.records.contains(.indication(station: 0, heldFrom: 1 * sec, at: 3 * sec, atTarget: true)))
        #expect(d.records.contains(.visit(station: 0, from: 1 * sec, to: 4 * sec, indicated: true)))
        // At the blank since before the start, a click there is a false alert at the blank.
        d.edge(1, true, at: 15 * sec)
        d.take(d.machine.start(round: TrialLayout(kinds: [.target, .blank], trialIndex: 1), at: 20 * sec))
        d.advance(to: 21 * sec)
        d.take(d.machine.clicker(at: 21 * sec))
        d.advance(to: 31 * sec)
        let wrong = try #require(d.machine.lastTrial)
        #expect(wrong.outcome == .falseAlert && wrong.indicated(1) && !wrong.indicated(0))
    }

    @Test func theNoseIsAtTheStationActiveLongestAndNeverAtAStuckOne() throws {
        var c = trainerLed().machine.configuration
        c.stuckAfter = 20 * sec
        var d = Driver(c)
        d.edge(1, true, at: 0)  // active 25 s at the start: stuck
        d.edge(0, true, at: 22 * sec)
        d.take(d.machine.start(round: TrialLayout(kinds: [.target, .blank], trialIndex: 0), at: 25 * sec))
        #expect(d.machine.stuckMask == 0b10)
        d.take(d.machine.clicker(at: 26 * sec))
        #expect(d.records.contains(.manualClick(station: 0, at: 26 * sec)))
        d.advance(to: 40 * sec)
        let r = try #require(d.machine.lastTrial)
        #expect(r.outcome == .hit && !r.visited(1))
        // Two trusted stations: the one active longest has the nose.
        var e = trainerLed()
        e.edge(1, true, at: 1 * sec)
        e.edge(0, true, at: 2 * sec)
        e.take(e.machine.start(round: TrialLayout(kinds: [.target, .blank], trialIndex: 0), at: 3 * sec))
        e.take(e.machine.errorButton(at: 4 * sec))
        #expect(e.records.contains(.errorMark(station: 1, at: 4 * sec)))
    }

    @Test func aClickAtTheWrongStationIsAFalseAlertEvenWithAClickAtTheTarget() throws {
        var d = trainerLed()
        d.take(d.machine.start(round: TrialLayout(kinds: [.target, .blank], trialIndex: 0), at: 0))
        d.edge(1, true, at: 1 * sec)
        d.take(d.machine.clicker(at: 2 * sec))
        d.edge(1, false, at: 3 * sec)
        d.edge(0, true, at: 4 * sec)
        d.take(d.machine.clicker(at: 5 * sec))
        d.advance(to: 11 * sec)
        let r = try #require(d.machine.lastTrial)
        #expect(r.outcome == .falseAlert)
        #expect(r.firstIndicationStation == 1)
        #expect(r.indicated(0) && r.indicated(1))
    }

    @Test func anAbortedRoundIsLoggedAborted() throws {
        var d = trainerLed()
        d.take(d.machine.start(round: TrialLayout(kinds: [.target, .blank], trialIndex: 0), at: 0))
        d.take(d.machine.abort(at: 3 * sec))
        #expect(d.outcomes == [.aborted])
        #expect(d.machine.activity == .ended)
    }

    @Test func autoStartBeginsALoadedTrialOnceNoStationIsActive() {
        var c = automated(stations: 2)
        c.autoStart = true
        var d = Driver(c)
        d.edge(0, true, at: 0)  // a paw on station 0
        d.take(d.machine.load(layout: TrialLayout(kinds: [.target, .blank]), at: 1 * sec))
        d.take(d.machine.readyButton(at: 1 * sec))
        #expect(d.machine.activity == .loading)  // refused: station 0 is active
        d.edge(0, false, at: 2 * sec)
        #expect(d.machine.activity == .searching)  // started by itself once clear
        #expect(d.records.contains(.searchStarted(trial: 0, at: 2 * sec)))
    }

    @Test func autoStartBeginsOnceAStuckSensorIsReleased() {
        var c = automated(stations: 2)
        c.autoStart = true
        c.stuckAfter = 10 * sec
        var d = Driver(c)
        d.take(d.machine.load(layout: TrialLayout(kinds: [.target, .blank]), at: 0))
        d.take(d.machine.readyButton(at: 0))
        d.edge(1, true, at: 1 * sec)  // the dog holds at the blank past stuckAfter
        #expect(d.machine.activity == .searching)
        d.advance(to: 12 * sec)
        #expect(d.machine.stuckMask == 0b10)
        d.advance(to: 40 * sec)  // time-out; the interval passes with station 1 still active
        #expect(d.machine.activity == .idle)
        d.take(d.machine.load(layout: TrialLayout(kinds: [.blank, .target], trialIndex: 1), at: 41 * sec))
        d.take(d.machine.readyButton(at: 41 * sec))
        #expect(d.machine.activity == .loading)  // refused: station 1 is active
        d.edge(1, false, at: 42 * sec)  // released: recovered, and the trial goes
        #expect(d.records.contains(.sensorRecovered(station: 1, at: 42 * sec)))
        #expect(d.machine.activity == .searching)
        #expect(d.records.contains(.searchStarted(trial: 1, at: 42 * sec)))
    }

    @Test func autoStartBeginsOnceAStormEndsLow() {
        var c = automated(stations: 2)
        c.autoStart = true
        c.chatterEdges = 4
        var d = Driver(c)
        // A storm on station 0, flagged at its 4th quick edge; then its edges are ignored, its
        // level followed: high when the trial is loaded, so the start is refused.
        for k in 0...4 { d.edge(0, k % 2 == 0, at: 1 * sec + Nanoseconds(k) * 5 * ms) }
        #expect(d.machine.chatterMask == 0b01)
        d.take(d.machine.load(layout: TrialLayout(kinds: [.target, .blank]), at: 1 * sec + 22 * ms))
        d.take(d.machine.readyButton(at: 1 * sec + 22 * ms))
        #expect(d.machine.activity == .loading)
        d.edge(0, false, at: 1 * sec + 25 * ms)  // the storm ends low
        #expect(d.machine.activity == .searching)
    }

    @Test func withoutAutoStartAClearedStationWaitsForThePress() {
        var d = Driver(automated(stations: 2))
        d.edge(0, true, at: 0)
        d.take(d.machine.load(layout: TrialLayout(kinds: [.target, .blank]), at: 1 * sec))
        d.take(d.machine.readyButton(at: 1 * sec))
        d.edge(0, false, at: 2 * sec)
        #expect(d.machine.activity == .loading)
    }

    @Test func readyAutoIsReadFromTheProgramAndRefusedForTrainerLedSteps() throws {
        func program(mode: String, ready: String) -> String {
            """
            name = "rig"
            title = "Olfactometer"
            [[phases]]
            id = "p"
            title = "P"
            [[phases.steps]]
            id = "1"
            title = "S"
            mode = "\(mode)"
            ready = "\(ready)"
            lineup = { stations = 2, targets = 1 }
            [[phases.steps.exercises]]
            id = "1"
            title = "E"
            instruction = "Run."
            """
        }
        let rig = try Program.parse(toml: program(mode: "automated", ready: "auto"), source: "rig.toml")
        #expect(rig.phases[0].steps[0].ready == .auto)
        let c = LineupMachine.Configuration(
            step: rig.phases[0].steps[0], exercise: rig.phases[0].steps[0].exercises[0], stationCount: 2,
            hold: 1 * sec, holdTolerance: 100 * ms)
        #expect(c.autoStart)
        #expect(throws: ProgramError.self) {
            try Program.parse(toml: program(mode: "trainer-led", ready: "auto"), source: "t.toml")
        }
        #expect(throws: ProgramError.self) {
            try Program.parse(toml: program(mode: "automated", ready: "sometimes"), source: "t.toml")
        }
    }
}
