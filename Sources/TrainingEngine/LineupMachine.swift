// Over 500 lines on purpose: the machine's state is private and every input's transition reads
// and changes it, so the transitions stay in one file (its configuration and TrialSummary do not).
//
// The trial state machine, in the manner of swift-nio's pure state machines: a struct with a
// private state; each input is a mutating function answering with actions; the caller does all
// I/O (sound, timers, the log). Time comes in with every input, so tests use virtual time.
//
// Automated and double-blind trials:
//   idle --load--> loading --ready/start--> searching --indication at target--> interTrial --timer--> idle
//                                            searching --time-out--> interTrial (miss / correct rejection)
// Trainer-led exercises:
//   idle --start--> exercise --deadline--> exerciseOver --start--> exercise ... (up to `repeats`) --> ended
// Each repetition of an exercise is a round: a trial whose judge is the trainer (see
// `roundOutcome`). `abort` ends a trial at once (outcome aborted, back to idle) or the exercise
// (its round aborted, ended). With `autoStart`, a loaded trial starts by itself as soon as no
// station is active (rigs whose containers need no reloading).
// The sensors' state when a trial or round starts is part of it (`presentAtStart`): a search
// is refused while any station is active, so it starts with none; a trainer-led round starts
// with the nose where it already is (a dog often stays at the can between rounds).

/// The lineup's brain for one session: trials of an automated block, or a trainer-led exercise.
public struct LineupMachine: Sendable {
    /// What the lineup is doing now, for displays and tests. Not the program's `Phase` (a
    /// stage of training made of steps): that is the trainer's word, this is the machine's.
    public enum Activity: String, Sendable, Hashable {
        case idle, loading, searching
        case interTrial = "inter-trial"
        case exercise
        case exerciseOver = "exercise-over"
        case ended
    }

    private struct Trial: Sendable {
        var index: Int
        var target: Int  // -1: no target
        var startedAt: Nanoseconds = 0
        var deadline: Nanoseconds = 0
        var indicatedMask: UInt64 = 0
        var visitedMask: UInt64 = 0
        var falseAlerts = 0
        var firstAt: Nanoseconds = 0
        var firstStation = -1
        var faultMask: UInt64 = 0
    }

    private struct Run: Sendable {
        var repetition: Int
        var endsAt: Nanoseconds
        var clicks = 0
        var errors = 0
        /// The round as a trial: its target, what the sensors saw, what the trainer judged.
        var trial: Trial
        /// Error presses with the nose at the target or at no station: the round is not correct.
        var errorsNotElsewhere = 0
    }

    private enum State: Sendable {
        case idle
        case loading(Trial)
        case searching(Trial)
        case interTrial(until: Nanoseconds)
        case exercise(Run)
        case exerciseOver(done: Int)
        case ended
    }

    public let configuration: Configuration
    private var state: State = .idle
    private var detector: HoldDetector
    private var armed: Nanoseconds? = nil
    /// The last finished trial, for scoring.
    public private(set) var lastTrial: TrialSummary? = nil

    // Sensor health, kept in every state from the debounced edges (fixed size: no allocation).
    /// Stations whose sensor is active now.
    public private(set) var activeMask: UInt64 = 0
    private var activeSince = InlineArray<64, Nanoseconds>(repeating: 0)
    /// Stations flagged stuck, until they go inactive.
    public private(set) var stuckMask: UInt64 = 0
    /// Trials in a row in which the dog searched and the station was never active.
    private var quietTrials = InlineArray<64, UInt32>(repeating: 0)
    /// Stations reported silent (once, until they are active again).
    public private(set) var silentMask: UInt64 = 0
    /// Stations in a storm (see `SensorFault.chatter`), their last edge and edges in a row.
    public private(set) var chatterMask: UInt64 = 0
    private var lastEdgeAt = InlineArray<64, Nanoseconds>(repeating: 0)
    private var quickEdges = InlineArray<64, UInt32>(repeating: 0)
    private var stationsMask: UInt64 {
        configuration.stationCount >= 64 ? .max : (1 << UInt64(configuration.stationCount)) &- 1
    }

    public init(configuration: Configuration) {
        self.configuration = configuration
        self.detector = HoldDetector(hold: configuration.hold, tolerance: configuration.holdTolerance)
    }

    public var activity: Activity {
        switch state {
        case .idle: return .idle
        case .loading: return .loading
        case .searching: return .searching
        case .interTrial: return .interTrial
        case .exercise: return .exercise
        case .exerciseOver: return .exerciseOver
        case .ended: return .ended
        }
    }

