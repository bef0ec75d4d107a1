import StationIO
import Synchronization
import TrainingEngine

/// How a trial ended, as a plain value the hot thread can put in a ring.
enum OutcomeCode: UInt8 {
    case hit, falseAlert, miss, correctRejection, aborted

    init(_ outcome: TrialOutcome) {
        switch outcome {
        case .hit: self = .hit
        case .falseAlert: self = .falseAlert
        case .miss: self = .miss
        case .correctRejection: self = .correctRejection
        case .aborted: self = .aborted
        }
    }

    var outcome: TrialOutcome {
        switch self {
        case .hit: return .hit
        case .falseAlert: return .falseAlert
        case .miss: return .miss
        case .correctRejection: return .correctRejection
        case .aborted: return .aborted
        }
    }
}

/// The end of one trial, copied out of the engine's `TrialSummary` (which holds no references,
/// so copying it allocates nothing).
struct TrialEnd: Equatable {
    var trial: Int
    var outcome: OutcomeCode
    var target: Int  // -1: no target
    var visitedMask: UInt64
    var indicatedMask: UInt64
    var firstStation: Int  // -1: nothing indicated
    var firstAt: UInt64
    var startedAt: UInt64
    var endedAt: UInt64
    /// Stations whose sensor was stuck during the trial.
    var sensorFaultMask: UInt64 = 0
}

/// What the engine asks to be recorded, as plain values: the engine's own `Record` is public
/// and not declared `BitwiseCopyable`, so it cannot go through an `EventRing` as it is. Each
/// note travels in the station's ring as one `HandlerRecord` (a trial's end as two), encoded
/// by `records` and decoded by `EngineNote.Decoder`, so it keeps its place among the edges
/// and clicks.
enum EngineNote: Equatable {
    case searchStarted(trial: Int, at: UInt64)
    case visit(station: Int, from: UInt64, to: UInt64, indicated: Bool)
    case indication(station: Int, heldFrom: UInt64, at: UInt64, atTarget: Bool)
    case cue(trialStart: Bool, at: UInt64)
    /// The engine clicked: at `station` (-1: none), for the edge at `at`; `trainer` when the
    /// trainer's clicker asked (otherwise a hold at the target).
    case clickAsked(station: Int, at: UInt64, trainer: Bool)
    case trialEnded(TrialEnd)
    case interTrialOver(at: UInt64)
    /// The trainer's clicker; station -1 when the dog was at none.
    case manualClick(station: Int, at: UInt64)
    /// The trainer's error button ("no reward").
    case errorMark(station: Int, at: UInt64)
    case exerciseStarted(repetition: Int, at: UInt64)
    case exerciseEnded(repetition: Int, clicks: Int, errors: Int, aborted: Bool, at: UInt64)
    /// A station's sensor looks wrong.
    case sensorFault(SensorFault, station: Int, at: UInt64)
    case sensorRecovered(station: Int, at: UInt64)
}

/// What another thread asks of the engine; taken on the hot thread after `HotLoop.wake()`.
enum EngineCommand: BitwiseCopyable {
    /// The containers are loaded (or, trainer-led, start the exercise): as the ready button.
    /// The engine's answer is published under `ticket` (`EngineSnapshot.answer`).
    case ready(ticket: UInt32)
    /// Stop the trial or exercise in progress, recorded as aborted.
    case abort
}

/// What the engine did with a ready press: the control socket's `ready` reply is this, never
/// a guess.
enum ReadyAnswer: UInt8 {
    /// A trial's search (or a trainer-led round) started; `number` is its number (from 1).
    case started = 1
    /// Loaded during the inter-trial interval: trial `number` starts when the interval is over.
    case startsAfterInterval
    /// Refused: `station` (the engine's) is active, so the trial cannot start.
    case refusedActive
    /// A trial or round is running (`number`): a press now means nothing.
    case running
    /// Every trial of the block has been run.
    case blockComplete
    /// Every repetition of the trainer-led exercise is done.
    case repetitionsDone
    /// The session was stopped.
    case stopped
    /// Refused: the log cannot take writes (a full disk, a read-only card): no trial starts
    /// that could not be recorded.
    case logUnwritable
    /// The last trial is still on its way to the log: trial `number` starts once it is there.
    case startsOnceLogged
}

