import Foundation
import Glibc
import SessionLog
import StationIO
import Synchronization
import TrainingEngine

/// The hot loop's one consumer: drains the station's ring (raw edges, clicks) and the engine's
/// note ring, turns them into log events, commits each trial with `commitTrial` and prints its
/// line. Runs on its own thread, so SQLite and stdout never touch the hot path.
public final class LogFeeder: @unchecked Sendable {
    struct Settings {
        /// nil between sessions: edges and the clicker are still logged, to no session.
        var sessionId: UUID?
        var layouts: [TrialLayout]
        var stationNames: [String]
        /// The board stations (0-based) the session uses, in the lineup's order: the engine's
        /// station i is the board's `usedStations[i]`. Empty: all of them, in order.
        var usedStations: [Int] = []
        /// The button lines and their names (`ready`, `clicker`, `error`).
        var buttons: [UInt32: String]
        var blockSeed: UInt64
        /// Print a line per trial on stdout (the simulated station; the journal under systemd).
        var printTrials = true
        /// Trainer-led: each repetition of the exercise is a round, logged as a trial.
        var trainerLed = false
        /// How long a round (trainer-led) or a search (automated) may last, for time left.
        var roundLength: UInt64 = 0
        /// Receives one JSON line per logged event and trial, for `lineupctl watch`.
        var watch: (@Sendable (String) -> Void)? = nil
        /// Double-blind: nothing a handler can read (watch lines and events, the terminal and
        /// the journal) names a station the dog visited, indicated or was clicked at, says
        /// whether it was the target, or gives a trial's outcome, until the session is over.
        /// Any member of the station's group may watch, the handler included, and past trials'
        /// targets tell a handler how the block is laid out (never the same station more than
        /// N times in a row). Faults keep their station: someone must go and clear it. The
        /// log keeps everything; the full trial lines are printed when the session ends.
        var blind = false
    }

    private let settings: Settings
    private let stationRing: EventRing<StationRecord>
    private let notes: EventRing<EngineNote>
    private let recordsReady: Int32
    private let writer: LogWriter
    private let trialIds: [UUID]
    private let wallOffset: Int64

    /// The hot loop's reports of edge descriptors that cannot be read; set before `start()`.
    var sourceFaults: EventRing<EdgeSourceFault>?