    /// The time the caller's timer should fire, if any.
    public var timerDeadline: Nanoseconds? { armed }

    /// When the activity in progress ends by itself: the search's time-out, the inter-trial
    /// interval's end, or the trainer-led round's end; nil in every other activity.
    public var activityEndsAt: Nanoseconds? {
        switch state {
        case .searching(let trial): return trial.deadline
        case .interTrial(let until): return until
        case .exercise(let run): return run.endsAt
        default: return nil
        }
    }

    /// Whether the dog's nose is at one of the lineup's stations now (a visit in progress).
    public var noseAtStation: Bool { detector.stationPresent != nil }

    /// The lineup's first station whose sensor is active now (the one that refuses a start).
    public var firstActiveStation: Int? {
        let active = activeMask & stationsMask
        return active == 0 ? nil : active.trailingZeroBitCount
    }

    // MARK: Commands

    /// Hands a new trial's layout to the station: the assistant loads the containers.
    public mutating func load(layout: TrialLayout, at t: Nanoseconds) -> Actions {
        var out = Actions()
        switch state {
        case .idle:
            let target = layout.targetStation ?? -1
            state = .loading(Trial(index: layout.trialIndex, target: target < 64 ? target : -1))
            let audience = Audience(.layout, in: configuration.mode)
            out.append(.record(.layoutToLoad(trial: layout.trialIndex, audience: audience)))
        default:
            out.append(.record(.ignored(.loadWhileBusy, at: t)))
        }
        return out
    }

    /// The containers are loaded (the ready button): sound the start cue and begin the search.
    public mutating func readyButton(at t: Nanoseconds) -> Actions {
        var out = Actions()
        guard case .loading(var trial) = state else {
            out.append(.record(.ignored(.readyWithoutTrial, at: t)))
            return out
        }
        // A station already active would read as a nose present from the first instant: the
        // search does not start until it is clear (the assistant is told which).
        let blocked = activeMask & stationsMask
        if blocked != 0 {
            out.append(.record(.sensorFault(.activeAtStart, station: blocked.trailingZeroBitCount, at: t)))
            return out
        }
        trial.startedAt = t
        trial.deadline = t &+ configuration.searchTimeout
        detector.reset()
        state = .searching(trial)
        out.append(.cue(.trialStart, at: t))
        out.append(.record(.searchStarted(trial: trial.index, at: t)))
        presentAtStart(at: t, &out)
        rearm(&out)
        return out
    }

    /// The start command: the same as ready for a loaded trial; starts (or repeats) a
    /// trainer-led exercise.
    public mutating func start(at t: Nanoseconds) -> Actions {
        start(round: nil, at: t)
    }

    /// As `start(at:)`; a trainer-led repetition takes `round` as its set-up (its target is
    /// what the trainer's clicks are judged against). Without one the round has no target.
    public mutating func start(round: TrialLayout?, at t: Nanoseconds) -> Actions {
        switch state {
        case .loading:
            return readyButton(at: t)
        case .idle where configuration.mode == .trainerLed:
            return beginExercise(repetition: 1, round: round, at: t)
        case .exerciseOver(let done):
            return beginExercise(repetition: done + 1, round: round, at: t)
        default:
            var out = Actions()
            out.append(.record(.ignored(.startInThisState, at: t)))
            return out
        }
    }

    /// Stops the trial or exercise at once; an unfinished trial is recorded as aborted.
    public mutating func abort(at t: Nanoseconds) -> Actions {
        var out = Actions()
        switch state {
        case .loading(let trial), .searching(let trial):
            if case .searching = state { visitClosed(detector.close(at: t), &out) }
            finish(trial, outcome: .aborted, at: t, &out, interTrial: false)
        case .exercise(let run):
            visitClosed(detector.close(at: t), &out)
            out.append(
                .record(
                    .exerciseEnded(
                        repetition: run.repetition, clicks: run.clicks, errors: run.errors, aborted: true, at: t
                    )))
            close(run.trial, outcome: .aborted, at: t, &out)
            state = .ended
        default:
            state = .ended
        }
        rearm(&out)
        return out
    }

    // MARK: Inputs from the lineup

