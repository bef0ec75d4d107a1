import Foundation
import Glibc
import Logging
import SessionLog
import StationConfig
import StationControl
import StationIO
import Synchronization
import TrainingEngine
import VirtualDog

/// The running station: one edge source, one click, one log, and sessions started and ended
/// through the control socket.
///
/// The hot loop runs in *segments*: one between sessions (the clicker still clicks and every
/// edge is logged) and one per session, each with its own engine. Switching stops the hot
/// thread, hands the engine over on this side, and starts a new one on the same lines and the
/// same audio device, so the hot path itself never changes state under a lock.
public final class StationService: StationControlling, @unchecked Sendable {
    public struct Options {
        var board: StationConfiguration
        var databasePath: String
        var realtime: Bool
        var printTrials: Bool
        /// The simulated station's virtual dog, searching each trial as it starts.
        var dog: DogParameters?
        /// Divides the protocol's times (the simulated station runs faster than life).
        var speed: Double = 1
        /// Program files (`NAME.toml`) offered besides the built-in ones.
        var programsDirectory: String? = nil
        /// Broken sensors on the simulated lineup (`--fault`), by trial of each session.
        var faults: [InjectedFault] = []
        /// The virtual dog's seed (a simulated block's follows the block's seed).
        var dogSeed: UInt64 = 0xD06
        /// The name written in each session row (default: the board's, else `lineup`).
        var stationName: String? = nil
        /// Run on each hot thread before its loop (`bench click` counts its allocations).
        public var onHotThread: (@Sendable () -> Void)? = nil
        /// The log's lock, held by the daemon across reloads; nil: the service takes it itself
        /// and holds it for its own life. Either way a second station on the log is refused.
        public var logLock: LogLock? = nil
        /// The simulated sound device the sound's `--fault`s switch (the player opens through it).
        public var soundFaults: SoundFaultSwitch? = nil

        public init(
            board: StationConfiguration, databasePath: String, realtime: Bool, printTrials: Bool,
            dog: DogParameters? = nil, speed: Double = 1, programsDirectory: String? = nil,
            faults: [InjectedFault] = [], dogSeed: UInt64 = 0xD06, stationName: String? = nil
        ) {
            self.board = board
            self.databasePath = databasePath
            self.realtime = realtime
            self.printTrials = printTrials
            self.dog = dog
            self.speed = speed
            self.programsDirectory = programsDirectory
            self.faults = faults
            self.dogSeed = dogSeed
            self.stationName = stationName
        }
    }

    final class Segment: @unchecked Sendable {
        let handler: EngineHandler
        let loop: HotLoop
        let feeder: LogFeeder
        let layouts: [TrialLayout]
        let trainerLed: Bool
        let hold: UInt64
        /// The board stations (0-based) the session uses, in the lineup's order.
        let usedStations: [Int]
        let loopDone = Atomic<Bool>(false)
        var threshold: ThresholdFeed? = nil  // a threshold session's, set before it is published

        init(
            handler: EngineHandler, loop: HotLoop, feeder: LogFeeder, layouts: [TrialLayout], trainerLed: Bool,
            hold: UInt64, usedStations: [Int]
        ) {
            self.usedStations = usedStations
            self.handler = handler
            self.loop = loop
            self.feeder = feeder
            self.layouts = layouts
            self.trainerLed = trainerLed
            self.hold = hold
        }
    }

    struct Current {
        var sessionId: UUID
        var dog: String
        var mode: TrainingMode
        var step: String
        var trials: Int
        var seed: UInt64
        /// Sample id to the label written on it: what the loading assistant looks for.
        var labels: [String: String] = [:]
        /// For graduation at the session's end: the dog and the program (none for a simulated
        /// block, which follows no program).
        var dogId: UUID
        var program: Program?
        var aborted = false
        /// The step's `ready = "auto"`: trials start by themselves.
        var autoStart = false
        /// A resumed session: the trials (or rounds) logged before its segment (status and the
        /// ready reply count on from them).
        var firstTrial = 0
    }

