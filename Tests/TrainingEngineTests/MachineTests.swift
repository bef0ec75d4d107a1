import ProgramFiles
import Testing

@testable import TrainingEngine

let ms: Nanoseconds = 1_000_000
let sec: Nanoseconds = 1_000_000_000

/// A small driver: feeds inputs and fires the armed timer whenever time passes it.
struct Driver {
    var machine: LineupMachine
    var log: [Action] = []
    var now: Nanoseconds = 0

    init(_ configuration: LineupMachine.Configuration) {
        machine = LineupMachine(configuration: configuration)
    }

    mutating func take(_ actions: Actions) {
        #expect(!actions.overflowed)
        log.append(contentsOf: actions)
    }

    /// Fires due timers up to `t`, in order, then sets the clock.
    mutating func advance(to t: Nanoseconds) {
        while let d = machine.timerDeadline, d <= t {
            take(machine.timerFired(at: d))
        }
        now = t
    }

    mutating func edge(_ station: Int, _ present: Bool, at t: Nanoseconds) {
        advance(to: t)
        take(machine.stationEdge(station: station, present: present, at: t))
    }

    var records: [Record] { log.compactMap { if case .record(let r) = $0 { r } else { nil } } }
    var clicks: [Action] { log.filter { if case .click = $0 { true } else { false } } }
    var outcomes: [TrialOutcome] {
        records.compactMap { if case .trialEnded(_, let o, _) = $0 { o } else { nil } }
    }
}

func automated(_ mode: TrainingMode = .automated, stations: Int = 3, endOnFalseAlert: Bool = false)
    -> LineupMachine.Configuration
{
    LineupMachine.Configuration(
        mode: mode, stationCount: stations, hold: 2 * sec, holdTolerance: 150 * ms,
        searchTimeout: 30 * sec,
        interTrialInterval: 5 * sec, endOnFalseAlert: endOnFalseAlert)
}

func startTrial(_ d: inout Driver, kinds: [SampleKind], at t: Nanoseconds = 0) {
    d.advance(to: t)
    d.take(d.machine.load(layout: TrialLayout(kinds: kinds), at: t))
    #expect(d.machine.activity == .loading)
    d.take(d.machine.readyButton(at: t))
    #expect(d.machine.activity == .searching)
}

@Suite struct MachineTests {
    @Test func hitClicksAtHoldCompletionAndEndsTrial() {
        var d = Driver(automated())
        startTrial(&d, kinds: [.blank, .target, .blank])
        #expect(d.log.contains(.cue(.trialStart, at: 0)))
        d.edge(1, true, at: 3 * sec)
        d.advance(to: 5 * sec)  // hold timer at 5 s fires
        #expect(d.clicks == [.click(station: 1, triggeredAt: 5 * sec, automatic: true)])
        #expect(d.outcomes == [.hit])
        #expect(d.machine.activity == .interTrial)
        #expect(d.machine.lastTrial?.latency == 5 * sec)
        #expect(d.machine.lastTrial?.indicated(1) == true)
        // The click is the first action of the answer that carries it.
        d.advance(to: 10 * sec)
        #expect(d.machine.activity == .idle)
        #expect(d.records.contains(.interTrialOver(at: 10 * sec)))
    }

    @Test func clickComesFirstInItsAnswer() {
        var m = LineupMachine(configuration: automated())
        _ = m.load(layout: TrialLayout(kinds: [.blank, .target, .blank]), at: 0)
        _ = m.readyButton(at: 0)
        _ = m.stationEdge(station: 1, present: true, at: sec)
        let answer = m.timerFired(at: 3 * sec)
        #expect(answer.count > 1)
        #expect(answer[0] == .click(station: 1, triggeredAt: 3 * sec, automatic: true))
    }