    /// A debounced edge at a station: `present` true when the nose arrived, false when it left.
    public mutating func stationEdge(station: Int, present: Bool, at t: Nanoseconds) -> Actions {
        var out = Actions()
        guard station >= 0 && station < configuration.stationCount && station < 64 else {
            out.append(.record(.ignored(.stationOutOfRange, at: t)))
            return out
        }
        let bit: UInt64 = 1 << UInt64(station)
        if isStorm(station: station, present: present, at: t, &out) {
            // A storm that ends low may be what kept a loaded trial from starting.
            if !present { startIfClear(at: t, &out) }
            rearm(&out)
            return out
        }
        if present {
            if activeMask & bit == 0 {
                activeMask |= bit
                activeSince[station] = t
            }
            quietTrials[station] = 0
            silentMask &= ~bit
            // A stuck sensor's edges are not the dog's: no visit, no hold, no click.
            if stuckMask & bit != 0 { return out }
        } else {
            activeMask &= ~bit
            if stuckMask & bit != 0 {
                stuckMask &= ~bit
                out.append(.record(.sensorRecovered(station: station, at: t)))
                // A stuck sensor's release may be what kept a loaded trial from starting.
                startIfClear(at: t, &out)
                rearm(&out)
                return out
            }
            // A start refused because this station was active: with auto start, go now (after
            // what this edge already recorded, as a storm's end: never instead of it).
            if configuration.autoStart, case .loading = state, activeMask & stationsMask == 0 {
                startIfClear(at: t, &out)
                return out
            }
        }
        switch state {
        case .searching(var trial):
            if present { trial.visitedMask |= bit }
            let event =
                present ? detector.arrive(station: station, at: t) : detector.leave(station: station, at: t)
            handle(event, trial: &trial, &out)
        case .exercise(var run):
            // Trainer-led: sniffs and indications are data; only the trainer's button clicks.
            if present {
                run.trial.visitedMask |= bit
                state = .exercise(run)
            }
            let event =
                present ? detector.arrive(station: station, at: t) : detector.leave(station: station, at: t)
            recordOnly(event, target: run.trial.target, &out)
        default:
            return out  // nothing is being watched; the caller logs raw edges itself
        }
        rearm(&out)
        return out
    }

    /// The caller's timer fired (at or after the armed time).
    public mutating func timerFired(at t: Nanoseconds) -> Actions {
        var out = Actions()
        checkStuck(at: t, &out)
        switch state {
        case .searching(var trial):
            // A late timer: a hold that would complete after the search's end does not count.
            handle(detector.expire(at: min(t, trial.deadline)), trial: &trial, &out)
            if case .searching(let current) = state, t >= current.deadline {
                visitClosed(detector.close(at: current.deadline), &out)
                let outcome: TrialOutcome =
                    current.falseAlerts > 0 ? .falseAlert : (current.target >= 0 ? .miss : .correctRejection)
                finish(current, outcome: outcome, at: current.deadline, &out, interTrial: true)
            }
        case .interTrial(let until) where t >= until:
            state = .idle
            out.append(.record(.interTrialOver(at: t)))
        case .exercise(let run):
            recordOnly(detector.expire(at: min(t, run.endsAt)), target: run.trial.target, &out)
            if case .exercise(let run) = state, t >= run.endsAt {
                visitClosed(detector.close(at: run.endsAt), &out)
                out.append(.cue(.exerciseEnd, at: run.endsAt))
                out.append(
                    .record(
                        .exerciseEnded(
                            repetition: run.repetition, clicks: run.clicks, errors: run.errors, aborted: false,
                            at: run.endsAt)))
                close(run.trial, outcome: Self.roundOutcome(run), at: run.endsAt, &out)
                state =
                    run.repetition >= configuration.exerciseRepeats
                    ? .ended : .exerciseOver(done: run.repetition)
            }
        default:
            break
        }
        rearm(&out)
        return out
    }

    /// The trainer's clicker: always clicks at once, attributed to the station the nose is at.
    public mutating func clicker(at t: Nanoseconds) -> Actions {
        var out = Actions()
        let station = detector.stationPresent
        out.append(.click(station: station, triggeredAt: t, automatic: false))
        out.append(.record(.manualClick(station: station, at: t)))
        if case .exercise(var run) = state {
            run.clicks += 1
            if let station, station < 64 {
                judged(station, &run.trial, at: t)
                if station != run.trial.target { run.trial.falseAlerts += 1 }
            } else if run.trial.target >= 0 {
                // The trainer saw an indication no sensor sees (lying down in front of the
                // container): the click is the judgement, at the round's target.
                judged(run.trial.target, &run.trial, at: t)
            } else {
                // A reward in a round with no target: an indication where none is right.
                run.trial.falseAlerts += 1
            }
            state = .exercise(run)
        }
        return out
    }