    let options: Options
    let inputs: InputMap
    /// The board's edge source with the page's buttons polled beside it (StationService+PageButtons).
    let source: any EdgeSource
    let pageButtons: PageButtons
    let simulated: SimulatedLineup?
    let player: ClickPlayer
    let log: SessionLog
    /// Held while this service lives: the unfinished-session check runs only under it.
    let logLock: LogLock
    let writer: LogWriter
    // 8192 records of 40 bytes (edges, clicks and the engine's notes, in one order): 0.4 s of
    // a 20,000-edge/s storm with the log feeder stalled. Every slot is touched as the ring
    // wraps, so a larger ring, or a larger record, is resident memory the board pays for.
    let ring = EventRing<StationRecord>(capacity: 1 << 13)
    let recordsReady: Int32
    /// lineupd's start: the first service's, kept by those a reload makes after it, so `status`'s
    /// uptime is the process's and a reload is not taken for a restart (lineup-alerts' rule).
    static let processStarted = MonotonicClock.now()
    static let bootId = SessionRecord.currentBootId()  // lineupd's boot: fixed while it lives
    let started = StationService.processStarted
    /// Each input's level as the hot loops act on it, kept across segments (`status`).
    let inputLevels: InputLevels

    // Only the control thread and the main thread change these, under `switching`.
    let switching = NSLock()
    var segment: Segment?
    /// The last hot loop's debouncer, for the next segment (nil before the first).
    var lastDebouncer: Debouncer?
    var current: Current?
    let watchers = Mutex<(next: Int, all: [Int: @Sendable (String) -> Bool])>((0, [:]))
    let dogStop = Atomic<Bool>(false)
    var dogThread: Thread?
    let realtimeProblem = Mutex<String?>(nil)
    /// lineup-sync's latest report (StationService+SyncReport.swift).
    let labSync = Mutex<LabSyncStatus>(LabSyncStatus(reporting: false))
    /// Sensor faults of the segments already ended, by kind (under `switching`).
    var earlierFaults: [StationFault: Int] = [:]
    var faultInjector: FaultInjector?
    /// Each ready press over the socket, numbered so its answer is read back (under `switching`).
    var readyTickets: UInt32 = 0
    /// The session cut short (a crash, a kill, a power cut, a restart), waiting to be resumed
    /// or ended; found at `start` (under `switching`).
    var interrupted: (saved: ResumableSession, facts: ResumeFacts)?

    var buttonLines: (ready: UInt32, clicker: UInt32, error: UInt32) {
        (
            inputs.line(of: .readyButton) ?? .max, inputs.line(of: .clicker) ?? .max,
            inputs.line(of: .errorButton) ?? .max
        )
    }

    /// The board's output lines (station LEDs or valves, the buzzer, the feeder), when it has any.
    let outputs: (driver: any OutputDriver, map: StationOutputMap)?

    public init(
        options: Options, source: any EdgeSource, simulated: SimulatedLineup?, player: ClickPlayer,
        outputs: (any OutputDriver, StationOutputMap)? = nil
    ) throws {
        self.options = options
        self.outputs = outputs.map { (driver: $0.0, map: $0.1) }
        inputs = InputMap(configuration: options.board)
        inputLevels = InputLevels(lineCount: inputs.count, start: MonotonicClock.now())
        pageButtons = try PageButtons(lines: Self.pageButtonLines(inputs))
        self.source = CombinedEdgeSource(source, pageButtons)
        self.simulated = simulated
        self.player = player
        // The lock before the log is opened (and migrated): one lineupd per log.
        logLock = try options.logLock ?? LogLock(logPath: options.databasePath)
        log = try SessionLog(path: options.databasePath, cacheKibibytes: Self.logCacheKibibytes)
        writer = log.makeWriter()
        recordsReady = makeEventFD()
        guard recordsReady >= 0 else { throw StationIOError(.system, "cannot make the log feeder's eventfd") }
    }

    deinit { close(recordsReady) }

    /// SQLite's page cache for each of the daemon's connections to the log (the writer and two
    /// readers). A cache fills as the log grows and its pages are touched, so a 1 MiB cache each
    /// grew the daemon for hundreds of sessions (`lineup-bench sessions`, whose sessions
    /// write a few rows each: the writer's full at about the 480th, the reader's still filling at
    /// the 1,000th). 256 KiB each were full by about the 200th. The station appends: what it
    /// reads again is the B-trees' right edges, and anything else comes from the kernel's page
    /// cache, a read away. `bench log` (20,000 events/s for 15 s, debug build) took the same CPU
    /// with 256 KiB as with 1 MiB (5.6-6.2 s and 6.1-6.3 s user); its latencies on the shared
    /// build machine were too noisy to tell apart.
    static let logCacheKibibytes = 256