/// The engine on the hot path: debounced station edges and the ready button step the
/// `LineupMachine`; its deadlines come back through `deadline(now:)`. Everything it needs is
/// made before the loop runs (the block's layouts, the held notes), so handling an edge never
/// allocates; what the log needs leaves through the loop's ring (`records`), in order with the
/// edges and clicks, read by the log feeder's thread.
final class EngineHandler: HotPathHandler, @unchecked Sendable {
    private var machine: LineupMachine
    private let layouts: [TrialLayout]
    private var nextLayout = 0
    /// Lowered by the log feeder when a threshold procedure stops (`ThresholdFeed`); a start
    /// waits for the trial before in the log (`logGate`), so none runs past the stop.
    private let blockLimit: BlockLimit?
    private var available: Int {
        guard let blockLimit else { return layouts.count }
        return min(layouts.count, blockLimit.trials.load(ordering: .acquiring))
    }
    private let stationCount: Int
    private let readyLine: UInt32
    private let clickerLine: UInt32
    private let errorLine: UInt32
    private let trainerLed: Bool
    /// The loop's ring, which the handler's notes share with the edges and clicks; pushed only
    /// on the hot thread (`flushNotes`), or while the loop is stopped (`prime`, `abort`).
    let records: EventRing<StationRecord>
    /// The notes of the decision in progress: held until `afterDecision`, after the hot loop
    /// has pushed the click's record and the input's raw edge, so a click's record comes just
    /// before its ask (the raw edge between them), a trial's end after its click, and an
    /// edge before what it caused. Made before the loop; never grows.
    private let heldNotes: UnsafeMutablePointer<HandlerRecord>
    private static let heldCapacity = 64
    private var heldCount = 0
    let commands = EventRing<EngineCommand>(capacity: 64)
    private(set) var nextDeadline: UInt64 = .max
    private var readyPending = false
    let snapshot = EngineSnapshot()
    /// What the last ready press did (answer, engine station, trial number).
    private var lastReady: (answer: ReadyAnswer, station: Int, number: Int) = (.stopped, -1, 0)
    private var blockedStation = -1
    /// The step's `ready = "auto"`: each trial is loaded and started without a press.
    private let autoStart: Bool
    /// Sound a cue when a trainer-led repetition starts, too (the end cue always sounds).
    private let soundStartCue: Bool
    /// The stations' output lines: each machine station's output index (-1: none), the
    /// driver, what the step does with them, and which are on now.
    private let stationOutputs: [Int]
    private let outputs: (any OutputDriver)?
    private let outputMode: StationOutputs
    private var outputsOn: UInt64 = 0
    /// Each board station line's engine station (-1: unused by the step), made before the loop.
    private let stationOfLine: [Int]
    /// Asked before a trial (or round) starts, with the trials begun so far; nil: always open.
    /// Set before the hot thread starts (StationService); lock-free and allocation-free.
    var logGate: (@Sendable (_ begun: Int) -> LogGate)?
    /// How soon a start held back by the log is tried again (ns).
    static let logRecheck: UInt64 = 100_000_000

    /// Lines the board lacks are `UInt32.max`. `records` is the ring the hot loop pushes into.
    init(
        configuration: LineupMachine.Configuration, layouts: [TrialLayout], records: EventRing<StationRecord>,
        readyLine: UInt32,
        clickerLine: UInt32 = .max, errorLine: UInt32 = .max, soundStartCue: Bool = false,
        outputs: (any OutputDriver)? = nil, stationOutputs: [Int] = [], outputMode: StationOutputs = .none,
        boardStations: Int? = nil, usedStations: [Int]? = nil, blockLimit: BlockLimit? = nil
    ) {
        self.blockLimit = blockLimit
        // The step's stations are board stations `usedStations` (default: the first N); the
        // board's other station lines are unused.
        let used = usedStations ?? Array(0..<configuration.stationCount)
        var lookup = Array(repeating: -1, count: max(boardStations ?? configuration.stationCount, used.count))
        for (station, line) in used.enumerated() where line < lookup.count { lookup[line] = station }
        stationOfLine = lookup
        self.soundStartCue = soundStartCue
        self.outputs = outputs
        self.stationOutputs = stationOutputs
        self.outputMode = outputMode
        machine = LineupMachine(configuration: configuration)
        self.layouts = layouts
        stationCount = configuration.stationCount
        self.readyLine = readyLine
        self.clickerLine = clickerLine
        self.errorLine = errorLine
        trainerLed = configuration.mode == .trainerLed
        autoStart = configuration.autoStart && !trainerLed
        self.records = records
        heldNotes = .allocate(capacity: Self.heldCapacity)
        // Auto start: the first trial goes at the first pass of the loop.
        if autoStart && !layouts.isEmpty { nextDeadline = 0 }
    }