    /// The trainer's error button: "no reward", attributed like a click.
    public mutating func errorButton(at t: Nanoseconds) -> Actions {
        var out = Actions()
        let station = detector.stationPresent
        out.append(.record(.errorMark(station: station, at: t)))
        if case .exercise(var run) = state {
            run.errors += 1
            if let station, station < 64, station != run.trial.target {
                // A mistake at another station: the dog indicated where the target is not.
                judged(station, &run.trial, at: t)
                run.trial.falseAlerts += 1
            } else {
                run.errorsNotElsewhere += 1
            }
            state = .exercise(run)
        }
        return out
    }

    /// The project's rule for a trainer-led round (the study gives none): the trainer is the
    /// judge, and a click is never a miss. A click or an error press with the nose at a station
    /// other than the target is a false alert there, and so is a click at no station in a round
    /// with no target; otherwise an error press (at the target or at no station) makes the
    /// round not correct; otherwise a click at the target, or at no station (the trainer saw
    /// what no sensor sees), is a hit; otherwise a miss (or, with no target, a correct
    /// rejection). docs/figures.md, "A trainer-led round", is this rule in the trainer's words.
    private static func roundOutcome(_ run: Run) -> TrialOutcome {
        let hasTarget = run.trial.target >= 0
        if run.trial.falseAlerts > 0 { return .falseAlert }
        if run.errorsNotElsewhere > 0 { return hasTarget ? .miss : .falseAlert }
        if hasTarget && run.trial.indicatedMask & (1 << UInt64(run.trial.target)) != 0 { return .hit }
        return hasTarget ? .miss : .correctRejection
    }

    /// The trainer judged `station` indicated (a click, or an error press away from the target).
    private func judged(_ station: Int, _ trial: inout Trial, at t: Nanoseconds) {
        trial.indicatedMask |= 1 << UInt64(station)
        if trial.firstStation < 0 {
            trial.firstStation = station
            trial.firstAt = t
        }
    }

    // MARK: Inside

    private mutating func beginExercise(repetition: Int, round: TrialLayout?, at t: Nanoseconds) -> Actions {
        var out = Actions()
        guard repetition <= configuration.exerciseRepeats else {
            out.append(.record(.ignored(.noMoreRepeats, at: t)))
            return out
        }
        detector.reset()
        let target = round?.targetStation ?? -1
        var trial = Trial(index: round?.trialIndex ?? repetition - 1, target: target < 64 ? target : -1)
        trial.startedAt = t
        trial.deadline = t &+ configuration.exerciseDuration
        state = .exercise(Run(repetition: repetition, endsAt: trial.deadline, trial: trial))
        out.append(.cue(.exerciseStart, at: t))
        out.append(.record(.exerciseStarted(repetition: repetition, at: t)))
        presentAtStart(at: t, &out)
        rearm(&out)
        return out
    }

    /// The one rule for the sensors' state as a search or a round starts: it is part of the
    /// trial. A station active longer than `stuckAfter` is flagged stuck first; every other
    /// active station not in a storm is visited from the start, and the nose is at the one
    /// active longest (the lowest on a tie): a visit from `t`, its hold counted from `t`, so a
    /// click or an error press now is attributed to it. (A search is refused while any station
    /// is active, so it finds none; a trainer-led round takes the dog where it stands.)
    private mutating func presentAtStart(at t: Nanoseconds, _ out: inout Actions) {
        checkStuck(at: t, &out)
        let trusted = activeMask & stationsMask & ~stuckMask & ~chatterMask
        guard trusted != 0 else { return }
        var rest = trusted
        var nose = -1
        while rest != 0 {
            let s = rest.trailingZeroBitCount
            rest &= ~(1 << UInt64(s))
            if nose < 0 || activeSince[s] < activeSince[nose] { nose = s }
        }
        switch state {
        case .searching(var trial):
            trial.visitedMask |= trusted
            state = .searching(trial)
        case .exercise(var run):
            run.trial.visitedMask |= trusted
            state = .exercise(run)
        default:
            return
        }
        // The detector was just reset: arriving ends no visit.
        _ = detector.arrive(station: nose, at: t)
    }

    /// With auto start, a loaded trial refused for an active station starts as soon as none
    /// is, whatever cleared the last one (the dog, a stuck sensor's release, a storm ending low).
    private mutating func startIfClear(at t: Nanoseconds, _ out: inout Actions) {
        guard configuration.autoStart, case .loading = state, activeMask & stationsMask == 0 else { return }
        for action in readyButton(at: t) { out.append(action) }
    }