    /// Starts between sessions: the hot loop with no session, and the virtual dog if any.
    public func start() throws {
        switching.lock()
        defer { switching.unlock() }
        // Sessions this station never ended were cut short (a crash, a kill, a power cut):
        // say so in the log before anything else, so a researcher is not left to guess.
        // The one the resume file beside the log keeps is left without an end, to be resumed or
        // ended by a person.
        findInterrupted()
        do {
            for found in try log.markInterruptedSessions(
                station: stationName, holding: logLock, resumable: interrupted?.saved.session)
            {
                Log.sessionLog.warning(
                    Logger.Message(
                        stringLiteral:
                            "session \(found.session.prefix(8)) (\(found.dog), \(found.trials) trial(s) scored) was not ended: "
                            + "lineupd stopped without ending it; logged as interrupted"))
            }
        } catch {
            Log.sessionLog.error("cannot look for sessions left unfinished: \(error)")
        }
        if let interrupted {
            let saved = interrupted.saved
            Log.sessionLog.warning(
                Logger.Message(
                    stringLiteral:
                        "session \(saved.session.uuidString.lowercased().prefix(8)) (\(saved.dog), "
                        + "\(interrupted.facts.trialsLogged) trial(s) scored) was not ended: kept to be resumed: "
                        + interruptedWords(saved, interrupted.facts)))
        }
        try startSegment(session: nil, configuration: idleConfiguration, layouts: [], seed: 0)
        if let simulated, !options.faults.isEmpty {
            faultInjector = FaultInjector(faults: options.faults, lineup: simulated, sound: options.soundFaults)
        }
        if options.dog != nil, simulated != nil {
            let thread = Thread { [self] in runDog() }
            thread.name = "lineup-virtual-dog"
            dogThread = thread
            thread.start()
        }
    }

    /// Ends the session in progress (its running trial aborted), flushes the log, stops.
    public func shutdown() {
        // The dog first: it takes `switching` to look at the session.
        dogStop.store(true, ordering: .releasing)
        while let thread = dogThread, !thread.isFinished { usleep(1000) }
        dogThread = nil  // its closure holds this service
        faultInjector?.stop()
        switching.lock()
        defer { switching.unlock() }
        stopSegment(aborting: true)
        if let current {
            // Its running trial is logged aborted; a session that can be resumed is left so, to
            // go on after the restart (`session resume`), and says when it was stopped.
            if var saved = try? ResumableSession.load(forLog: options.databasePath), saved.session == current.sessionId
            {
                saved.stoppedWallNs = LogTime.now().wallNs
                _ = saveResumable(saved)
                Log.sessionLog.notice(
                    Logger.Message(
                        stringLiteral: "lineupd stopped during the session with \(current.dog): its running trial is "
                            + "logged aborted; resume the session (lineupctl session resume) once lineupd runs again, or end it"
                    ))
            } else {
                appendEnd(
                    current.sessionId, .stopped, "lineupd was stopped during it; its running trial is logged aborted")
                recordGraduation(current)
            }
        }
        current = nil
        try? writer.flush()
        writer.close()
        reportLogLosses()
    }

    public var hotThreadRealtimeProblem: String? { realtimeProblem.withLock { $0 } }
    public var isHotLoopRunning: Bool { segment.map { !$0.loopDone.load(ordering: .acquiring) } ?? false }
    public var hasSession: Bool {
        switching.lock()
        defer { switching.unlock() }
        return current != nil
    }

    // MARK: Segments

    var idleConfiguration: LineupMachine.Configuration {
        LineupMachine.Configuration(mode: .automated, stationCount: inputs.stationCount)
    }

    var stationNames: [String] { options.board.stations.map(\.name) }

    /// The name this station writes in each session row.
    var stationName: String { options.stationName ?? options.board.boardName ?? "lineup" }

    /// Call with `switching` held.
    /// The engine's configuration as a segment runs it, which the session's settings record
    /// (`Configuration.loggedRules`).
    func running(_ configuration: LineupMachine.Configuration) -> LineupMachine.Configuration {
        // A storm comes through the debouncer at about one edge per window: twice the
        // window between edges is faster than any nose (see `Configuration.chatterGap`).
        var configuration = configuration
        configuration.chatterGap = nanoseconds(milliseconds: 2 * options.board.timing.debounceMilliseconds)
        // Stuck is 10 × the hold as it runs: startSession scales the hold for a simulation
        // after the configuration is made, and a stuck sensor took 10 × the unscaled hold.
        configuration.stuckAfter = configuration.hold &* 10
        return configuration
    }

