import Figures
import Foundation
import Glibc
import SessionLog
import StationControl
import StationIO
import TrainingEngine

/// Translating: the hot loop's records (edges, clicks, unreadable descriptors) and the engine's
/// notes, each into the log's event and a watcher's line.
extension LogFeeder {
    func take(_ record: StationRecord) {
        switch record {
        case .edge(let edge, let acted, let knownAt):
            rawEdges += 1
            logEdge(edge, chatter: !acted, knownAt: knownAt)
        case .settled(let edge, let knownAt):
            // Not a new edge (its raw edge is already logged, as chatter): the level the
            // debouncer settled at, stamped with that edge's kernel time; and when the station
            // learnt it, if after it had decided its timers past the window's end.
            let button = settings.buttons[edge.line]
            submit(
                LoggedEvent(
                    kind: .note, sessionId: settings.sessionId, trialId: trialId,
                    station: button == nil ? Int(edge.line) + 1 : nil, time: time(edge.timestamp),
                    kernelNs: Int64(bitPattern: edge.timestamp), value: edge.isActive ? 1 : 0,
                    detail: EventDetail.encode(
                        SettledDetail(button: button, knownNs: knownAt == 0 ? nil : Int64(bitPattern: knownAt)))))
        case .click, .clickFailed:
            // Its ask follows (after the input's raw edge). A record already held had no ask
            // after it (never, while each click the loop sounds was asked): logged at no
            // station rather than lost.
            if let orphan = heldClick { clickRecord(orphan, station: -1, trialId: trialId) }
            heldClick = record
        case .buzzer:
            break
        case .feeder(let pulse):
            logFeeder(pulse)
        case .handler(let handlerRecord):
            if let note = noteDecoder.note(handlerRecord) { take(note) }
        }
    }