    /// The hot path: an indication at the target clicks first, then everything else.
    private mutating func handle(
        _ event: HoldDetector.Event, trial: inout Trial, _ out: inout Actions
    ) {
        switch event {
        case .none:
            state = .searching(trial)
        case .visitEnded:
            state = .searching(trial)
            visitClosed(event, &out)
        case .indication(let station, let heldFrom, let at):
            let atTarget = station == trial.target
            let automatic = configuration.mode != .trainerLed
            if atTarget && automatic {
                out.append(.click(station: station, triggeredAt: at, automatic: true))
            }
            out.append(
                .record(.indication(station: station, heldFrom: heldFrom, at: at, atTarget: atTarget)))
            trial.indicatedMask |= 1 << UInt64(station)
            if trial.firstStation < 0 {
                trial.firstStation = station
                trial.firstAt = at
            }
            if atTarget {
                visitClosed(detector.close(at: at), &out)
                finish(
                    trial, outcome: trial.falseAlerts > 0 ? .falseAlert : .hit, at: at, &out, interTrial: true
                )
            } else {
                trial.falseAlerts += 1
                if configuration.endOnFalseAlert {
                    visitClosed(detector.close(at: at), &out)
                    finish(trial, outcome: .falseAlert, at: at, &out, interTrial: true)
                } else {
                    state = .searching(trial)
                }
            }
        }
    }

    /// A trainer-led round: the hold is recorded against the round's target (-1: none); the
    /// trainer's button is what clicks.
    private func recordOnly(_ event: HoldDetector.Event, target: Int, _ out: inout Actions) {
        switch event {
        case .none: break
        case .visitEnded: visitClosed(event, &out)
        case .indication(let station, let heldFrom, let at):
            out.append(
                .record(.indication(station: station, heldFrom: heldFrom, at: at, atTarget: station == target)))
        }
    }

    private func visitClosed(_ event: HoldDetector.Event, _ out: inout Actions) {
        if case .visitEnded(let station, let from, let to, let indicated) = event {
            out.append(.record(.visit(station: station, from: from, to: to, indicated: indicated)))
        }
    }

    /// Flags stations active longer than `stuckAfter` (searching or in an exercise).
    private mutating func checkStuck(at t: Nanoseconds, _ out: inout Actions) {
        guard configuration.stuckAfter > 0 else { return }
        var watching = false
        switch state {
        case .searching, .exercise: watching = true
        default: watching = false
        }
        guard watching else { return }
        var candidates = activeMask & ~stuckMask & stationsMask
        while candidates != 0 {
            let station = candidates.trailingZeroBitCount
            let bit: UInt64 = 1 << UInt64(station)
            candidates &= ~bit
            let since = activeSince[station]
            guard elapsed(from: since, to: t) >= configuration.stuckAfter else { continue }
            stuckMask |= bit
            out.append(.record(.sensorFault(.stuck, station: station, at: since &+ configuration.stuckAfter)))
            if detector.station == station { visitClosed(detector.close(at: t), &out) }
            if case .searching(var trial) = state {
                trial.faultMask |= bit
                state = .searching(trial)
            } else if case .exercise(var run) = state {
                run.trial.faultMask |= bit
                state = .exercise(run)
            }
        }
    }

