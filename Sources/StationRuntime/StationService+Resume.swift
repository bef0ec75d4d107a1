import Figures
import Foundation
import Logging
import SessionLog
import StationControl
import TrainingEngine

// A session cut short (a crash, a kill, a power cut, a restart) goes on where it stopped
// (docs/trainer.md, "A session cut short"): its block, samples and committed layouts from the
// resume file beside the log; the trial that was running is logged interrupted (aborted, from
// its own events) and never run or scored again; the trials already logged stay.
extension StationService {
    /// At start, under `switching`: the resume file's session, if it is this station's and has
    /// no end in the log. A file whose session has ended is stale and removed; one that cannot
    /// be read is said, and its session is logged interrupted as before.
    func findInterrupted() {
        let path = options.databasePath
        do {
            guard let saved = try ResumableSession.load(forLog: path) else { return }
            var facts = try log.reader.resumeFacts(session: saved.session)
            guard facts.exists, !facts.ended else {
                ResumableSession.remove(forLog: path)
                return
            }
            facts.cutShort = try cutShortTrial(saved, facts)
            interrupted = (saved, facts)
        } catch {
            Log.sessionLog.error(
                "cannot read the session to resume (\(error)): it is logged interrupted and cannot be resumed")
        }
    }

    /// The trial (or round, from 1) that was running when lineupd stopped: the one after the last
    /// logged, when the log has events of it; nil when it stopped between trials.
    func cutShortTrial(_ saved: ResumableSession, _ facts: ResumeFacts) throws -> Int? {
        let next = min(facts.lastTrial, saved.layouts.count)
        guard next < saved.layouts.count else { return nil }
        let events = try log.reader.interruptedTrialEvents(
            session: saved.session, trialId: saved.trialIds[next], trainerLed: saved.mode == .trainerLed)
        return events.isEmpty ? nil : next + 1
    }

    /// Keeps what the session needs to be resumed, before its first trial; a file that cannot
    /// be written costs the resume only, said in the journal and returned as a warning.
    func saveResumable(_ saved: ResumableSession) -> String? {
        var saved = saved
        saved.bootId = Self.bootId
        do {
            try saved.save(forLog: options.databasePath)
            return nil
        } catch {
            let warning = "the session cannot be resumed if lineupd stops during it (\(error))"
            Log.sessionLog.warning("warning: \(warning)")
            return warning
        }
    }

    /// The interrupted session in the trainer's words: who, when, how, and what to do.
    func interruptedWords(_ saved: ResumableSession, _ facts: ResumeFacts) -> String {
        let when = (saved.stoppedWallNs ?? facts.lastEventWallNs).map(Self.clockWords) ?? "an unknown time"
        let how = saved.stoppedWallNs != nil ? "a restart (lineupd was stopped)" : Self.cutShortWords(saved)
        let what = saved.mode == .trainerLed ? "round" : "trial"
        let running = facts.cutShort.map { ", \(what) \($0) was running and will not be scored" } ?? ""
        return "the session with \(saved.dog) was interrupted at \(when) by \(how); \(facts.trialsLogged) of "
            + "\(saved.layouts.count) \(what)(s) are logged\(running): resume it (lineupctl session resume) or end it "
            + "(lineupctl session end)"
    }

    /// How a session was cut short without a word, as far as the boot ids tell: the station went
    /// down (another boot now) or only lineupd did (the same boot).
    static func cutShortWords(_ saved: ResumableSession) -> String {
        guard let then = saved.bootId, let now = bootId else { return "a crash, a kill or a power cut" }
        return then == now ? "a crash or a kill of lineupd" : "a power cut or a reboot of the station"
    }

    /// `HH:mm` today, else `yyyy-MM-dd HH:mm`, in the station's time zone.
    static func clockWords(_ wallNs: Int64) -> String {
        let date = Date(timeIntervalSince1970: Double(wallNs) / 1e9)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = Calendar.current.isDateInToday(date) ? "HH:mm" : "yyyy-MM-dd HH:mm"
        return formatter.string(from: date)
    }