    /// A descriptor the hot loop cannot read: said once in the journal and each of its stations
    /// logged as a fault, until it reads again. `status` flags them from the hot loop's own
    /// mask of lines out of service (`HotLoop.linesOutOfService`), not from here.
    func sourceFault(_ fault: EdgeSourceFault) {
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
        case .recovered:
            word = "recovered"
            Log.sensors.notice("\(what) can be read again")
        case .abandoned:
            word = "abandoned"
            Log.sensors.error(
                "\(what) still cannot be read (\(why)): no longer tried; check the wiring, then restart lineupd")
        }
        if fault.kind != .recovered { count(.unreadable) }
        for station in stations {
            submit(
                LoggedEvent(
                    kind: fault.kind == .recovered ? .note : .fault, sessionId: settings.sessionId, trialId: trialId,
                    station: station + 1, time: time(fault.timestamp),
                    detail: EventDetail.encode(FaultDetail(read: word, errno: fault.errno, why: why))),
                fault: fault.kind == .recovered ? nil : StationFault.unreadable.rawValue)
        }
    }

    /// The round's target station (0-based), or -1.
    var currentTarget: Int {
        guard current >= 0 && current < settings.layouts.count else { return -1 }
        return settings.layouts[current].targetStation ?? -1
    }

    /// A trainer's press: which button, and the sample at the nose's station in this round.
    func pressDetail(_ press: PressDetail.Press, station: Int) -> String {
        var sample: String?
        if current >= 0, current < settings.layouts.count, station >= 0,
            station < settings.layouts[current].stations.count
        {
            sample = settings.layouts[current].stations[station].sampleID
        }
        return EventDetail.encode(PressDetail(press: press, sample: sample))
    }

    /// A raw edge: a button's (named, as before typed details), or a station's, marked when the
    /// debouncer took it for chatter.
    func logEdge(_ edge: SensorEdge, chatter: Bool, knownAt: UInt64 = 0) {
        let button = settings.buttons[edge.line]
        let station = button == nil ? Int(edge.line) + 1 : nil
        let ts = Int64(bitPattern: edge.timestamp)
        var detail = button.map { EdgeDetail(button: $0) } ?? (chatter ? EdgeDetail(chatter: true) : nil)
        if knownAt != 0 {
            // Read after the engine had decided past its stamp: when the station learnt it.
            if detail == nil { detail = EdgeDetail() }
            detail?.knownNs = Int64(bitPattern: knownAt)
        }
        submit(
            LoggedEvent(
                kind: station == nil ? .button : .edge, sessionId: settings.sessionId, trialId: trialId,
                station: station, time: time(edge.timestamp), kernelNs: ts, value: edge.isActive ? 1 : 0,
                detail: detail.map(EventDetail.encode)))
    }

    func take(_ note: EngineNote) {
        switch note {
        case .searchStarted(let trial, let at):
            trialFaults.removeAll()
            refusedBy = nil
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
            indicatedTrial.store(current, ordering: .releasing)
            submit(
                LoggedEvent(
                    kind: .indication, sessionId: settings.sessionId, trialId: trialId, station: number(station),
                    time: time(at), durationNs: Int64(bitPattern: at &- heldFrom),
                    detail: EventDetail.encode(IndicationDetail(atTarget: atTarget))))
        case .cue(let trialStart, let at):
            submit(
                LoggedEvent(
                    kind: .cue, sessionId: settings.sessionId, trialId: trialId, time: time(at),
                    detail: EventDetail.encode(CueDetail(cue: trialStart ? "trial-start" : "trial-end"))))
        case .clickAsked(let station, _, let trainer):
            // Its record, if the loop made one (a played or failed click; neither when the
            // station has no audio device), came in the same input, before this ask.
            asks += 1
            var latency: UInt64?
            var failed = false
            if let record = heldClick {
                heldClick = nil
                if case .click(let c) = record { latency = c.handedLatency } else { failed = true }
                clickRecord(record, station: station, trialId: trialId)
            }
            if trialId != nil { roundClicks.append((asks, station, trainer, latency, failed)) }
        case .trialEnded(let end):
            endTrial(end)
        case .interTrialOver:
            intervalsOver.add(1, ordering: .releasing)
        case .manualClick(let station, let at):
            // In a round, the trainer's click at a station is that station's indication; at no
            // station, the round's target's (the engine's rule: the click is the judgement).
            if trialId != nil, station >= 0 {
                observer.indication(station: station, at: at)
            } else if trialId != nil, settings.trainerLed, currentTarget >= 0 {
                observer.indication(station: currentTarget, at: at)
            }
            submit(
                LoggedEvent(
                    kind: .note, sessionId: settings.sessionId, trialId: trialId,
                    station: station >= 0 ? number(station) : nil, time: time(at),
                    detail: pressDetail(.manualClick, station: station)))
        case .errorMark(let station, let at):
            // An error press away from the target: the dog indicated there (a false alert).
            if trialId != nil, station >= 0, station != currentTarget { observer.indication(station: station, at: at) }
            if trialId != nil { roundErrors.append(station) }
            submit(
                LoggedEvent(
                    kind: .note, sessionId: settings.sessionId, trialId: trialId,
                    station: station >= 0 ? number(station) : nil, time: time(at),
                    detail: pressDetail(.errorMark, station: station)))
        case .exerciseStarted(let repetition, let at):
            exercising.store(repetition, ordering: .releasing)
            // Each repetition is a round: a trial of its own, with this round's set-up.
            beginRound(repetition - 1, at: at)
            submit(
                LoggedEvent(
                    kind: .cue, sessionId: settings.sessionId, time: time(at),
                    detail: EventDetail.encode(
                        CueDetail(
                            cue: "exercise-start", repetition: repetition,
                            seconds: Double(settings.roundLength) / 1e9))))
        case .exerciseEnded(let repetition, let clicks, let errors, let aborted, let at):
            submit(
                LoggedEvent(
                    kind: .cue, sessionId: settings.sessionId, time: time(at),
                    detail: EventDetail.encode(
                        CueDetail(
                            cue: "exercise-end", repetition: repetition, clicks: clicks, errors: errors,
                            aborted: aborted))))
            exercising.store(-1, ordering: .releasing)
            roundEndsAt.store(0, ordering: .releasing)
        case .sensorFault(let sensorFault, let station, let at):
            let fault = StationFault(sensorFault)
            count(fault)
            if sensorFault == .activeAtStart {
                refusedBy = station
                refusedStarts.add(1, ordering: .releasing)
            } else {
                trialFaults[station] = fault
            }
            submit(
                LoggedEvent(
                    kind: .fault, sessionId: settings.sessionId, trialId: trialId, station: number(station),
                    time: time(at),
                    detail: EventDetail.encode(FaultDetail(sensor: fault.rawValue))),
                fault: fault.rawValue)
            // One line for the journal and the assistant, in their words.
            let what: String
            switch sensorFault {
            case .activeAtStart: what = "is active: the trial cannot start until it is clear (a lid, a paw, a cable?)"
            case .stuck: what = "has been active far longer than any indication: stuck? Its holds no longer count"
            case .chatter:
                what =
                    "is chattering (edges faster than any nose): ignored until it is quiet; a loose wire or connector?"
            case .silent: what = "has not seen the dog in many searched trials: is its sensor plugged in?"
            }
            Log.sensors.warning("station \(name(station)) \(what)")
        case .sensorRecovered(let station, let at):
            submit(
                LoggedEvent(
                    kind: .note, sessionId: settings.sessionId, trialId: trialId, station: number(station),
                    time: time(at),
                    detail: EventDetail.encode(FaultDetail(sensor: "recovered"))))
        }
    }

    func beginRound(_ trial: Int, at: UInt64) {
        current = trial
        roundEndsAt.store(at &+ settings.roundLength, ordering: .releasing)
        // Watchers see the time the round (or search) has: what `status` counts down.
        settings.watch?(
            .timer(
                trial: settings.firstTrial + trial + 1, secondsLeft: Double(settings.roundLength) / 1e9,
                endsMonoNs: at &+ settings.roundLength))
        visits.removeAll()
        observer.searchStarted(at: at)
        roundClicks.removeAll()
        roundErrors.removeAll()
    }
}
