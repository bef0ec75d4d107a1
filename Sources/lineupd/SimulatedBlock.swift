import Dispatch
import Figures
import Foundation
import Glibc
import Logging
import SessionLog
import StationConfig
import StationControl
import StationIO
import StationRuntime
import Synchronization
import TrainingEngine
import VirtualDog

/// `lineupd --simulate`: one block on the simulated lineup, run by the same `StationService`
/// that serves the control socket (`--simulate --serve`, and the board): the same segments,
/// hot loop, log feeder (its trial lines and the summary's figures) and virtual dog. This adds
/// only what a person at the station would do: the loading assistant pressing ready after each
/// interval, and the summary at the end.
final class SimulatedBlock: @unchecked Sendable {
    let plan: BlockPlan
    let databasePath: String
    let realtime: Bool
    /// `--resume`: go on with the block cut short on this log instead of starting one.
    let resume: Bool
    private let stopRequested = Atomic<Bool>(false)
    private let stopSignal = Atomic<Int32>(0)
    /// Why the virtual assistant gave up (no trial could start), if it did.
    private let blocked = Mutex<String?>(nil)
    private let wake = DispatchSemaphore(value: 0)

    /// A start refused this many times in a row (a station active at each) ends the block.
    static let startAttempts = 3

    init(plan: BlockPlan, databasePath: String, realtime: Bool, resume: Bool = false) {
        self.plan = plan
        self.databasePath = databasePath
        self.realtime = realtime
        self.resume = resume
    }