    /// `status` between sessions, while one waits to be resumed.
    func describeInterrupted(into status: inout StationStatus) {
        guard let (saved, facts) = interrupted.map({ ($0.saved, $0.facts) }) else { return }
        let session = saved.session.uuidString.lowercased()
        status.state = .interrupted
        status.activity = interruptedWords(saved, facts)
        status.session = session
        status.dog = saved.dog
        status.mode = saved.mode
        status.step = saved.step
        status.program = saved.program
        status.trials = saved.layouts.count
        status.trialsDone = facts.trialsLogged
        status.interrupted = InterruptedSession(
            session: session, dog: saved.dog, mode: saved.mode, step: saved.step,
            at: (saved.stoppedWallNs ?? facts.lastEventWallNs).map(Self.clockWords) ?? "unknown",
            how: saved.stoppedWallNs != nil
                ? "a restart (lineupd was stopped)" : "\(Self.cutShortWords(saved)) (lineupd stopped without a word)",
            trialsLogged: facts.trialsLogged, trials: saved.layouts.count)
        status.interrupted?.cutShort = facts.cutShort
    }

    /// Ends the interrupted session without resuming it (`session end`, or a new session
    /// started instead), under `switching`. Returns what was said of it.
    @discardableResult
    func endInterrupted(suggestions: String?, why: String) -> String? {
        guard let (saved, facts) = interrupted.map({ ($0.saved, $0.facts) }) else { return nil }
        if let suggestions, !suggestions.isEmpty { appendNote(saved.session, suggestions, kind: .improvement) }
        appendEnd(
            saved.session, .interrupted,
            "lineupd did not end it (a crash, a kill, a power cut or a restart); \(why): "
                + (facts.lastTrial > 0 ? "trials after #\(facts.lastTrial) were not scored" : "no trial was scored"))
        ResumableSession.remove(forLog: options.databasePath)
        interrupted = nil
        broadcast(.sessionEnd(session: saved.session.uuidString.lowercased()))
        return "the session with \(saved.dog) (\(saved.session.uuidString.lowercased().prefix(8))), interrupted, "
            + "was ended without resuming it"
    }