    private let finishing = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)
    /// Trials committed so far, and inter-trial intervals over: the assistant's cue to load.
    public let committed = Atomic<Int>(0)
    let intervalsOver = Atomic<Int>(0)
    /// Trainer-led repetitions finished, and the one running now (from 1), or -1.
    let exercisesDone = Atomic<Int>(0)
    let exercising = Atomic<Int>(-1)
    /// The trial the dog is searching now (0-based), or -1: the virtual dog's cue in serve mode.
    let searching = Atomic<Int>(-1)
    /// When the running round or search times out (monotonic ns), or 0: `status`'s time left.
    let roundEndsAt = Atomic<UInt64>(0)

    // Feeder thread only until `finished`; then read by the main thread.
    /// The block's figures, counted by the one implementation (`Tally`) from the same trials
    /// the log receives.
    public private(set) var tally = Tally()
    public private(set) var handedLatencies: [UInt64] = []
    public private(set) var onsetLatencies: [UInt64] = []
    public private(set) var rawEdges = 0
    public private(set) var failure: String?
    /// Double-blind: the full trial lines, printed once the session is over (`revealLines`).
    private(set) var withheldLines: [String] = []
    /// Trials whose commit failed and waited in the writer's spool (written later or lost:
    /// the writer's status says which).
    public private(set) var trialsSpooled = 0
    /// Sensor faults by kind, and the stations flagged now (0-based) with their fault; read
    /// by `status` from the control thread while the feeder runs.
    public let sensorFaults = Mutex<[String: Int]>([:])
    let flaggedStations = Mutex<[Int: String]>([:])
    /// Starts refused because a station was active: the virtual assistant's cue to try again.
    let refusedStarts = Atomic<Int>(0)
    /// The fault each station last had in the trial in progress, for the trial's reason.
    private var trialFaults: [Int: String] = [:]
    /// The station whose activity refused the last start, until a search starts.
    private var refusedBy: Int?

    // The trial in progress, as the feeder sees it.
    private var current = -1
    private var visits: [(station: Int, indicated: Bool)] = []
    /// What each station saw in the trial in progress.
    private var observer: TrialObserver
    /// The clicks the engine asked for and whose record has not come yet, in order: the hot
    /// thread makes exactly one record (played or failed) per click it was asked for, in the
    /// order asked, so the n-th record is the n-th ask's. A click is logged against the trial
    /// and the station of its ask, so the click and its trial come from one reading of the
    /// edges, whichever ring delivers first.
    private var pendingClicks: [(ask: Int, station: Int, trialId: UUID?)] = []
    private var asks = 0
    /// Click records (or failures) that arrived before their ask: the two rings are drained
    /// apart.
    private var earlyClicks: [StationRecord] = []
    /// The trial in progress's clicks, for its line: where, whose, and edge to ALSA (nil:
    /// failed or not yet in).
    private var roundClicks: [(ask: Int, station: Int, trainer: Bool, latency: UInt64?, failed: Bool)] = []
    private var queue: [EngineNote] = []
    private var waitingSince: UInt64 = 0

    init(
        settings: Settings, stationRing: EventRing<StationRecord>, notes: EventRing<EngineNote>,
        recordsReady: Int32, writer: LogWriter
    ) {
        self.settings = settings
        self.stationRing = stationRing
        self.notes = notes
        self.recordsReady = recordsReady
        self.writer = writer
        trialIds = settings.layouts.map { _ in UUID() }
        observer = TrialObserver(
            stationCount: settings.usedStations.isEmpty ? settings.stationNames.count : settings.usedStations.count)
        wallOffset = WallClock.now() &- Int64(bitPattern: MonotonicClock.now())
    }

    func start() {
        let thread = Thread { [self] in self.run() }
        thread.name = "lineup-log-feeder"
        thread.start()
    }

    /// Drains what is left, then stops. Returns once the feeder has finished.
    func finish() {
        finishing.store(true, ordering: .releasing)
        var one: UInt64 = 1
        _ = write(recordsReady, &one, 8)
        while !finished.load(ordering: .acquiring) { usleep(1000) }
    }

    private func run() {
        var pfd = pollfd(fd: recordsReady, events: Int16(POLLIN), revents: 0)
        var value: UInt64 = 0
        while true {
            let last = finishing.load(ordering: .acquiring)
            drainOnce(final: last)
            if last {
                drainOnce(final: true)
                break
            }
            // The hot loop signals after every round that queued anything, engine notes
            // included; the timeout only bounds the wait for a click record (below).
            _ = poll(&pfd, 1, queue.isEmpty ? 1000 : 20)
            _ = read(recordsReady, &value, 8)
        }
        finished.store(true, ordering: .releasing)
    }

    /// One pass over the rings; internal so tests drive the feeder without its thread.
    func drainOnce(final: Bool) {
        // Notes first: a click record pushed after its trial's notes is then seen in this round
        // or the next, and the trial waits for it below.
        notes.drain { queue.append($0) }
        stationRing.drain { take($0) }
        sourceFaults?.drain { sourceFault($0) }
        var k = 0
        while k < queue.count {
            if case .trialEnded = queue[k], let id = trialId, pendingClicks.contains(where: { $0.trialId == id }),
                !final
            {
                // The click record is on its way from the hot thread; give it a moment.
                let now = MonotonicClock.now()
                if waitingSince == 0 { waitingSince = now }
                if now &- waitingSince < 500_000_000 { break }
            }
            waitingSince = 0
            take(queue[k])
            k += 1
        }
        queue.removeFirst(k)
    }

    private func time(_ mono: UInt64) -> LogTime {
        LogTime(monoNs: Int64(bitPattern: mono), wallNs: Int64(bitPattern: mono) &+ wallOffset)
    }

    private var trialId: UUID? { current >= 0 && current < trialIds.count ? trialIds[current] : nil }

    private func submit(_ event: LoggedEvent, watchers extra: [String: String] = [:]) {
        writer.submit(event)
        guard let watch = settings.watch else { return }
        var fields = extra
        fields["kind"] = event.kind.rawValue
        fields["mono_ns"] = "\(event.time.monoNs)"
        // Double-blind: where the dog's nose went (edges, sniffs, indications, the click's
        // station) tells a watching handler where the target is or is not; the log keeps it.
        // A sensor fault keeps its station: someone must go and clear it.
        if let station = event.station, !settings.blind || event.kind == .fault {
            fields["station"] = boardName(station - 1)
        }
        if let value = event.value { fields["value"] = "\(value)" }
        if let d = event.durationNs { fields["duration_ns"] = "\(d)" }
        if let c = event.click { fields["onset_latency_ns"] = "\(c.onsetLatencyNs ?? 0)" }
        // A detail may say whether a hold was at the target or which sample was at the nose:
        // blind watchers get only a cue's and a fault's.
        if let detail = event.detail, !settings.blind || event.kind == .cue || event.kind == .fault {
            fields["detail"] = detail
        }
        if current >= 0 { fields["trial"] = "\(current + 1)" }
        watch(jsonObject(fields))
    }

    private func take(_ record: StationRecord) {
        switch record {
        case .edge(let edge, let acted):
            rawEdges += 1
            if acted { clearFlag(Int(edge.line), active: edge.isActive) }
            logEdge(edge, detail: acted ? nil : #"{"chatter":true}"#)
        case .settled(let edge):
            // Not a new edge (its raw edge is already logged, as chatter): the level the
            // debouncer settled at, stamped with that edge's kernel time.
            let button = settings.buttons[edge.line]
            submit(
                LoggedEvent(
                    kind: .note, sessionId: settings.sessionId, trialId: trialId,
                    station: button == nil ? Int(edge.line) + 1 : nil, time: time(edge.timestamp),
                    kernelNs: Int64(bitPattern: edge.timestamp), value: edge.isActive ? 1 : 0,
                    detail: jsonObject(["settled": "true", "button": button ?? ""])))
        case .click, .clickFailed:
            clickRecord(record)
        case .buzzer:
            break
        }
    }

    /// A click's record (or its failure), logged against the trial and station of the
    /// engine's ask for it; held until the ask is taken if it came first.
    private func clickRecord(_ record: StationRecord) {
        guard !pendingClicks.isEmpty else {
            earlyClicks.append(record)
            return
        }
        let ask = pendingClicks.removeFirst()
        if let r = roundClicks.firstIndex(where: { $0.ask == ask.ask }) {
            if case .click(let c) = record {
                roundClicks[r].latency = c.handedLatency
            } else {
                roundClicks[r].failed = true
            }
        }
        switch record {
        case .click(let c): logClick(c, station: ask.station, trialId: ask.trialId)
        case .clickFailed(let ts, let why):
            submit(
                LoggedEvent(
                    kind: .fault, sessionId: settings.sessionId, trialId: ask.trialId,
                    time: time(MonotonicClock.now()), kernelNs: Int64(bitPattern: ts),
                    detail: jsonObject(["click_failed": "\(why)"])))
        default: break
        }
    }

    /// A click as the log keeps it: at the station the engine asked it for (-1: none).
    private func logClick(_ c: ClickRecord, station: Int, trialId: UUID?) {
        submit(
            LoggedEvent(
                kind: .click, sessionId: settings.sessionId, trialId: trialId,
                station: station >= 0 ? number(station) : nil,
                time: time(c.handedTimestamp), kernelNs: Int64(bitPattern: c.edgeTimestamp),
                click: ClickTiming(
                    edgeNs: Int64(bitPattern: c.edgeTimestamp), handedNs: Int64(bitPattern: c.handedTimestamp),
                    triggerNs: c.triggerTimestamp == 0 ? nil : Int64(bitPattern: c.triggerTimestamp),
                    delayFrames: Int64(c.delayFrames), onsetLatencyNs: Int64(clamping: c.onsetLatency))))
        handedLatencies.append(c.handedLatency)
        onsetLatencies.append(c.onsetLatency)
    }

    /// A descriptor the hot loop cannot read: said once in the journal, each of its stations
    /// flagged (`unreadable`) and logged as a fault, until it reads again.
    private func sourceFault(_ fault: EdgeSourceFault) {
        let lines = (0..<64).filter { fault.lines & (1 << UInt64($0)) != 0 }.map(UInt32.init)
        let names = lines.map { settings.buttons[$0].map { "the \($0) button" } ?? "station \(boardName(Int($0)))" }
        let what = names.isEmpty ? "an input descriptor" : names.joined(separator: ", ")
        let why = String(cString: strerror(fault.errno))
        let stations = lines.filter { settings.buttons[$0] == nil }.map(Int.init)
        let word: String
        switch fault.kind {
        case .failed:
            word = "failed"
            Log.sensors.error("\(what) cannot be read (\(why)): its edges are not seen; retrying")
            flaggedStations.withLock { flagged in for s in stations { flagged[s] = "unreadable" } }
        case .recovered:
            word = "recovered"
            Log.sensors.notice("\(what) can be read again")
            flaggedStations.withLock { flagged in
                for s in stations where flagged[s] == "unreadable" { flagged.removeValue(forKey: s) }
            }
        case .abandoned:
            word = "abandoned"
            Log.sensors.error(
                "\(what) still cannot be read (\(why)): no longer tried; check the wiring, then restart lineupd")
        }
        if fault.kind != .recovered { sensorFaults.withLock { $0["unreadable", default: 0] += 1 } }
        for station in stations {
            submit(
                LoggedEvent(
                    kind: fault.kind == .recovered ? .note : .fault, sessionId: settings.sessionId, trialId: trialId,
                    station: station + 1, time: time(fault.timestamp),
                    detail: jsonObject(["read": word, "errno": "\(fault.errno)", "why": why])),
                watchers: fault.kind == .recovered ? [:] : ["fault": "unreadable"])
        }
    }

    /// The round's target station (0-based), or -1.
    private var currentTarget: Int {
        guard current >= 0 && current < settings.layouts.count else { return -1 }
        return settings.layouts[current].targetStation ?? -1
    }

    /// A trainer's press: which button, and the sample at the nose's station in this round.
    private func pressDetail(_ button: String, station: Int) -> String {
        var fields = [button: "true"]
        if current >= 0, current < settings.layouts.count, station >= 0,
            station < settings.layouts[current].stations.count,
            let sample = settings.layouts[current].stations[station].sampleID
        {
            fields["sample"] = sample
        }
        return jsonObject(fields)
    }

    private func logEdge(_ edge: SensorEdge, detail: String?) {
        let button = settings.buttons[edge.line]
        let station = button == nil ? Int(edge.line) + 1 : nil
        let ts = Int64(bitPattern: edge.timestamp)
        var extra = detail
        if let button { extra = jsonObject(["button": button]) }
        submit(
            LoggedEvent(
                kind: station == nil ? .button : .edge, sessionId: settings.sessionId, trialId: trialId,
                station: station, time: time(edge.timestamp), kernelNs: ts, value: edge.isActive ? 1 : 0,
                detail: extra))
    }

    private func take(_ note: EngineNote) {
        switch note {
        case .searchStarted(let trial, let at):
            trialFaults.removeAll()
            refusedBy = nil
            // The start went ahead: nothing was active at it any more.
            flaggedStations.withLock { flagged in flagged = flagged.filter { $0.value != "active-at-start" } }
            searching.store(trial, ordering: .releasing)
            beginRound(trial, at: at)
        case .visit(let station, let from, let to, let indicated):
            visits.append((station, indicated))
            observer.visit(station: station, from: from, to: to, indicated: indicated)
            if !indicated {
                submit(
                    LoggedEvent(
                        kind: .sniff, sessionId: settings.sessionId, trialId: trialId, station: number(station),
                        time: time(from), durationNs: Int64(bitPattern: to &- from)))
            }
        case .indication(let station, let heldFrom, let at, let atTarget):
            observer.indication(station: station, at: at)
            submit(
                LoggedEvent(
                    kind: .indication, sessionId: settings.sessionId, trialId: trialId, station: number(station),
                    time: time(at), durationNs: Int64(bitPattern: at &- heldFrom),
                    detail: atTarget ? #"{"at_target":true}"# : #"{"at_target":false}"#))
        case .cue(let trialStart, let at):
            submit(
                LoggedEvent(
                    kind: .cue, sessionId: settings.sessionId, trialId: trialId, time: time(at),
                    detail: trialStart ? #"{"cue":"trial-start"}"# : #"{"cue":"trial-end"}"#))
        case .clickAsked(let station, _, let trainer):
            asks += 1
            if trialId != nil { roundClicks.append((asks, station, trainer, nil, false)) }
            pendingClicks.append((asks, station, trialId))
            if !earlyClicks.isEmpty { clickRecord(earlyClicks.removeFirst()) }
        case .trialEnded(let end):
            endTrial(end)
        case .interTrialOver:
            intervalsOver.add(1, ordering: .releasing)
        case .manualClick(let station, let at):
            // In a round, the trainer's click at a station is that station's indication.
            if trialId != nil, station >= 0 { observer.indication(station: station, at: at) }
            submit(
                LoggedEvent(
                    kind: .note, sessionId: settings.sessionId, trialId: trialId,
                    station: station >= 0 ? number(station) : nil, time: time(at),
                    detail: pressDetail("manual_click", station: station)))
        case .errorMark(let station, let at):
            // An error press away from the target: the dog indicated there (a false alert).
            if trialId != nil, station >= 0, station != currentTarget { observer.indication(station: station, at: at) }
            submit(
                LoggedEvent(
                    kind: .note, sessionId: settings.sessionId, trialId: trialId,
                    station: station >= 0 ? number(station) : nil, time: time(at),
                    detail: pressDetail("error_mark", station: station)))
        case .exerciseStarted(let repetition, let at):
            exercising.store(repetition, ordering: .releasing)
            // Each repetition is a round: a trial of its own, with this round's set-up.
            beginRound(repetition - 1, at: at)
            submit(
                LoggedEvent(
                    kind: .cue, sessionId: settings.sessionId, time: time(at),
                    detail: jsonObject([
                        "cue": "exercise-start", "repetition": "\(repetition)",
                        "seconds": "\(Double(settings.roundLength) / 1e9)",
                    ])))
        case .exerciseEnded(let repetition, let clicks, let errors, let aborted, let at):
            submit(
                LoggedEvent(
                    kind: .cue, sessionId: settings.sessionId, time: time(at),
                    detail: jsonObject([
                        "cue": "exercise-end", "repetition": "\(repetition)", "clicks": "\(clicks)",
                        "errors": "\(errors)", "aborted": "\(aborted)",
                    ])))
            exercising.store(-1, ordering: .releasing)
            roundEndsAt.store(0, ordering: .releasing)
        case .sensorFault(let kind, let station, let at):
            let fault = ["active-at-start", "stuck", "silent", "chatter"][Int(min(kind, 3))]
            sensorFaults.withLock { $0[fault, default: 0] += 1 }
            // A start refused by a station already known stuck or stormy keeps the better name.
            flaggedStations.withLock { flagged in
                if kind != 0 || flagged[board(station)] == nil { flagged[board(station)] = fault }
            }
            if kind == 0 {
                refusedBy = station
                refusedStarts.add(1, ordering: .releasing)
            } else {
                trialFaults[station] = fault
            }
            submit(
                LoggedEvent(
                    kind: .fault, sessionId: settings.sessionId, trialId: trialId, station: number(station),
                    time: time(at),
                    detail: jsonObject(["sensor": fault])),
                watchers: ["fault": fault])
            // One line for the journal and the assistant, in their words.
            let what: String
            switch kind {
            case 0: what = "is active: the trial cannot start until it is clear (a lid, a paw, a cable?)"
            case 1: what = "has been active far longer than any indication: stuck? Its holds no longer count"
            case 3:
                what =
                    "is chattering (edges faster than any nose): ignored until it is quiet; a loose wire or connector?"
            default: what = "has not seen the dog in many searched trials: is its sensor plugged in?"
            }
            Log.sensors.warning("station \(name(station)) \(what)")
        case .sensorRecovered(let station, let at):
            flaggedStations.withLock { _ = $0.removeValue(forKey: board(station)) }
            submit(
                LoggedEvent(
                    kind: .note, sessionId: settings.sessionId, trialId: trialId, station: number(station),
                    time: time(at),
                    detail: jsonObject(["sensor": "recovered"])))
        }
    }

    private func beginRound(_ trial: Int, at: UInt64) {
        current = trial
        roundEndsAt.store(at &+ settings.roundLength, ordering: .releasing)
        // Watchers see the time the round (or search) has: what `status` counts down.
        settings.watch?(
            jsonObject([
                "kind": "timer", "trial": "\(trial + 1)", "seconds_left": "\(Double(settings.roundLength) / 1e9)",
                "ends_mono_ns": "\(at &+ settings.roundLength)",
            ]))
        visits.removeAll()
        observer.searchStarted(at: at)
        roundClicks.removeAll()
    }

    private func endTrial(_ end: TrialEnd) {
        searching.store(-1, ordering: .releasing)
        roundEndsAt.store(0, ordering: .releasing)
        guard end.trial >= 0 && end.trial < settings.layouts.count, let sessionId = settings.sessionId else { return }
        let layout = settings.layouts[end.trial]
        let outcome = end.outcome.outcome
        let latency = end.firstStation >= 0 ? Int64(bitPattern: end.firstAt &- end.startedAt) : nil
        // The hot loop's masks are the authority on visits and indications; the notes add
        // times, sniffs and dwell.
        let seen = observer.stations(visitedMask: end.visitedMask, indicatedMask: end.indicatedMask)
        let scored = ScoredTrial(outcome: outcome, latencyNs: latency, layout: layout, seen: seen)
        tally.add(scored)
        let slots = scored.stations.map {
            // The sample that sat in the station: what every statistic by sample rests on.
            StationSlot(
                station: number($0.station - 1), sampleId: $0.sample.flatMap(UUID.init(uuidString:)), kind: $0.kind,
                seen: $0.seen)
        }
        let record = TrialRecord(
            id: trialIds[end.trial], sessionId: sessionId, number: end.trial + 1, seed: settings.blockSeed,
            layout: slots, outcome: outcome, indicatedStation: end.firstStation >= 0 ? number(end.firstStation) : nil,
            latencyNs: latency,
            searchNs: Int64(bitPattern: end.endedAt &- end.startedAt), started: time(end.startedAt),
            ended: time(end.endedAt), reason: reason(end, outcome))
        do {
            try writer.commitTrial(record)
        } catch {
            if case SessionLogError.notYetOnDisk(let reason) = error {
                // Kept in the writer's spool and retried: the station goes on clicking. Said once.
                trialsSpooled += 1
                if trialsSpooled == 1 {
                    Log.sessionLog.warning(
                        "trial \(end.trial + 1) is not on disk yet (\(reason)); the log keeps it in memory and retries")
                }
            } else if failure == nil {
                failure = "committing trial \(end.trial + 1): \(error)"
            }
        }
        printLine(end, layout: layout)
        // A trial that never started has no visits of its own: none may be carried over.
        visits.removeAll()
        current = -1
        committed.add(1, ordering: .releasing)
        // A repetition is done once its round is committed: status and `layout` then agree on
        // which round is next (counting it at the exercise's end raced the commit).
        if settings.trainerLed { exercisesDone.add(1, ordering: .releasing) }
    }

    /// Why a trial needs a second look: aborted, or a sensor stuck or chattering during it.
    private func reason(_ end: TrialEnd, _ outcome: TrialOutcome) -> String? {
        if outcome == .aborted {
            guard let station = refusedBy, current < 0 else { return "the station was stopped" }
            return "sensor fault: never started, station \(name(station)) was active at its start"
        }
        guard end.sensorFaultMask != 0 else { return nil }
        let stations = (0..<64).filter { end.sensorFaultMask & (1 << UInt64($0)) != 0 }.map {
            "\(name($0)) \(trialFaults[$0] == "chatter" ? "chattering" : "stuck")"
        }
        return "sensor fault: station \(stations.joined(separator: ", ")) during the trial"
    }

    /// A trusted edge at a station ends the flags it disproves: silent (it saw something) and
    /// active-at-start (it is clear now).
    private func clearFlag(_ station: Int, active: Bool) {
        flaggedStations.withLock { flagged in
            guard let fault = flagged[station] else { return }
            if (fault == "silent" && active) || (fault == "active-at-start" && !active) {
                flagged.removeValue(forKey: station)
            }
        }
    }

    /// The board station (0-based) behind the engine's station `station`.
    private func board(_ station: Int) -> Int {
        station >= 0 && station < settings.usedStations.count ? settings.usedStations[station] : station
    }

    /// The engine's station as the log numbers it: the board's station, from 1.
    private func number(_ station: Int) -> Int { board(station) + 1 }

    /// The engine's station by the board's name for it.
    private func name(_ station: Int) -> String { boardName(board(station)) }

    private func boardName(_ station: Int) -> String {
        station >= 0 && station < settings.stationNames.count ? settings.stationNames[station] : "\(station + 1)"
    }

    private func printLine(_ end: TrialEnd, layout: TrialLayout) {
        let width = String(settings.layouts.count).count
        let number = String(end.trial + 1)
        let head =
            "trial \(String(repeating: " ", count: max(0, width - number.count)))\(number)/\(settings.layouts.count)"
        let layoutText = layout.stations.enumerated().map { "\(name($0.offset)):\($0.element.kind.rawValue)" }
            .joined(separator: " ")
        let search =
            visits.isEmpty
            ? "no station visited"
            : visits.map { "\(name($0.station)) \($0.indicated ? "held" : "sniff")" }.joined(separator: ", ")
        let indication = end.firstStation >= 0 ? name(end.firstStation) : "none"
        // Each click names where it was given and who asked for it: after a false alert a
        // step may let the dog go on and be clicked at the target (`after_false_alert`), and
        // a trainer may press the clicker in any trial.
        let clickText =
            roundClicks.isEmpty
            ? "no click"
            : roundClicks.map { c in
                let whose = c.trainer ? "trainer's click" : "click"
                let at = c.station >= 0 ? "at \(name(c.station))" : "at no station"
                let how = c.failed ? "FAILED" : c.latency.map { "\($0 / 1000) µs" } ?? "(no record)"
                return "\(whose) \(at) \(how)"
            }.joined(separator: ", ")
        let line =
            "\(head)  \(layoutText)  search: \(search)  indication: \(indication)  \(clickText)  \(end.outcome.outcome.rawValue)"
        guard settings.blind else {
            settings.watch?(jsonObject(["kind": "trial", "line": line]))
            if settings.printTrials { printOut(line) }
            return
        }
        // Double-blind: the trial is over, and that is all a handler may learn of it now.
        let blinded = "\(head)  over (double-blind: its stations and outcome are shown when the session ends)"
        settings.watch?(jsonObject(["kind": "trial", "line": blinded]))
        withheldLines.append(line)
        if settings.printTrials { printOut(blinded) }
    }

    private func printOut(_ line: String) {
        print(line)
        fflush(nil)  // one line per trial, even into a pipe
    }

    /// Double-blind, once the session is over: each trial's full line, for the terminal, the
    /// journal and watchers.
    func revealLines() {
        guard settings.blind, !withheldLines.isEmpty else { return }
        let head = "the double-blind session is over: its \(withheldLines.count) trial(s) in full"
        settings.watch?(jsonObject(["kind": "revealed", "line": head]))
        if settings.printTrials { printOut(head) }
        for line in withheldLines {
            settings.watch?(jsonObject(["kind": "revealed", "line": line]))
            if settings.printTrials { printOut(line) }
        }
        withheldLines.removeAll()
    }
}

/// A JSON object of string values, for the `detail` column.
public func jsonObject(_ fields: [String: String]) -> String {
    let data = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data("{}".utf8)
    return String(decoding: data, as: UTF8.self)
}