    func startSegment(
        session: UUID?, configuration: LineupMachine.Configuration, layouts: [TrialLayout], seed: UInt64,
        outputMode: StationOutputs = .none, usedStations: [Int]? = nil, blind: Bool = false,
        commitments: [TrialCommitment] = [], firstTrial: Int = 0, trialIds: [UUID]? = nil,
        threshold: ThresholdFeed? = nil
    ) throws {
        let lines = buttonLines
        let used = usedStations ?? Array(0..<configuration.stationCount)
        let configuration = running(configuration)
        let handler = EngineHandler(
            configuration: configuration, layouts: layouts, records: ring, readyLine: lines.ready,
            clickerLine: lines.clicker,
            errorLine: lines.error, soundStartCue: options.board.audio.startCue, outputs: outputs?.driver,
            stationOutputs: used.map { b in
                outputs.map { b < $0.map.stationIndex.count ? $0.map.stationIndex[b] : -1 } ?? -1
            },
            outputMode: outputMode, boardStations: inputs.stationCount, usedStations: used,
            blockLimit: threshold?.limit)
        var buttons: [UInt32: String] = [:]
        if lines.ready != .max { buttons[lines.ready] = "ready" }
        if lines.clicker != .max { buttons[lines.clicker] = "clicker" }
        if lines.error != .max { buttons[lines.error] = "error" }
        let feeder = LogFeeder(
            settings: LogFeeder.Settings(
                sessionId: session, layouts: layouts, stationNames: options.board.stations.map(\.name),
                usedStations: used, buttons: buttons, blockSeed: seed, printTrials: options.printTrials,
                trainerLed: configuration.mode == .trainerLed,
                roundLength: configuration.mode == .trainerLed
                    ? configuration.exerciseDuration : configuration.searchTimeout,
                watch: { [weak self] event in self?.broadcast(event) },
                blind: blind, commitments: commitments, firstTrial: firstTrial, trialIds: trialIds,
                threshold: threshold),
            stationRing: ring, recordsReady: recordsReady, writer: writer)
        // The first segment starts from the lines as they are: a sensor already active (a lid
        // left on a station before the session started) is active to the debouncer and the
        // engine, so the first start is refused and its release is seen. A later one goes on
        // from the levels the last loop acted on, which the log holds: an edge that reached the
        // lineup while no loop read it (the dog leaving as a session ended) is then read as the
        // change it is and logged so, not taken silently from the line's level and its edge
        // logged as chatter (the re-scorer saw the nose still there: a false indication).
        let window = nanoseconds(milliseconds: options.board.timing.debounceMilliseconds)
        let debouncer: Debouncer
        if let last = lastDebouncer, last.lineCount == inputs.count, last.windowNanoseconds == window {
            debouncer = last.carriedOver()
        } else {
            debouncer = Debouncer(
                lineCount: inputs.count, windowNanoseconds: window,
                initialLevels: (0..<inputs.count).map { source.level(of: UInt32($0)) ?? false })
        }
        let levels = (0..<inputs.count).map { debouncer.level(of: UInt32($0)) }
        inputLevels.set(levels: levels, at: MonotonicClock.now())
        handler.prime(activeLines: levels.indices.filter { levels[$0] }.map(UInt32.init), at: MonotonicClock.now())
        let loop = try HotLoop(
            source: source,
            debouncer: debouncer,
            handler: handler, player: player,
            buzzer: outputs.flatMap { o in o.map.buzzerIndex.map { OutputBuzzer(driver: o.driver, index: $0) } },
            buzzerPulseNanoseconds: nanoseconds(milliseconds: Double(outputs?.map.buzzerPulseMilliseconds ?? 15)),
            records: ring, recordsReady: recordsReady, levels: inputLevels,
            feeder: outputs.flatMap { o in o.map.feederIndex.map { OutputBuzzer(driver: o.driver, index: $0) } },
            feederDelayNanoseconds: nanoseconds(milliseconds: Double(outputs?.map.feeder?.delayMilliseconds ?? 0)),
            feederPulseNanoseconds: nanoseconds(milliseconds: Double(outputs?.map.feeder?.pulseMilliseconds ?? 100)))
        let segment = Segment(
            handler: handler, loop: loop, feeder: feeder, layouts: layouts,
            trainerLed: configuration.mode == .trainerLed, hold: configuration.hold, usedStations: used)
        segment.threshold = threshold
        feeder.sourceFaults = loop.sourceFaults
        feeder.soundReports = player.soundReports
        handler.logGate = logGate(for: feeder)
        feeder.start()
        let started = Atomic<Bool>(false)
        let realtime = options.realtime
        let onHotThread = options.onHotThread
        let hot = Thread { [self] in
            if realtime {
                let problem = HotLoop.makeCurrentThreadRealtime()
                realtimeProblem.withLock { $0 = problem }
            }
            onHotThread?()
            started.store(true, ordering: .releasing)
            loop.run()
            segment.loopDone.store(true, ordering: .releasing)
        }
        hot.name = "lineup-hot"
        hot.start()
        while !started.load(ordering: .acquiring) { usleep(500) }
        self.segment = segment
    }