    public func resumeSession() throws(ControlRefusal) -> SessionStarted {
        switching.lock()
        defer { switching.unlock() }
        guard current == nil else {
            throw ControlRefusal(.sessionRunning, "a session is running: there is nothing to resume")
        }
        guard let saved = interrupted?.saved else {
            throw ControlRefusal(
                .noSession, "no session was interrupted: there is nothing to resume (lineupctl session start)")
        }
        let spaceWarning = try checkFreeSpace()
        let facts: ResumeFacts
        do {
            facts = try log.reader.resumeFacts(session: saved.session)
        } catch {
            throw ControlRefusal(.failed, "cannot read the interrupted session from the log: \(error)")
        }
        guard facts.exists, !facts.ended else {
            interrupted = nil
            ResumableSession.remove(forLog: options.databasePath)
            throw ControlRefusal(.noSession, "the interrupted session has ended in the log: there is nothing to resume")
        }
        // A threshold session's procedure, recomputed from the trials logged (issue 38).
        var feed: ThresholdFeed? = nil
        if let threshold = saved.threshold { feed = try resumedThreshold(saved, threshold) }
        // The block goes on after the last trial logged; the one running when lineupd stopped
        // (its events are in the log, its row is not) is logged interrupted, never run again.
        var next = min(facts.lastTrial, saved.layouts.count)
        var cutShort: Int?
        var records: [any AppendableRecord] = []
        if next < saved.layouts.count {
            let events: [InterruptedTrialEvent]
            do {
                events = try log.reader.interruptedTrialEvents(
                    session: saved.session, trialId: saved.trialIds[next], trainerLed: saved.mode == .trainerLed)
            } catch {
                throw ControlRefusal(.failed, "cannot read the interrupted trial's events from the log: \(error)")
            }
            if !events.isEmpty {
                // A threshold trial's target held the dilution its procedure had chosen; the
                // procedure takes the trial as it takes any aborted one (no answer), and the next
                // trial's dilution is committed with it, as the feeder does.
                records = interruptedTrialRecords(
                    saved, index: next, events: events,
                    layout: feed.map { $0.filled(saved.layouts[next], trial: next) })
                if let feed, let row = records.first as? TrialRecord {
                    records += feed.recordTrial(
                        next, trialId: row.id, number: row.number, outcome: .aborted, time: row.ended)
                }
                cutShort = next + 1
                next += 1
            }
        }
        // Where the session goes on, in which boot, and from which levels: monotonic times compare
        // only within one boot, so verify-blinding tells the boots apart by this note
        // (`SessionBoots`), and the re-scorer takes the stations' levels from it, not from before
        // the stop (a nose at a station when the power went is not there now). The levels are the
        // ones the new segment starts from (the idle loop's, carried over), so the idle loop stops
        // first and no edge of the new segment is logged before the note.
        stopSegment(aborting: false)
        let levels = lastDebouncer.map { d in (0..<inputs.stationCount).map { d.level(of: UInt32($0)) } } ?? []
        records.append(
            LoggedEvent(
                kind: .note, sessionId: saved.session,
                detail: EventDetail.encode(
                    ResumedDetail(
                        bootId: SessionRecord.currentBootId(), firstTrial: next + 1,
                        active: levels.indices.filter { levels[$0] }.map { $0 + 1 }))))
        do {
            try writer.commit(records)
        } catch {
            try? startSegment(session: nil, configuration: idleConfiguration, layouts: [], seed: 0)
            throw ControlRefusal(.failed, "cannot write the interrupted trial to the log: \(error)")
        }
        var configuration = saved.configuration
        // The engine numbers a segment's trials by their layouts' places (from 0); the feeder
        // counts on from `firstTrial`.
        let remaining = saved.layouts[next...].enumerated().map { index, layout in
            var local = layout
            local.trialIndex = index
            return local
        }
        // A trainer-led exercise's rounds left: the engine counts its repetitions afresh.
        if saved.mode == .trainerLed { configuration.exerciseRepeats = remaining.count }
        feed?.goOn(from: next)
        do {
            try startSegment(
                session: saved.session, configuration: configuration, layouts: remaining, seed: saved.seed,
                outputMode: saved.outputMode, usedStations: saved.usedStations,
                blind: saved.mode == .doubleBlind && saved.simulatedBlock != true,
                commitments: Array(saved.commitments.dropFirst(next)), firstTrial: next,
                trialIds: Array(saved.trialIds[next...]), threshold: feed)
        } catch {
            try? startSegment(session: nil, configuration: idleConfiguration, layouts: [], seed: 0)
            throw ControlRefusal(.failed, "cannot resume the session: \(error)")
        }
        var program: Program?
        if let name = saved.program { program = try? loadProgram(named: name) }
        current = Current(
            sessionId: saved.session, dog: saved.dog, mode: saved.mode, step: saved.step, trials: saved.layouts.count,
            seed: saved.seed, labels: saved.labels, dogId: saved.dogId, program: program)
        current?.autoStart = saved.autoStart
        current?.firstTrial = next
        interrupted = nil
        var running = saved
        running.stoppedWallNs = nil
        let fileWarning = saveResumable(running)
        let id = saved.session.uuidString.lowercased()
        broadcast(.sessionResume(session: id, dog: saved.dog, trial: next + 1))
        let what = saved.mode == .trainerLed ? "round" : "trial"
        var told = "Session \(id.prefix(8)) with \(saved.dog) resumed: \(facts.trialsLogged) \(what)(s) were logged"
        if let cutShort {
            told += "; \(what) \(cutShort), running when lineupd stopped, is logged interrupted (aborted, not scored)"
        }
        let total = saved.layouts.count
        if let feed, feed.limit.trials.load(ordering: .acquiring) == 0, next < total {
            told += "; its procedure stopped after trial \(next): end the session (lineupctl session end)."
        } else if next >= total {
            told += "; every \(what) of the block has run: end the session (lineupctl session end)."
        } else if saved.mode == .trainerLed {
            told += "; press ready (or `lineupctl ready`) to start repetition \(next + 1) of \(total)."
        } else if saved.autoStart {
            told += "; trial \(next + 1) of \(total) starts by itself once no station is active."
        } else if saved.mode == .doubleBlind {
            told += "; trial \(next + 1) of \(total) waits for ready (the ready button or `lineupctl ready`)."
        } else {
            told += "; load trial \(next + 1) of \(total) (lineupctl layout --assistant), then press ready."
        }
        Log.sessionLog.notice(Logger.Message(stringLiteral: told))
        var started = SessionStarted(session: id, warning: [spaceWarning, fileWarning].compactMap { $0 }.first)
        started.mode = saved.mode
        started.message = told
        return started
    }