    deinit { heldNotes.deallocate() }

    /// Holds a note for `flushNotes`; a decision that made more than the hold's capacity pushes
    /// the older ones at once (their order kept).
    @inline(__always)
    private func push(_ note: EngineNote) {
        if let leading = note.leadingRecord { hold(leading) }
        hold(note.record)
    }

    @inline(__always)
    private func hold(_ record: HandlerRecord) {
        if heldCount == Self.heldCapacity { flushNotes() }
        (heldNotes + heldCount).initialize(to: record)
        heldCount += 1
    }

    /// The decision's notes into the ring, in the order the engine made them.
    private func flushNotes() {
        for k in 0..<heldCount { records.push(.handler(heldNotes[k])) }
        heldCount = 0
    }

    func handle(_ edge: SensorEdge) -> HotPathDecision {
        if Int(edge.line) < stationOfLine.count {
            let station = stationOfLine[Int(edge.line)]
            // A station the step does not use: its raw edge is logged, the engine never sees it.
            guard station >= 0 else { return .none }
            return take(machine.stationEdge(station: station, present: edge.isActive, at: edge.timestamp))
        }
        guard edge.isActive else { return .none }
        switch edge.line {
        case clickerLine: return take(machine.clicker(at: edge.timestamp))
        case errorLine: return take(machine.errorButton(at: edge.timestamp))
        case readyLine: return ready(at: edge.timestamp)
        default: return .none
        }
    }

    /// The assistant pressed ready: the containers hold the next layout. A press while a trial
    /// or the inter-trial interval runs means nothing (the raw edge is still logged). In a
    /// trainer-led session it starts (or repeats) the exercise.
    private func ready(at t: UInt64) -> HotPathDecision {
        if trainerLed {
            // Each repetition is a round with its own set-up (the layouts, one per repetition).
            // A press during a round means nothing: only a round that begins takes a set-up.
            let wasRunning = machine.activity == .exercise
            if !wasRunning, nextLayout < available, let held = gateClosed(begun: nextLayout) {
                // A round the log could not record never begins; the trainer presses again.
                lastReady = (held, -1, nextLayout + 1)
                return .none
            }
            let round = nextLayout < available ? layouts[nextLayout] : nil
            let decision = take(machine.start(round: round, at: t))
            if !wasRunning && machine.activity == .exercise { nextLayout += 1 }
            switch machine.activity {
            case .exercise: lastReady = (wasRunning ? .running : .started, -1, nextLayout)
            case .ended: lastReady = (nextLayout >= available ? .repetitionsDone : .stopped, -1, nextLayout)
            default: lastReady = (.repetitionsDone, -1, nextLayout)
            }
            return decision
        }
        switch machine.activity {
        case .interTrial where nextLayout < available:
            // Not kept while the log cannot be written (the start would be refused then anyway).
            if gateClosed(begun: 0) == .logUnwritable {
                lastReady = (.logUnwritable, -1, nextLayout + 1)
                return .none
            }
            // Loaded during the inter-trial interval: the trial starts when the interval is over.
            readyPending = true
            lastReady = (.startsAfterInterval, -1, nextLayout + 1)
            return .none
        case .loading:
            // The last start was refused (a station was active): try it again, unless the log
            // cannot record it.
            if gateClosed(begun: 0) == .logUnwritable {
                lastReady = (.logUnwritable, -1, nextLayout)
                return .none
            }
            return started(take(machine.readyButton(at: t)))
        case .idle where nextLayout < available:
            switch gateClosed(begun: nextLayout) {
            case .logUnwritable?:
                // The press is not kept: once the log takes writes, the assistant presses again.
                lastReady = (.logUnwritable, -1, nextLayout + 1)
                return .none
            case .startsOnceLogged?:
                // Kept, and looked at again shortly (the writer cannot wake the hot thread).
                readyPending = true
                lastReady = (.startsOnceLogged, -1, nextLayout + 1)
                nextDeadline = min(nextDeadline, t &+ Self.logRecheck)
                return .none
            default:
                break
            }
            _ = take(machine.load(layout: layouts[nextLayout], at: t))
            nextLayout += 1
            return started(take(machine.readyButton(at: t)))
        case .searching:
            lastReady = (.running, -1, nextLayout)
        case .ended:
            lastReady = (.stopped, -1, nextLayout)
        default:
            lastReady = (.blockComplete, -1, nextLayout)
        }
        return .none
    }