    /// Runs the block; returns the exit status.
    func run() -> Int32 {
        // A log that cannot be written records nothing: refused as the served station refuses it.
        if let problem = logWriteProblem(forFileAt: databasePath) {
            Log.sessionLog.error("\(problem): no trial could be recorded")
            return 1
        }
        // As the served station refuses a session below `[log] min_free_mb`, so the block is
        // refused before the log is opened (or created): a full disk loses trials.
        switch FreeSpaceCheck(databasePath: databasePath, spec: plan.board.log, what: "a simulated block") {
        case .refused(let line):
            Log.sessionLog.error("\(line)")
            return 1
        case .warning(let line):
            Log.station.warning("warning: \(line)")
        case .enough:
            break
        }
        // The click through the real ALSA library; a machine with no sound card uses `null`.
        let player: ClickPlayer
        // The sound's `--fault`s open the device through a switch they turn per trial.
        let soundFaults = plan.faults.contains(where: \.isSound) ? SoundFaultSwitch() : nil
        do {
            player = try ClickPlayer.make(audio: plan.board.audio, keepTrying: false, faults: soundFaults)
        } catch {
            var fallback = plan.board.audio
            fallback.device = "null"
            Log.audio.warning(
                "no sound on ALSA device \(plan.board.audio.device) (\(error.message)): clicking into ALSA's null device"
            )
            do {
                player = try ClickPlayer.make(audio: fallback, keepTrying: false, faults: soundFaults)
            } catch {
                Log.audio.error("cannot open ALSA's null device either: \(error.message)")
                return 1
            }
        }
        let inputs = InputMap(configuration: plan.board)
        // The board's outputs (valves, buzzer, feeder) on the simulated lineup: a dry run of a
        // configuration drives them as the board would, and the summary counts the feeder's.
        let outputMap = StationOutputMap(board: plan.board)
        let service: StationService
        let lineup: SimulatedLineup
        do {
            lineup = try SimulatedLineup(lineCount: inputs.count, outputCount: outputMap.lines.count)
            var options = StationService.Options(
                board: plan.board, databasePath: databasePath, realtime: realtime, printTrials: true,
                dog: plan.dog, speed: plan.speed, faults: plan.faults, dogSeed: plan.seed ^ 0xD06_D06_D06,
                stationName: plan.board.boardName ?? "simulated")
            options.soundFaults = soundFaults
            service = try StationService(
                options: options,
                source: lineup, simulated: lineup, player: player,
                outputs: outputMap.lines.isEmpty ? nil : (lineup, outputMap))
            try service.start()
        } catch {
            Log.station.error("\(error)")
            return 1
        }
        if let problem = service.hotThreadRealtimeProblem {
            Log.station.warning("the hot thread runs without real-time priority (\(problem))")
        }
        // The block's trials: a resumed one goes on after those it logged before it was cut short.
        var first = 0
        var total = plan.trials
        var resumedWords = ""
        do {
            if resume {
                let resumed = try service.resumeSession()
                guard let trials = service.sessionTrials else { throw ControlRefusal(.noSession, "no block resumed") }
                (first, total) = trials
                // What the resume did (the trial cut short) is in the journal's line, on stderr.
                resumedWords = ", resumed after trial \(first) (session \(resumed.session.prefix(8)))"
            } else {
                _ = try service.startBlock(plan)
            }
        } catch {
            Log.station.error("\(error)")
            service.shutdown()
            return 1
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
        defer { for source in sources { source.cancel() } }

        print(
            "lineupd: simulated station, \(plan.stationCount) stations, \(total) trials\(resumedWords), "
                + "seed \(resume ? "the block's" : "\(plan.seed)"), dog sensitivity \(plan.sensitivity), false-alert rate \(plan.falseAlertRate), "
                + "\(plan.speed)x real time, click on ALSA \(player.negotiated?.device ?? "?"), log \(databasePath)")
        SystemdNotify.send("READY=1\nSTATUS=simulated block of \(total) trials running")
        let watchdog = SystemdNotify.startWatchdog { service.isHotLoopRunning }

        let trials = first..<total
        let assistantDone = Atomic<Bool>(false)
        let readyLine = inputs.line(of: .readyButton)
        let assistant = Thread { [self] in
            runAssistant(service: service, lineup: lineup, readyLine: readyLine, trials: trials)
            assistantDone.store(true, ordering: .releasing)
            wake.signal()
        }
        assistant.name = "lineup-assistant"
        assistant.start()

        wake.wait()
        let gaveUp = blocked.withLock { $0 }
        let stopped = stopRequested.load(ordering: .acquiring) || gaveUp != nil
        let name = stopSignal.load(ordering: .relaxed) == SIGINT ? "SIGINT" : "SIGTERM"
        if stopped {
            SystemdNotify.send("STOPPING=1\nSTATUS=stopping on signal")
            stopRequested.store(true, ordering: .releasing)
            while !assistantDone.load(ordering: .acquiring) { usleep(1000) }
        }
        let summary = service.endBlock(
            stopped: stopped ? (gaveUp ?? "stopped by \(name); its running trial is logged aborted") : nil)
        service.shutdown()
        watchdog?.cancel()
        guard let summary else { return 1 }
        let feeder = summary.feeder
        var status: Int32 = 0
        if let failure = feeder.failure {
            Log.sessionLog.error("\(failure)")
            status = 1
        }
        if let gaveUp {
            Log.station.error("\(gaveUp)")
            status = 1
        } else if stopped {
            print(
                "stopped by \(name) after \(feeder.committed.load(ordering: .acquiring)) trial(s); the log is flushed")
        }
        // After the log closed: what was still spooled then is counted as lost.
        let writerStatus = service.logStatus
        printSummary(summary, writerStatus: writerStatus, lineupDrops: lineup.droppedEdges)
        if let index = outputMap.feederIndex, let spec = outputMap.feeder {
            print(
                "  feeder: \(lineup.output(index)?.pulses ?? 0) pulse(s) on its line, \(spec.delayMilliseconds) ms after"
                    + " a click for \(spec.pulseMilliseconds) ms each")
        }
        // Said on stderr as the log closed (shutdown), with the same counts as the summary's.
        if writerStatus.lost > 0 || writerStatus.lostRecords > 0 { status = 1 }
        print("look at the log:")
        let lineupctl = siblingTool("lineupctl")
        print("  \(lineupctl) sessions --db \(databasePath)")
        print("  \(lineupctl) trials --db \(databasePath)")
        print("  \(lineupctl) export --db \(databasePath) --what trials --format csv")
        return status
    }

    /// The block's figures, each from `Tally.figures` (the one implementation), and the
    /// station's own counts.
    private func printSummary(
        _ summary: StationService.BlockSummary, writerStatus: LogWriterStatus, lineupDrops: UInt64
    ) {
        let feeder = summary.feeder
        let figures = feeder.tally.figures
        print("summary: \(figures.results.scored) trial(s) scored")
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
            "  log: \(feeder.rawEdges) raw edges (\(summary.chatter) chatter to the debouncer, "
                + "\(lineupDrops) dropped by a full lineup), \(writerStatus.written) events written, "
                + "\(writerStatus.overflow) dropped, ring overflows \(summary.ringOverflows)")
        let faults = feeder.sensorFaults.withLock { $0 }
        if !faults.isEmpty {
            print(
                "  sensor faults: "
                    + faults.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }
                    .joined(separator: ", "))
        }
        if writerStatus.failedWrites > 0 || writerStatus.lostRecords > 0 {
            print(
                "  log writes failed \(writerStatus.failedWrites) time(s) (\(writerStatus.lastError ?? "unknown")); "
                    + "\(feeder.trialsSpooled) trial(s) waited in memory; lost for good: \(writerStatus.lost) event(s), "
                    + "\(writerStatus.lostTrials) trial(s), \(writerStatus.lostRecords - writerStatus.lostTrials) other record(s)"
            )
        }
    }

    /// The loading assistant: for each trial, once the previous one is committed and its
    /// interval is over, load (the plan's loading time) and press ready. The service's virtual
    /// dog searches the trial as it starts. A start refused `startAttempts` times in a row (a
    /// station active at each: a sensor the assistant cannot clear) ends the block, saying why.
    private func runAssistant(service: StationService, lineup: SimulatedLineup, readyLine: UInt32?, trials: Range<Int>)
    {
        // The segment's counts start at 0, a resumed block's at its first trial not yet logged.
        func progress() -> (committed: Int, intervalsOver: Int, refusedStarts: Int) {
            let p = service.blockProgress ?? (0, 0, 0)
            return (p.committed + trials.lowerBound, p.intervalsOver + trials.lowerBound, p.refusedStarts)
        }
        let total = trials.upperBound
        for i in trials {
            while !stopRequested.load(ordering: .acquiring)
                && (progress().committed < i || progress().intervalsOver < i)
            {
                usleep(2000)
            }
            var attempt = 0
            while true {
                if stopRequested.load(ordering: .acquiring) { return }
                // The log cannot record a trial: none starts until it can (the served station's
                // rule, which the engine applies to the press anyway); said once each way.
                if service.logFailing {
                    print(
                        "block paused before trial \(i + 1) of \(total): "
                            + "\(StationService.logPausedWords(service.logStatus.lastError)); it goes on once the log "
                            + "takes writes (Ctrl-C ends it)")
                    fflush(nil)
                    while service.logFailing {
                        if stopRequested.load(ordering: .acquiring) { return }
                        usleep(20_000)
                    }
                    print("the log takes writes again: the block goes on at trial \(i + 1)")
                    fflush(nil)
                }
                attempt += 1
                MonotonicClock.sleep(until: MonotonicClock.now() &+ plan.loadingTime)
                let refused = progress().refusedStarts
                if let readyLine {
                    lineup.inject(line: readyLine, active: true)
                    MonotonicClock.sleep(until: MonotonicClock.now() &+ 20_000_000)
                    lineup.inject(line: readyLine, active: false)
                } else {
                    // A press the station could not take (busy switching, or no answer within
                    // a second) never reached the engine, so no refused start will be counted
                    // for it: press again rather than wait for a trial that was never started.
                    while true {
                        if stopRequested.load(ordering: .acquiring) { return }
                        do throws(ControlRefusal) {
                            _ = try service.ready()
                            break
                        } catch  where error.code == .noSession {
                            return
                        } catch {
                            MonotonicClock.sleep(until: MonotonicClock.now() &+ 20_000_000)
                        }
                    }
                }
                // A press the log refused starts no trial: wait for the log, not for the trial.
                while !stopRequested.load(ordering: .acquiring) && progress().committed < i + 1
                    && progress().refusedStarts == refused && !(service.logFailing && !service.isTrialRunning)
                {
                    usleep(2000)
                }
                if stopRequested.load(ordering: .acquiring) { return }
                if progress().committed >= i + 1 { break }
                if service.logFailing && !service.isTrialRunning {
                    attempt -= 1
                    continue
                }
                if attempt >= Self.startAttempts {
                    let left = total - i
                    blocked.withLock {
                        $0 =
                            "the block stopped at trial \(i + 1): a station was active at \(attempt) starts in a row "
                            + "(a stuck sensor?); \(left) trial(s) not run (trial \(i + 1) is logged aborted)"
                    }
                    wake.signal()
                    return
                }
            }
        }
    }
}