    /// Call with `switching` held. Stops the hot thread; the engine is then this thread's.
    func stopSegment(aborting: Bool) {
        guard let segment else { return }
        segment.loop.stop()
        while !segment.loopDone.load(ordering: .acquiring) { usleep(500) }
        lastDebouncer = segment.loop.debouncerAfterRun
        if aborting { segment.handler.abort(at: MonotonicClock.now()) }
        segment.handler.outputsOff()
        segment.feeder.finish()
        segment.feeder.revealLines()
        if let failure = segment.feeder.failure { Log.sessionLog.error("\(failure)") }
        earlierFaults.merge(segment.feeder.sensorFaults.withLock { $0 }, uniquingKeysWith: +)
        self.segment = nil
    }

    // MARK: StationControlling

    public func status() -> StationStatus {
        switching.lock()
        defer { switching.unlock() }
        let writerStatus = writer.status
        var status = StationStatus(
            state: .idle,
            audio: player.isAvailable
                ? (player.negotiated?.description ?? options.board.audio.device)
                : "unavailable: \(player.problem ?? "no device")",
            gpio: simulated != nil ? "simulated lineup" : "libgpiod \(GPIOLineup.libraryVersion)",
            clicks: segment?.loop.clickCount ?? 0, failedClicks: player.failedClicks,
            edges: segment?.loop.edgeCount ?? 0, droppedEdges: source.droppedEdges,
            logOverflow: UInt64(writerStatus.overflow) + ring.overflowCount,
            uptimeSeconds: Double(MonotonicClock.now() - started) / 1e9)
        status.bootId = Self.bootId
        status.soundFault = player.soundFault?.name
        status.soundFaults = player.soundFaults
        status.soundFaultWhy = player.soundFault?.description
        if let outputs {
            var on: [String] = []
            for (i, name) in outputs.map.names.enumerated() {
                let level =
                    simulated?.output(i)?.active
                    ?? ((source as? CombinedEdgeSource)?.first as? GPIOLineup)?.level(of: UInt32(inputs.count + i))
                    ?? false
                if level { on.append(name) }
            }
            status.outputsOn = on
            if let buzzer = outputs.map.buzzerIndex { status.buzzerPulses = simulated?.output(buzzer)?.pulses }
        }
        status.cues = player.cuesPlayed
        status.failedCues = player.cuesFailed
        status.logWritten = writerStatus.written
        status.logLost = writerStatus.lost
        status.logDurableMillisP99 = writerStatus.durableLagMillisP99
        status.logDurableMillisMax = writerStatus.durableLagMillisMax
        status.logError = writerStatus.lastError
        status.logFreeMegabytes = freeMegabytes(forFileAt: options.databasePath)
        status.logWarnFreeMegabytes = options.board.log.warnFreeMegabytes
        status.logMinFreeMegabytes = options.board.log.minFreeMegabytes
        describeLogPause(into: &status, lastError: writerStatus.lastError)
        status.flaggedStations =
            segment.map {
                $0.handler.snapshot.read().flaggedStations(
                    unreadableLines: $0.loop.linesOutOfService, usedStations: $0.usedStations,
                    stationNames: stationNames)
            } ?? []
        let counts = earlierFaults.merging(segment?.feeder.sensorFaults.withLock { $0 } ?? [:], uniquingKeysWith: +)
        status.sensorFaults = Dictionary(uniqueKeysWithValues: counts.map { ($0.key.rawValue, $0.value) })
        let levels = inputLevelsForStatus()
        status.inputLevels = levels.levels
        status.stationLevelsWithheld = levels.stationsWithheld ? true : nil
        status.labSync = labSync.withLock { $0 }
        if current == nil { describeInterrupted(into: &status) }
        if let current, let segment {
            status.session = current.sessionId.uuidString.lowercased()
            status.dog = current.dog
            status.mode = current.mode
            status.program = current.program?.name
            status.step = current.step
            status.lineupStations = segment.usedStations.map {
                $0 < stationNames.count ? stationNames[$0] : "\($0 + 1)"
            }
            describe(current, segment, into: &status)
        }
        return status
    }

    public func watch(_ send: @escaping @Sendable (String) -> Bool) -> Int {
        watchers.withLock { w in
            w.next += 1
            w.all[w.next] = send
            return w.next
        }
    }

    public func unwatch(_ token: Int) {
        watchers.withLock { _ = $0.all.removeValue(forKey: token) }
    }

    func broadcast(_ event: WatchEvent) {
        let all = watchers.withLock { $0.all }
        let line = event.line  // once, as lineupd wrote each line before
        for (token, send) in all where !send(line) { unwatch(token) }
    }

}