    @Test func sniffJustShortOfHoldIsASniff() {
        var d = Driver(automated())
        startTrial(&d, kinds: [.target, .blank, .blank])
        d.edge(0, true, at: 1 * sec)
        d.edge(0, false, at: 3 * sec - 1)  // T minus 1 ns
        d.advance(to: 4 * sec)
        #expect(d.clicks.isEmpty)
        #expect(
            d.records.contains(.visit(station: 0, from: 1 * sec, to: 3 * sec - 1, indicated: false)))
        #expect(d.machine.activity == .searching)
    }

    @Test func holdOfExactlyTIsAnIndicationEvenIfTheEdgeComesFirst() {
        var d = Driver(automated())
        startTrial(&d, kinds: [.target, .blank, .blank])
        d.edge(0, true, at: 1 * sec)
        // The departure edge at exactly T arrives before the caller fired the timer.
        d.take(d.machine.stationEdge(station: 0, present: false, at: 3 * sec))
        #expect(d.clicks == [.click(station: 0, triggeredAt: 3 * sec, automatic: true)])
        #expect(d.outcomes == [.hit])
    }

    @Test func briefBreakWithinToleranceKeepsTheHold() {
        var d = Driver(automated())
        startTrial(&d, kinds: [.target, .blank, .blank])
        d.edge(0, true, at: 1 * sec)
        d.edge(0, false, at: 2 * sec)
        d.edge(0, true, at: 2 * sec + 149 * ms)
        d.advance(to: 3 * sec)
        #expect(d.outcomes == [.hit])
        #expect(d.clicks.count == 1)
    }

    @Test func breakOfToleranceEndsTheVisit() {
        var d = Driver(automated())
        startTrial(&d, kinds: [.target, .blank, .blank])
        d.edge(0, true, at: 1 * sec)
        d.edge(0, false, at: 2 * sec)
        d.edge(0, true, at: 2 * sec + 150 * ms)
        d.advance(to: 4 * sec)  // new visit from 2.15 s: hold completes at 4.15 s
        #expect(d.outcomes.isEmpty)
        #expect(d.records.contains(.visit(station: 0, from: 1 * sec, to: 2 * sec, indicated: false)))
        d.advance(to: 4 * sec + 150 * ms)
        #expect(d.outcomes == [.hit])
    }

    @Test func holdReachedDuringABreakCompletesOnReturn() {
        var d = Driver(automated())
        startTrial(&d, kinds: [.target, .blank, .blank])
        d.edge(0, true, at: 1 * sec)
        d.edge(0, false, at: 2 * sec + 950 * ms)
        d.advance(to: 3 * sec + 20 * ms)  // T passed while the beam was broken: no indication yet
        #expect(d.clicks.isEmpty)
        d.edge(0, true, at: 3 * sec + 50 * ms)
        #expect(d.clicks == [.click(station: 0, triggeredAt: 3 * sec + 50 * ms, automatic: true)])
    }

    @Test func falseAlertDoesNotClickAndSearchGoesOn() {
        var d = Driver(automated())
        startTrial(&d, kinds: [.control, .target, .control])
        d.edge(0, true, at: 1 * sec)
        d.edge(0, false, at: 4 * sec)
        #expect(d.clicks.isEmpty)
        #expect(
            d.records.contains(.indication(station: 0, heldFrom: 1 * sec, at: 3 * sec, atTarget: false)))
        d.edge(1, true, at: 5 * sec)
        d.advance(to: 8 * sec)
        #expect(d.clicks.count == 1)
        #expect(d.outcomes == [.falseAlert])
        #expect(d.machine.lastTrial?.indicatedMask == 0b011)
        #expect(d.machine.lastTrial?.firstIndicationStation == 0)
    }

    @Test func falseAlertCanEndTheTrial() {
        var d = Driver(automated(endOnFalseAlert: true))
        startTrial(&d, kinds: [.control, .target, .control])
        d.edge(2, true, at: 1 * sec)
        d.advance(to: 3 * sec)
        #expect(d.outcomes == [.falseAlert])
        #expect(d.machine.activity == .interTrial)
    }

    @Test func timeOutWithTargetIsAMiss() {
        var d = Driver(automated())
        startTrial(&d, kinds: [.control, .target, .control])
        d.edge(1, true, at: 1 * sec)
        d.edge(1, false, at: 1 * sec + 500 * ms)
        d.advance(to: 31 * sec)
        #expect(d.outcomes == [.miss])
        #expect(d.log.contains(.cue(.trialEnd, at: 30 * sec)))
        #expect(d.machine.lastTrial?.visited(1) == true)
        #expect(d.machine.lastTrial?.searchTime == 30 * sec)
    }

    @Test func timeOutWithoutTargetIsACorrectRejection() {
        var d = Driver(automated())
        startTrial(&d, kinds: [.control, .control, .control])
        d.advance(to: 31 * sec)
        #expect(d.outcomes == [.correctRejection])
    }

    @Test func abortRecordsAborted() {
        var d = Driver(automated())
        startTrial(&d, kinds: [.control, .target, .control])
        d.edge(1, true, at: 1 * sec)
        d.take(d.machine.abort(at: 1 * sec + 500 * ms))
        #expect(d.outcomes == [.aborted])
        #expect(d.machine.activity == .idle)
        #expect(d.machine.timerDeadline == nil)
    }

    @Test func inputsOutOfStateAreRecordedAsIgnored() {
        var d = Driver(automated())
        d.take(d.machine.readyButton(at: 0))
        #expect(d.records == [.ignored(.readyWithoutTrial, at: 0)])
        startTrial(&d, kinds: [.target, .blank, .blank], at: 1)
        d.take(d.machine.load(layout: TrialLayout(kinds: [.target, .blank, .blank]), at: 2))
        #expect(d.records.last == .ignored(.loadWhileBusy, at: 2))
        d.take(d.machine.stationEdge(station: 7, present: true, at: 3))
        #expect(d.records.last == .ignored(.stationOutOfRange, at: 3))
    }

    @Test func doubleBlindSendsLayoutToAssistantOnly() {
        var d = Driver(automated(.doubleBlind))
        startTrial(&d, kinds: [.control, .target, .control])
        #expect(d.records.first == .layoutToLoad(trial: 0, audience: .assistantOnly))
        let indication = Record.indication(station: 1, heldFrom: 0, at: 1, atTarget: true)
        // The engine's audience is the one rule's (issue 34): where the nose went and how a
        // trial went are withheld from everyone until a double-blind session ends (it said
        // "everyone" for the outcome, which every surface withholds).
        #expect(indication.audience(in: .doubleBlind) == .nobodyUntilItEnds)
        #expect(indication.audience(in: .automated) == .everyone)
        #expect(
            Record.trialEnded(trial: 0, outcome: .hit, at: 0).audience(in: .doubleBlind) == .nobodyUntilItEnds)
        #expect(Record.trialEnded(trial: 0, outcome: .hit, at: 0).audience(in: .trainerLed) == .everyone)
        d.edge(1, true, at: 1 * sec)
        d.advance(to: 3 * sec)
        #expect(d.clicks.count == 1)  // double-blind clicks by itself too
    }

    @Test func trainerLedOnlyTrainerClicksAndAttributesStation() {
        var d = Driver(
            LineupMachine.Configuration(
                mode: .trainerLed, stationCount: 2, hold: 2 * sec, holdTolerance: 150 * ms,
                exerciseDuration: 10 * sec, exerciseRepeats: 2))
        d.take(d.machine.start(at: 0))
        #expect(d.log.contains(.cue(.exerciseStart, at: 0)))
        d.edge(0, true, at: 1 * sec)
        d.advance(to: 4 * sec)  // held 3 s at station 0: an indication, but no automatic click
        #expect(d.clicks.isEmpty)
        d.take(d.machine.clicker(at: 4 * sec))
        #expect(d.clicks == [.click(station: 0, triggeredAt: 4 * sec, automatic: false)])
        d.edge(0, false, at: 5 * sec)
        d.advance(to: 6 * sec)
        d.take(d.machine.clicker(at: 6 * sec))
        #expect(d.records.contains(.manualClick(station: nil, at: 6 * sec)))
        d.take(d.machine.errorButton(at: 7 * sec))
        #expect(d.records.contains(.errorMark(station: nil, at: 7 * sec)))
        d.advance(to: 11 * sec)
        #expect(d.log.contains(.cue(.exerciseEnd, at: 10 * sec)))
        #expect(
            d.records.contains(
                .exerciseEnded(repetition: 1, clicks: 2, errors: 1, aborted: false, at: 10 * sec)))
        #expect(d.machine.activity == .exerciseOver)
        d.take(d.machine.start(at: 20 * sec))
        d.advance(to: 31 * sec)
        #expect(d.machine.activity == .ended)
        d.take(d.machine.start(at: 40 * sec))
        #expect(d.records.last == .ignored(.startInThisState, at: 40 * sec))
    }

    @Test func configurationFromProgramStep() throws {
        let study = try #require(try Program.builtin(named: "study"))
        let step = study.phases[2].steps[1]
        let c = LineupMachine.Configuration(
            step: step, exercise: step.exercises[0], stationCount: 5, hold: 1 * sec,
            holdTolerance: 100 * ms)
        #expect(c.mode == .doubleBlind && c.hold == 2 * sec && c.searchTimeout == 60 * sec)
    }
}
