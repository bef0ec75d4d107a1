import Dispatch
import Foundation
import Glibc
import Logging
import SessionLog
import StationConfig
import StationIO
import Synchronization
import TrainingEngine
import VirtualDog

/// `lineupd --simulate`: the station's real threads on a simulated lineup.
///
/// - the hot thread runs `HotLoop` with the engine as its handler and clicks through ALSA;
/// - the log feeder drains the hot loop's rings into the session log and prints each trial;
/// - the dog thread plays the loading assistant (the ready button) and the virtual dog,
///   injecting each raw edge at its planned time;
/// - the main thread waits for the end of the block or a signal, then stops everything in
///   order: dog, hot loop, the trial in progress recorded as aborted, the feeder, the log.
final class SimulatedStation: @unchecked Sendable {
    let plan: BlockPlan
    let databasePath: String
    let realtime: Bool
    private let stopRequested = Atomic<Bool>(false)
    /// Why the virtual assistant gave up (no trial could start), if it did.
    private let blocked = Mutex<String?>(nil)
    private let stopSignal = Atomic<Int32>(0)
    private let wake = DispatchSemaphore(value: 0)

    init(plan: BlockPlan, databasePath: String, realtime: Bool) {
        self.plan = plan
        self.databasePath = databasePath
        self.realtime = realtime
    }