    /// A start went ahead, or a station refused it.
    private func started(_ decision: HotPathDecision) -> HotPathDecision {
        if machine.activity == .searching {
            lastReady = (.started, -1, nextLayout)
        } else {
            blockedStation = machine.firstActiveStation ?? -1
            lastReady = (.refusedActive, blockedStation, nextLayout)
        }
        return decision
    }

    func wokenUp(now: UInt64) -> HotPathDecision {
        var decision = HotPathDecision.none
        commands.drain { command in
            switch command {
            case .ready(let ticket):
                if case .click = ready(at: now) { decision = .click }
                let a = lastReady
                snapshot.answer.store(
                    UInt64(ticket) << 32 | UInt64(a.answer.rawValue) << 24 | UInt64(UInt8(clamping: a.station + 1))
                        << 16
                        | UInt64(UInt16(clamping: a.number)), ordering: .releasing)
            case .abort: _ = take(machine.abort(at: now))
            }
        }
        return decision
    }

    func deadline(now: UInt64) -> HotPathDecision {
        let decision = take(machine.timerFired(at: now))
        if readyPending || autoStart, machine.activity == .idle, nextLayout < available {
            readyPending = false
            if case .click = ready(at: now) {
                nextDeadline = machine.timerDeadline ?? .max
                return .click
            }
        }
        // The machine's own timer is the truth: an auto start refused (a station active)
        // must not leave a deadline in the past, or the loop would spin.
        nextDeadline = machine.timerDeadline ?? .max
        // A start the log holds back (ready = auto, or a press kept until the trial before is
        // logged) is tried again shortly: the log's writer cannot wake the hot thread.
        if readyPending || autoStart, machine.activity == .idle, nextLayout < available,
            gateClosed(begun: nextLayout) != nil
        {
            nextDeadline = min(nextDeadline, now &+ Self.logRecheck)
        }
        return decision
    }

    /// Why the log holds the next start back (nil: it does not).
    @inline(__always)
    private func gateClosed(begun: Int) -> ReadyAnswer? {
        guard let logGate else { return nil }
        switch logGate(begun) {
        case .open: return nil
        case .behind: return .startsOnceLogged
        case .unwritable: return .logUnwritable
        }
    }

    /// Sets the stations' outputs for the machine's activity, after the click: lit while the
    /// containers are to be loaded, or on while the dog searches (`StationOutputs`).
    func afterDecision() {
        flushNotes()
        publish()
        guard let outputs, outputMode != .none else { return }
        let activity = machine.activity
        var wanted = false
        switch outputMode {
        case .none: wanted = false
        case .load:
            wanted =
                trainerLed
                ? (activity == .idle || activity == .exerciseOver) && nextLayout < available
                : activity == .loading || (activity == .idle && nextLayout < available)
        case .search: wanted = activity == .searching || activity == .exercise
        }
        let mask: UInt64 = wanted ? (stationCount >= 64 ? .max : (1 << UInt64(stationCount)) &- 1) : 0
        guard mask != outputsOn else { return }
        var changed = mask ^ outputsOn
        while changed != 0 {
            let station = changed.trailingZeroBitCount
            changed &= changed &- 1
            guard station < stationOutputs.count, stationOutputs[station] >= 0 else { continue }
            outputs.setOutput(stationOutputs[station], active: mask & (1 << UInt64(station)) != 0)
        }
        outputsOn = mask
    }

    /// The engine's state for `status`: after every input, on the hot thread (no allocation).
    func publish() {
        // The one place a refusal is forgotten: a search that started by any path (a ready
        // press, or with auto start the blocking station's release) clears it.
        if machine.activity == .searching { blockedStation = -1 }
        let blocked: UInt64 = blockedStation >= 0 && blockedStation < 64 ? 1 << UInt64(blockedStation) : 0
        snapshot.publish(
            EngineSnapshot.Values(
                activity: machine.activity, begun: nextLayout, endsAt: machine.activityEndsAt ?? 0,
                readyPending: readyPending, noseAtStation: machine.noseAtStation, blockedStation: blockedStation,
                stuck: machine.stuckMask, silent: machine.silentMask, chatter: machine.chatterMask,
                activeAtStart: blocked & machine.activeMask))
    }