    /// The row of the trial (or round) running when lineupd stopped, from its own events: aborted,
    /// with the indications the engine logged in it (a search's indication events; a round's
    /// presses, as the log feeder counts them), and its commitment's opening when double-blind.
    func interruptedTrialRecords(
        _ saved: ResumableSession, index: Int, events: [InterruptedTrialEvent], layout filled: TrialLayout? = nil
    ) -> [any AppendableRecord] {
        let layout = filled ?? saved.layouts[index]
        func number(_ station: Int) -> Int {
            (station < saved.usedStations.count ? saved.usedStations[station] : station) + 1
        }
        let start = events.first { $0.kind == "cue" }?.time ?? events[0].time
        let end = events.map(\.time).max { $0.monoNs < $1.monoNs } ?? start
        let target = layout.targetStation.map(number)
        var indications: [(station: Int, at: Int64)] = []
        var near: [Int: Int] = [:]  // sniffs by station
        var visited: Set<Int> = []
        for event in events {
            let detail = event.detail ?? ""
            switch event.kind {
            case "indication":
                if let s = event.station { indications.append((s, event.time.monoNs)) }
            case "sniff":
                if let s = event.station { near[s, default: 0] += 1 }
            case "edge":
                if let s = event.station { visited.insert(s) }
            case "note" where saved.mode == .trainerLed && detail.contains("\"manual_click\""):
                if let s = event.station ?? target { indications.append((s, event.time.monoNs)) }
            case "note" where saved.mode == .trainerLed && detail.contains("\"error_mark\""):
                if let s = event.station, s != target { indications.append((s, event.time.monoNs)) }
            default:
                break
            }
        }
        let slots = layout.stations.enumerated().map { i, content in
            let station = number(i)
            let first = indications.first { $0.station == station }
            return StationSlot(
                station: station, sampleId: content.sampleID.flatMap(UUID.init(uuidString:)), kind: content.kind,
                seen: StationSeen(
                    visited: first != nil || near[station] != nil || visited.contains(station), indicated: first != nil,
                    firstIndicationNs: first.map { $0.at - start.monoNs }, sniffs: near[station] ?? 0),
                novel: content.novel)
        }
        let how = saved.stoppedWallNs != nil ? "a restart" : Self.cutShortWords(saved)
        let record = TrialRecord(
            id: saved.trialIds[index], sessionId: saved.session, number: index + 1, seed: saved.seed, layout: slots,
            outcome: .aborted, indicatedStation: indications.first?.station,
            latencyNs: indications.first.map { $0.at - start.monoNs }, searchNs: end.monoNs - start.monoNs,
            started: start, ended: end,
            reason: "interrupted: lineupd stopped during it (\(how)); logged when the session was resumed, not scored")
        var records: [any AppendableRecord] = [record]
        if index < saved.salts.count {
            records.append(
                LayoutOpeningRecord(
                    sessionId: saved.session, trialNumber: index + 1, trialId: saved.trialIds[index],
                    salt: saved.salts[index], time: end))
        }
        return records
    }
}

extension StationService {
    /// A threshold session's procedure brought back to where it was (issue 38): made again from
    /// the resume file's rules, ladder, salts and the session's seed (the same catch trials), and
    /// given each logged trial's own outcome in order, as the feeder gave them; each state it
    /// leaves must be the one the log holds, so the next trial's dilution is the one an uncut
    /// session would have had. Anything else is refused: the session is then ended, not resumed.
    func resumedThreshold(_ saved: ResumableSession, _ threshold: ResumableThreshold) throws(ControlRefusal)
        -> ThresholdFeed
    {
        let cannot = "the threshold session cannot be resumed (end it: lineupctl session end)"
        guard let rules = threshold.rules else {
            throw ControlRefusal(.failed, "\(cannot): the resume file does not hold its procedure's rules whole")
        }
        let feed: ThresholdFeed
        let logged: [LoggedProcedureTrial]
        do {
            feed = try ThresholdFeed(
                session: saved.session, procedure: rules, ladder: threshold.ladder, labels: threshold.labels,
                concentrations: threshold.concentrations, trials: threshold.trials, seed: saved.seed,
                blind: saved.mode == .doubleBlind, salts: threshold.salts)
            logged = try log.reader.procedureTrials(session: saved.session)
        } catch {
            throw ControlRefusal(.failed, "\(cannot): \(error)")
        }
        for (index, trial) in logged.enumerated() {
            guard trial.number == index + 1 else {
                throw ControlRefusal(.failed, "\(cannot): trial \(index + 1) is missing from the log")
            }
            let state = feed.replay(trial: index, outcome: trial.outcome)
            guard let state, state == trial.state else {
                throw ControlRefusal(
                    .failed,
                    "\(cannot): trial \(trial.number) (\(trial.outcome.rawValue)) leaves its procedure "
                        + (state.map {
                            "at rung \($0.nextRung.map(String.init) ?? "none"), \($0.reversals) reversal(s)"
                        }
                            ?? "stopped")
                        + ", but the log's row says "
                        + (trial.state.map {
                            "rung \($0.nextRung.map(String.init) ?? "none"), \($0.reversals) reversal(s)"
                        } ?? "nothing (no procedure row)"))
            }
        }
        return feed
    }
}