    /// Runs the block; returns the exit status.
    func run() -> Int32 {
        let stationCount = plan.stationCount
        let readyLine = UInt32(stationCount)

        // The log first: the block's samples are registered in it (or found there from an
        // earlier run), so the simulated log shows rounds against samples as a board's does.
        let log: SessionLog
        let samples: [Sample]
        do {
            log = try SessionLog(path: databasePath)
            samples = try registerSimulatedSamples(log)
        } catch {
            Log.station.error("\(error)")
            return 1
        }
        // The block's layouts, made before anything runs: the hot path only indexes them.
        var generator = LayoutGenerator(setup: plan.setup, samples: samples, seed: plan.seed)
        let layouts: [TrialLayout]
        do {
            layouts = try generator.block(count: plan.trials)
        } catch {
            Log.station.error("cannot lay out the block: \(error)")
            return 1
        }

        // A virtual dog and this session, then the writer thread.
        let session: SessionRecord
        do {
            // A block an earlier run did not finish (killed, crashed) is said to be interrupted.
            for found in try log.markInterruptedSessions(station: plan.board.boardName ?? "simulated") {
                Log.sessionLog.warning(
                    Logger.Message(
                        stringLiteral:
                            "session \(found.session.prefix(8)) (\(found.dog), \(found.trials) trial(s) scored) was not ended: "
                            + "logged as interrupted"))
            }
            let (dogId, newDog) = try virtualDog(in: log, notes: "lineupd --simulate")
            session = SessionRecord(
                dogId: dogId, phase: "simulation", mode: .doubleBlind, settings: settingsJSON(),
                station: plan.board.boardName ?? "simulated")
            try log.append((newDog.map { [$0] } ?? []) + [session])
        } catch {
            Log.station.error("\(error)")
            return 1
        }
        let writer = log.makeWriter()

        // The click through the real ALSA library; a machine with no sound card uses `null`.
        let player: ClickPlayer
        do {
            player = try ClickPlayer(audio: plan.board.audio, keepTrying: false)
        } catch {
            var fallback = plan.board.audio
            fallback.device = "null"
            Log.audio.warning(
                "no sound on ALSA device \(plan.board.audio.device) (\(error.message)): clicking into ALSA's null device"
            )
            do {
                player = try ClickPlayer(audio: fallback, keepTrying: false)
            } catch {
                Log.audio.error("cannot open ALSA's null device either: \(error.message)")
                notStarted(log, session, writer)
                return 1
            }
        }

        let lineup: SimulatedLineup
        let loop: HotLoop
        let handler = EngineHandler(configuration: plan.machine, layouts: layouts, readyLine: readyLine)
        let ring = EventRing<StationRecord>(capacity: 1 << 16)
        let ready = makeEventFD()
        guard ready >= 0 else {
            Log.sessionLog.error("cannot make the log feeder's eventfd")
            notStarted(log, session, writer)
            return 1
        }
        defer { close(ready) }
        do {
            lineup = try SimulatedLineup(lineCount: stationCount + 1)
            loop = try HotLoop(
                source: lineup, debouncer: Debouncer(lineCount: stationCount + 1, windowNanoseconds: plan.debounce),
                handler: handler, player: player, records: ring, recordsReady: ready)
        } catch {
            Log.station.error("\(error.message)")
            notStarted(log, session, writer)
            return 1
        }

        let feeder = LogFeeder(
            settings: LogFeeder.Settings(
                sessionId: session.id, layouts: layouts, stationNames: plan.stationNames, buttons: [readyLine: "ready"],
                blockSeed: plan.seed),
            stationRing: ring, notes: handler.notes, recordsReady: ready, writer: writer)
        feeder.start()

        let loopStarted = Atomic<Bool>(false)
        let loopDone = Atomic<Bool>(false)
        let realtimeProblem = Mutex<String?>(nil)
        let wantRealtime = realtime
        let hot = Thread {
            if wantRealtime {
                let problem = HotLoop.makeCurrentThreadRealtime()
                realtimeProblem.withLock { $0 = problem }
            }
            loopStarted.store(true, ordering: .releasing)
            loop.run()
            loopDone.store(true, ordering: .releasing)
        }
        hot.name = "lineup-hot"
        hot.start()
        while !loopStarted.load(ordering: .acquiring) { usleep(1000) }
        if let problem = realtimeProblem.withLock({ $0 }) {
            Log.station.warning("the hot thread runs without real-time priority (\(problem))")
        }

        // Ctrl-C and SIGTERM: the handlers only wake the main thread, which stops in order.
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        var sources: [any DispatchSourceSignal] = []
        for sig in [SIGINT, SIGTERM] {
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { [self] in
                stopSignal.store(sig, ordering: .relaxed)
                stopRequested.store(true, ordering: .releasing)
                wake.signal()
            }
            source.resume()
            sources.append(source)
        }

        print(
            "lineupd: simulated station, \(stationCount) stations, \(plan.trials) trials, seed \(plan.seed), "
                + "dog sensitivity \(plan.sensitivity), false-alert rate \(plan.falseAlertRate), "
                + "\(plan.speed)x real time, click on ALSA \(player.negotiated?.device ?? "?"), log \(databasePath)")
        SystemdNotify.send("READY=1\nSTATUS=simulated block of \(plan.trials) trials running")
        let watchdog = SystemdNotify.startWatchdog {
            loopStarted.load(ordering: .acquiring) && !loopDone.load(ordering: .acquiring)
        }

        let injector = plan.faults.isEmpty ? nil : FaultInjector(faults: plan.faults, lineup: lineup)
        let dogDone = Atomic<Bool>(false)
        let dogThread = Thread { [self] in
            runDog(layouts: layouts, lineup: lineup, readyLine: readyLine, feeder: feeder, faults: injector)
            dogDone.store(true, ordering: .releasing)
            wake.signal()
        }
        dogThread.name = "lineup-virtual-dog"
        dogThread.start()

        wake.wait()
        let gaveUp = blocked.withLock { $0 }
        let stopped = stopRequested.load(ordering: .acquiring) || gaveUp != nil
        if stopped {
            SystemdNotify.send("STOPPING=1\nSTATUS=stopping on signal")
            while !dogDone.load(ordering: .acquiring) { usleep(1000) }
        }
        injector?.stop()
        loop.stop()
        while !loopDone.load(ordering: .acquiring) { usleep(1000) }
        watchdog?.cancel()
        // The hot thread has returned; the engine is ours now. A trial still running is aborted.
        if stopped { handler.abort(at: MonotonicClock.now()) }
        feeder.finish()
        var status: Int32 = 0
        do {
            try writer.flush()
            let name = stopSignal.load(ordering: .relaxed) == SIGINT ? "SIGINT" : "SIGTERM"
            try log.append([
                stopped
                    ? SessionEnd(
                        sessionId: session.id, how: .stopped,
                        detail: gaveUp ?? "stopped by \(name); its running trial is logged aborted")
                    : SessionEnd(sessionId: session.id, how: .ended, detail: "the simulated block finished")
            ])
        } catch {
            Log.station.error("\(error)")
            status = 1
        }
        writer.close()
        // After close: what was still spooled then is counted as lost.
        let writerStatus = writer.status
        for source in sources { source.cancel() }
        if let failure = feeder.failure {
            Log.sessionLog.error("\(failure)")
            status = 1
        }

        if let gaveUp {
            Log.station.error("\(gaveUp)")
            status = 1
        } else if stopped {
            let name = stopSignal.load(ordering: .relaxed) == SIGINT ? "SIGINT" : "SIGTERM"
            print(
                "stopped by \(name) after \(feeder.committed.load(ordering: .acquiring)) trial(s); the log is flushed")
        }
        let figures = feeder.tally.figures
        let scored = figures.results.scored
        print("summary: \(scored) trial(s) scored")
        printFigures(figures)
        let handed = feeder.handedLatencies
        if handed.isEmpty {
            print("  click latency: no clicks")
        } else {
            print(
                "  click latency (edge to samples in ALSA's hands): p50 \(percentile(handed, 50) / 1000) µs, "
                    + "p99 \(percentile(handed, 99) / 1000) µs over \(handed.count) click(s); estimated onset p50 "
                    + "\(percentile(feeder.onsetLatencies, 50) / 1000) µs")
        }
        print(
            "  log: \(feeder.rawEdges) raw edges (\(loop.chatterCount) chatter to the debouncer, "
                + "\(lineup.droppedEdges) dropped by a full lineup), \(writerStatus.written) events written, "
                + "\(writerStatus.overflow) dropped, ring overflows \(ring.overflowCount + handler.notes.overflowCount)"
        )
        let faults = feeder.sensorFaults.withLock { $0 }
        if !faults.isEmpty {
            print(
                "  sensor faults: "
                    + faults.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        if writerStatus.failedWrites > 0 {
            print(
                "  log writes failed \(writerStatus.failedWrites) time(s) (\(writerStatus.lastError ?? "unknown")); "
                    + "\(feeder.trialsSpooled) trial(s) waited in memory; lost for good: \(writerStatus.lost) event(s), "
                    + "\(writerStatus.lostTrials) trial(s), \(writerStatus.lostRecords - writerStatus.lostTrials) other record(s)"
            )
        }
        if writerStatus.lost > 0 || writerStatus.lostRecords > 0 {
            Log.sessionLog.error(
                Logger.Message(
                    stringLiteral:
                        "the session log lost \(writerStatus.lost) event(s) and \(writerStatus.lostTrials) trial(s) "
                        + "(\(writerStatus.lastError ?? "write failed")): free space on the log's disk"))
            status = 1
        }
        print("look at the log:")
        print("  lineupctl sessions --db \(databasePath)")
        print("  lineupctl trials --db \(databasePath)")
        print("  lineupctl export --db \(databasePath) --what trials --format csv")
        return status
    }

    /// The session was logged but its block never ran: say so, then close the log.
    /// The simulated samples: `SIM-T1`, `SIM-T2` (targets) and `SIM-C1`... (two controls per
    /// control station, so they rotate); blanks are clean containers without a sample, as on
    /// a board. Found by label when an earlier run registered them, never added twice.
    private func registerSimulatedSamples(_ log: SessionLog) throws -> [Sample] {
        let setup = plan.setup
        let wanted: [(String, SampleKind)] =
            (1...max(1, setup.targets * 2)).map { ("SIM-T\($0)", SampleKind.target) }
            + (0..<(setup.controls * 2)).map { ("SIM-C\($0 + 1)", SampleKind.control) }
        var known = Dictionary(
            (try log.reader.samples()).map { ($0.label, $0) }, uniquingKeysWith: { first, _ in first })
        var samples: [Sample] = []
        for (label, kind) in wanted {
            if known[label] == nil {
                _ = try log.addSample(
                    SampleRecord(label: label, kind: kind, source: "lineupd --simulate (virtual)"))
                known = Dictionary(
                    (try log.reader.samples()).map { ($0.label, $0) }, uniquingKeysWith: { first, _ in first })
            }
            guard let entry = known[label], entry.kind == kind.rawValue else {
                throw SessionLogError.invalidInput(
                    "the log already has a sample \(label) that is not a \(kind.rawValue): use another --db")
            }
            samples.append(Sample(id: entry.id, kind: kind, usageCount: entry.uses))
        }
        return samples
    }

    private func notStarted(_ log: SessionLog, _ session: SessionRecord, _ writer: LogWriter) {
        try? log.append([SessionEnd(sessionId: session.id, how: .stopped, detail: "the block could not start")])
        writer.close()
    }

    /// The assistant and the dog: for each trial, wait until the previous one is committed and
    /// its interval is over, press ready, and let the dog search, each raw edge at its time.
    /// A start refused this many times in a row (a station active at each) ends the block.
    static let startAttempts = 3

    private func runDog(
        layouts: [TrialLayout], lineup: SimulatedLineup, readyLine: UInt32, feeder: LogFeeder, faults: FaultInjector?
    ) {
        var dog = VirtualDog(parameters: plan.dog, seed: plan.seed ^ 0xD06_D06_D06)
        var edges: [RawEdge] = []
        edges.reserveCapacity(64)
        for (i, layout) in layouts.enumerated() {
            while !stopRequested.load(ordering: .acquiring)
                && (feeder.committed.load(ordering: .acquiring) < i
                    || feeder.intervalsOver.load(ordering: .acquiring) < i)
            {
                usleep(2000)
            }
            if stopRequested.load(ordering: .acquiring) { return }
            var attempt = 0
            while true {
                attempt += 1
                MonotonicClock.sleep(until: MonotonicClock.now() &+ plan.loadingTime)
                let refused = feeder.refusedStarts.load(ordering: .acquiring)
                let start = MonotonicClock.now()
                lineup.inject(line: readyLine, active: true, at: start)
                faults?.searchStarted(trial: i + 1)
                edges.removeAll(keepingCapacity: true)
                dog.search(kinds: layout.kinds, startAt: start, into: &edges)
                edges.append(RawEdge(station: Int(readyLine), present: false, at: start &+ 20_000_000))
                edges.sort { $0.at < $1.at }
                for edge in edges {
                    if stopRequested.load(ordering: .acquiring) { return }
                    MonotonicClock.sleep(until: edge.at)
                    // Stamped as it enters the lineup, as the kernel stamps a real edge.
                    lineup.inject(line: UInt32(edge.station), active: edge.present)
                }
                faults?.searchOver(trial: i + 1)
                while !stopRequested.load(ordering: .acquiring) && feeder.committed.load(ordering: .acquiring) < i + 1
                    && feeder.refusedStarts.load(ordering: .acquiring) == refused
                {
                    usleep(2000)
                }
                if stopRequested.load(ordering: .acquiring) { return }
                if feeder.committed.load(ordering: .acquiring) >= i + 1 { break }
                // The start was refused: a station is active. The assistant cannot clear a
                // broken sensor; after a few tries the block stops, and says why.
                if attempt >= Self.startAttempts {
                    let left = layouts.count - i
                    blocked.withLock {
                        $0 =
                            "the block stopped at trial \(i + 1): a station was active at \(attempt) starts in a row "
                            + "(a stuck sensor?); \(left) trial(s) not run (trial \(i + 1) is logged aborted)"
                    }
                    wake.signal()
                    return
                }
            }
            faults?.trialOver(trial: i + 1)
        }
    }

    private func settingsJSON() -> String {
        let m = plan.machine
        return jsonObject([
            "simulated": "true", "trials": "\(plan.trials)", "seed": "\(plan.seed)",
            "speed": "\(plan.speed)", "hold_ns": "\(m.hold)", "search_timeout_ns": "\(m.searchTimeout)",
            "inter_trial_ns": "\(m.interTrialInterval)", "dog_sensitivity": "\(plan.sensitivity)",
            "dog_false_alert_rate": "\(plan.falseAlertRate)",
        ])
    }
}