    /// Turns every station output off (the segment is ending).
    func outputsOff() {
        guard let outputs else { return }
        for index in stationOutputs where index >= 0 { outputs.setOutput(index, active: false) }
        outputsOn = 0
    }

    /// Tells the engine which station lines are active before the loop runs (called once, on
    /// the thread that made the handler, before the hot thread starts).
    func prime(activeLines: [UInt32], at t: UInt64) {
        for line in activeLines where Int(line) < stationOfLine.count && stationOfLine[Int(line)] >= 0 {
            _ = take(machine.stationEdge(station: stationOfLine[Int(line)], present: true, at: t))
        }
        flushNotes()
        publish()
    }

    /// Ends the trial in progress as aborted. Only once the hot loop has returned: the machine
    /// belongs to the hot thread while it runs.
    func abort(at t: UInt64) {
        _ = take(machine.abort(at: t))
        flushNotes()
        publish()
    }

    @inline(__always)
    private func take(_ actions: Actions) -> HotPathDecision {
        var decision = HotPathDecision.none
        for action in actions {
            switch action {
            case .click(let station, let at, let automatic):
                // One click sounds per decision; its record (pushed by the hot loop before this
                // note is) is the one just before this ask in the ring.
                if case .click = decision { break }
                decision = .click
                push(.clickAsked(station: station ?? -1, at: at, trainer: !automatic))
            case .armTimer(let at): nextDeadline = at
            case .cancelTimer: nextDeadline = .max
            case .cue(let cue, let at):
                switch cue {
                case .trialStart, .trialEnd: push(.cue(trialStart: cue == .trialStart, at: at))
                // The trainer's timer is heard: the end always, the start if the board asks.
                case .exerciseEnd: if case .none = decision { decision = .cue(.exerciseEnd) }
                case .exerciseStart: if soundStartCue, case .none = decision { decision = .cue(.exerciseStart) }
                }
            case .record(let record): note(record)
            }
        }
        return decision
    }

    @inline(__always)
    private func note(_ record: Record) {
        switch record {
        case .searchStarted(let trial, let at):
            push(.searchStarted(trial: trial, at: at))
        case .visit(let station, let from, let to, let indicated):
            push(.visit(station: station, from: from, to: to, indicated: indicated))
        case .indication(let station, let heldFrom, let at, let atTarget):
            push(.indication(station: station, heldFrom: heldFrom, at: at, atTarget: atTarget))
        case .trialEnded(let trial, let outcome, let at):
            var end = TrialEnd(
                trial: trial, outcome: OutcomeCode(outcome), target: -1, visitedMask: 0, indicatedMask: 0,
                firstStation: -1, firstAt: 0, startedAt: at, endedAt: at)
            if let s = machine.lastTrial, s.trialIndex == trial {
                end.target = s.targetStation ?? -1
                end.visitedMask = s.visitedMask
                end.indicatedMask = s.indicatedMask
                end.firstStation = s.firstIndicationStation ?? -1
                end.firstAt = s.firstIndicationAt ?? 0
                end.startedAt = s.searchStartedAt
                end.endedAt = s.endedAt
                end.sensorFaultMask = s.sensorFaultMask
            }
            push(.trialEnded(end))
        case .interTrialOver(let at):
            push(.interTrialOver(at: at))
        case .manualClick(let station, let at):
            push(.manualClick(station: station ?? -1, at: at))
        case .errorMark(let station, let at):
            push(.errorMark(station: station ?? -1, at: at))
        case .exerciseStarted(let repetition, let at):
            push(.exerciseStarted(repetition: repetition, at: at))
        case .exerciseEnded(let repetition, let clicks, let errors, let aborted, let at):
            push(.exerciseEnded(repetition: repetition, clicks: clicks, errors: errors, aborted: aborted, at: at))
        case .sensorFault(let fault, let station, let at):
            push(.sensorFault(fault, station: station, at: at))
        case .sensorRecovered(let station, let at):
            push(.sensorRecovered(station: station, at: at))
        default:
            break
        }
    }
}