    /// True when this edge is a storm's, not the dog's: the station is flagged chatter now, or
    /// was, and has not been quiet since. Flagging it closes its visit and gives the visit back
    /// to a station still active (the dog's nose did not leave it for the storm).
    private mutating func isStorm(station: Int, present: Bool, at t: Nanoseconds, _ out: inout Actions) -> Bool {
        guard configuration.chatterEdges > 0 else { return false }
        let bit: UInt64 = 1 << UInt64(station)
        let gap = t &- lastEdgeAt[station]
        lastEdgeAt[station] = t
        if chatterMask & bit != 0 {
            if gap >= configuration.chatterQuiet {
                chatterMask &= ~bit
                quickEdges[station] = 1
                out.append(.record(.sensorRecovered(station: station, at: t)))
                return false
            }
            // The level is still followed, so a storm that ends active is seen as such.
            if present {
                if activeMask & bit == 0 { activeSince[station] = t }
                activeMask |= bit
            } else {
                activeMask &= ~bit
            }
            return true
        }
        quickEdges[station] = gap < configuration.chatterGap ? quickEdges[station] &+ 1 : 1
        guard quickEdges[station] >= configuration.chatterEdges else { return false }
        chatterMask |= bit
        // Followed as in the storm: a station that goes active now is active since now.
        if present {
            if activeMask & bit == 0 { activeSince[station] = t }
            activeMask |= bit
        } else {
            activeMask &= ~bit
        }
        out.append(.record(.sensorFault(.chatter, station: station, at: t)))
        var watching = false
        if case .searching(var trial) = state {
            trial.faultMask |= bit
            state = .searching(trial)
            watching = true
        } else if case .exercise = state {
            watching = true
        }
        guard watching else { return true }
        if detector.station == station { visitClosed(detector.close(at: t), &out) }
        // The nose is where a trusted station has been active longest.
        var others = activeMask & ~bit & ~stuckMask & ~chatterMask & stationsMask
        var nose = -1
        while others != 0 {
            let s = others.trailingZeroBitCount
            others &= ~(1 << UInt64(s))
            if nose < 0 || activeSince[s] < activeSince[nose] { nose = s }
        }
        if nose >= 0, detector.stationPresent == nil {
            visitClosed(detector.arrive(station: nose, at: activeSince[nose]), &out)
        }
        return true
    }

    /// The earliest time a station now active would count as stuck, if any.
    private var stuckDeadline: Nanoseconds? {
        guard configuration.stuckAfter > 0 else { return nil }
        var candidates = activeMask & ~stuckMask & stationsMask
        var earliest: Nanoseconds? = nil
        while candidates != 0 {
            let station = candidates.trailingZeroBitCount
            candidates &= ~(1 << UInt64(station))
            let at = activeSince[station] &+ configuration.stuckAfter
            earliest = min(earliest ?? at, at)
        }
        return earliest
    }

    private mutating func finish(
        _ trial: Trial, outcome: TrialOutcome, at t: Nanoseconds, _ out: inout Actions, interTrial: Bool
    ) {
        close(trial, outcome: outcome, at: t, &out)
        if outcome != .aborted { out.append(.cue(.trialEnd, at: t)) }
        state = interTrial ? .interTrial(until: t &+ configuration.interTrialInterval) : .idle
    }

    /// Records a trial (or round) as over: its summary for scoring, and silent sensors.
    private mutating func close(_ trial: Trial, outcome: TrialOutcome, at t: Nanoseconds, _ out: inout Actions) {
        // A station never active in trials where the dog searched: reported once, one station
        // per trial end (the rest at the next), to keep within the fixed action list.
        if outcome != .aborted && trial.visitedMask != 0 && configuration.silentAfterTrials > 0 {
            var reported = false
            for station in 0..<min(configuration.stationCount, 64) {
                let bit: UInt64 = 1 << UInt64(station)
                if trial.visitedMask & bit != 0 {
                    quietTrials[station] = 0
                    continue
                }
                quietTrials[station] &+= 1
                if !reported && silentMask & bit == 0 && quietTrials[station] >= configuration.silentAfterTrials {
                    silentMask |= bit
                    reported = true
                    out.append(.record(.sensorFault(.silent, station: station, at: t)))
                }
            }
        }
        lastTrial = TrialSummary(
            trialIndex: trial.index, stationCount: configuration.stationCount,
            targetStation: trial.target >= 0 ? trial.target : nil, sensorFaultMask: trial.faultMask, outcome: outcome,
            indicatedMask: trial.indicatedMask, visitedMask: trial.visitedMask,
            searchStartedAt: trial.startedAt,
            firstIndicationAt: trial.firstStation >= 0 ? trial.firstAt : nil,
            firstIndicationStation: trial.firstStation >= 0 ? trial.firstStation : nil, endedAt: t)
        out.append(.record(.trialEnded(trial: trial.index, outcome: outcome, at: t)))
    }

    /// Asks for the earliest deadline still needed, only when it changed.
    private mutating func rearm(_ out: inout Actions) {
        var next: Nanoseconds? = nil
        switch state {
        case .searching(let trial):
            next = min(detector.deadline ?? .max, trial.deadline, stuckDeadline ?? .max)
        case .interTrial(let until):
            next = until
        case .exercise(let run):
            next = min(detector.deadline ?? .max, run.endsAt, stuckDeadline ?? .max)
        default:
            next = nil
        }
        guard next != armed else { return }
        armed = next
        if let next { out.append(.armTimer(at: next)) } else { out.append(.cancelTimer) }
    }
}
