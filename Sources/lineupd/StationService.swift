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
final class StationService: StationControlling, @unchecked Sendable {
    struct Options {
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
    }

    private final class Segment: @unchecked Sendable {
        let handler: EngineHandler
        let loop: HotLoop
        let feeder: LogFeeder
        let layouts: [TrialLayout]
        let trainerLed: Bool
        let hold: UInt64
        let loopDone = Atomic<Bool>(false)

        init(
            handler: EngineHandler, loop: HotLoop, feeder: LogFeeder, layouts: [TrialLayout], trainerLed: Bool,
            hold: UInt64
        ) {
            self.handler = handler
            self.loop = loop
            self.feeder = feeder
            self.layouts = layouts
            self.trainerLed = trainerLed
            self.hold = hold
        }
    }

    private struct Current {
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
    }

    let options: Options
    let inputs: InputMap
    private let source: any EdgeSource
    private let simulated: SimulatedLineup?
    private let player: ClickPlayer
    private let log: SessionLog
    private let writer: LogWriter
    // 8192 records: 0.4 s of a 20,000-edge/s storm with the log feeder stalled. Every slot
    // is touched as the ring wraps, so a larger ring is resident memory the board pays for.
    private let ring = EventRing<StationRecord>(capacity: 1 << 13)
    private let recordsReady: Int32
    private let started = MonotonicClock.now()

    // Only the control thread and the main thread change these, under `switching`.
    private let switching = NSLock()
    private var segment: Segment?
    private var current: Current?
    private let watchers = Mutex<(next: Int, all: [Int: @Sendable (String) -> Bool])>((0, [:]))
    private let dogStop = Atomic<Bool>(false)
    private var dogThread: Thread?
    private let realtimeProblem = Mutex<String?>(nil)
    /// Sensor faults of the segments already ended, by kind (under `switching`).
    private var earlierFaults: [String: Int] = [:]
    private var faultInjector: FaultInjector?

    var buttonLines: (ready: UInt32, clicker: UInt32, error: UInt32) {
        (
            inputs.line(of: .readyButton) ?? .max, inputs.line(of: .clicker) ?? .max,
            inputs.line(of: .errorButton) ?? .max
        )
    }

    /// The board's output lines (station LEDs or valves, the buzzer), when it has any.
    private let outputs: (driver: any OutputDriver, map: StationOutputMap)?

    init(
        options: Options, source: any EdgeSource, simulated: SimulatedLineup?, player: ClickPlayer,
        outputs: (any OutputDriver, StationOutputMap)? = nil
    ) throws {
        self.options = options
        self.outputs = outputs.map { (driver: $0.0, map: $0.1) }
        inputs = InputMap(configuration: options.board)
        self.source = source
        self.simulated = simulated
        self.player = player
        log = try SessionLog(path: options.databasePath)
        writer = log.makeWriter()
        recordsReady = makeEventFD()
        guard recordsReady >= 0 else { throw StationIOError(.system, "cannot make the log feeder's eventfd") }
    }

    deinit { close(recordsReady) }

    /// Starts between sessions: the hot loop with no session, and the virtual dog if any.
    func start() throws {
        switching.lock()
        defer { switching.unlock() }
        // Sessions this station never ended were cut short (a crash, a kill, a power cut):
        // say so in the log before anything else, so a researcher is not left to guess.
        do {
            for found in try log.markInterruptedSessions(station: stationName) {
                Log.sessionLog.warning(
                    Logger.Message(
                        stringLiteral:
                            "session \(found.session.prefix(8)) (\(found.dog), \(found.trials) trial(s) scored) was not ended: "
                            + "lineupd stopped without ending it; logged as interrupted"))
            }
        } catch {
            Log.sessionLog.error("cannot look for sessions left unfinished: \(error)")
        }
        try startSegment(session: nil, configuration: idleConfiguration, layouts: [], seed: 0)
        if let simulated, !options.faults.isEmpty {
            faultInjector = FaultInjector(faults: options.faults, lineup: simulated)
        }
        if options.dog != nil, simulated != nil {
            let thread = Thread { [self] in runDog() }
            thread.name = "lineup-virtual-dog"
            dogThread = thread
            thread.start()
        }
    }

    /// Ends the session in progress (its running trial aborted), flushes the log, stops.
    func shutdown() {
        // The dog first: it takes `switching` to look at the session.
        dogStop.store(true, ordering: .releasing)
        while let thread = dogThread, !thread.isFinished { usleep(1000) }
        dogThread = nil  // its closure holds this service
        faultInjector?.stop()
        switching.lock()
        defer { switching.unlock() }
        stopSegment(aborting: true)
        if let current {
            appendEnd(
                current.sessionId, .stopped, "lineupd was stopped during it; its running trial is logged aborted")
            recordGraduation(current)
        }
        current = nil
        try? writer.flush()
        writer.close()
    }

    var hotThreadRealtimeProblem: String? { realtimeProblem.withLock { $0 } }
    var isHotLoopRunning: Bool { segment.map { !$0.loopDone.load(ordering: .acquiring) } ?? false }
    var hasSession: Bool {
        switching.lock()
        defer { switching.unlock() }
        return current != nil
    }

    // MARK: Segments

    private var idleConfiguration: LineupMachine.Configuration {
        LineupMachine.Configuration(mode: .automated, stationCount: inputs.stationCount)
    }

    private var stationNames: [String] { options.board.stations.map(\.name) }

    /// The name this station writes in each session row.
    private var stationName: String { options.stationName ?? options.board.boardName ?? "lineup" }

    /// Call with `switching` held.
    private func startSegment(
        session: UUID?, configuration: LineupMachine.Configuration, layouts: [TrialLayout], seed: UInt64,
        outputMode: StationOutputs = .none
    ) throws {
        let lines = buttonLines
        // A storm comes through the debouncer at about one edge per window: twice the
        // window between edges is faster than any nose (see `Configuration.chatterGap`).
        var configuration = configuration
        configuration.chatterGap = nanoseconds(milliseconds: 2 * options.board.timing.debounceMilliseconds)
        // Stuck is 10 × the hold as it runs: startSession scales the hold for a simulation
        // after the configuration is made, and a stuck sensor took 10 × the unscaled hold.
        configuration.stuckAfter = configuration.hold &* 10
        let handler = EngineHandler(
            configuration: configuration, layouts: layouts, readyLine: lines.ready, clickerLine: lines.clicker,
            errorLine: lines.error, soundStartCue: options.board.audio.startCue, outputs: outputs?.driver,
            stationOutputs: Array((outputs?.map.stationIndex ?? []).prefix(configuration.stationCount)),
            outputMode: outputMode)
        var buttons: [UInt32: String] = [:]
        if lines.ready != .max { buttons[lines.ready] = "ready" }
        if lines.clicker != .max { buttons[lines.clicker] = "clicker" }
        if lines.error != .max { buttons[lines.error] = "error" }
        let feeder = LogFeeder(
            settings: LogFeeder.Settings(
                sessionId: session, layouts: layouts, stationNames: options.board.stations.map(\.name),
                buttons: buttons, blockSeed: seed, printTrials: options.printTrials,
                trainerLed: configuration.mode == .trainerLed,
                roundLength: configuration.mode == .trainerLed
                    ? configuration.exerciseDuration : configuration.searchTimeout,
                watch: { [weak self] line in self?.broadcast(line) },
                hideLayoutFromWatchers: configuration.mode == .doubleBlind),
            stationRing: ring, notes: handler.notes, recordsReady: recordsReady, writer: writer)
        let loop = try HotLoop(
            source: source,
            debouncer: Debouncer(
                lineCount: inputs.count,
                windowNanoseconds: nanoseconds(milliseconds: options.board.timing.debounceMilliseconds)),
            handler: handler, player: player,
            buzzer: outputs.flatMap { o in o.map.buzzerIndex.map { OutputBuzzer(driver: o.driver, index: $0) } },
            buzzerPulseNanoseconds: nanoseconds(milliseconds: Double(outputs?.map.buzzerPulseMilliseconds ?? 15)),
            records: ring, recordsReady: recordsReady)
        let segment = Segment(
            handler: handler, loop: loop, feeder: feeder, layouts: layouts,
            trainerLed: configuration.mode == .trainerLed, hold: configuration.hold)
        feeder.start()
        let started = Atomic<Bool>(false)
        let realtime = options.realtime
        let hot = Thread { [self] in
            if realtime {
                let problem = HotLoop.makeCurrentThreadRealtime()
                realtimeProblem.withLock { $0 = problem }
            }
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
    private func stopSegment(aborting: Bool) {
        guard let segment else { return }
        segment.loop.stop()
        while !segment.loopDone.load(ordering: .acquiring) { usleep(500) }
        if aborting { segment.handler.abort(at: MonotonicClock.now()) }
        segment.handler.outputsOff()
        segment.feeder.finish()
        if let failure = segment.feeder.failure { Log.sessionLog.error("\(failure)") }
        earlierFaults.merge(segment.feeder.sensorFaults.withLock { $0 }, uniquingKeysWith: +)
        self.segment = nil
    }

    // MARK: StationControlling

    func status() -> StationStatus {
        switching.lock()
        defer { switching.unlock() }
        let writerStatus = writer.status
        var status = StationStatus(
            state: current == nil ? "idle" : (current?.aborted == true ? "aborted" : "session"),
            audio: player.isAvailable
                ? (player.negotiated?.description ?? options.board.audio.device)
                : "unavailable: \(player.problem ?? "no device")",
            gpio: simulated != nil ? "simulated lineup" : "libgpiod \(GPIOLineup.libraryVersion)",
            clicks: segment?.loop.clickCount ?? 0, failedClicks: player.failedClicks,
            edges: segment?.loop.edgeCount ?? 0, droppedEdges: source.droppedEdges,
            logOverflow: UInt64(writerStatus.overflow) + ring.overflowCount,
            uptimeSeconds: Double(MonotonicClock.now() - started) / 1e9)
        if let outputs {
            var on: [String] = []
            for (i, name) in outputs.map.names.enumerated() {
                let level =
                    simulated?.output(i)?.active
                    ?? (source as? GPIOLineup)?.level(of: UInt32(inputs.count + i)) ?? false
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
        let names = options.board.stations.map(\.name)
        let flagged = segment?.feeder.flaggedStations.withLock { $0 } ?? [:]
        status.flaggedStations = flagged.sorted { $0.key < $1.key }.map {
            FlaggedStation(station: $0.key < names.count ? names[$0.key] : "\($0.key + 1)", fault: $0.value)
        }
        status.sensorFaults = earlierFaults.merging(
            segment?.feeder.sensorFaults.withLock { $0 } ?? [:], uniquingKeysWith: +)
        if let current, let segment {
            status.session = current.sessionId.uuidString.lowercased()
            status.dog = current.dog
            status.mode = current.mode
            status.trials = current.mode == .trainerLed ? nil : current.trials
            status.trial = current.mode == .trainerLed ? nil : segment.feeder.committed.load(ordering: .acquiring)
            status.phase = current.step
            let endsAt = segment.feeder.roundEndsAt.load(ordering: .acquiring)
            let left = endsAt > 0 ? max(0, Double(Int64(bitPattern: endsAt &- MonotonicClock.now())) / 1e9) : nil
            if current.mode == .trainerLed {
                let running = segment.feeder.exercising.load(ordering: .acquiring)
                status.exercise = running > 0 ? running : nil
                status.exercisesDone = segment.feeder.exercisesDone.load(ordering: .acquiring)
                status.exerciseRepeats = segment.layouts.count
                status.secondsLeft = running > 0 ? left.map { $0 * options.speed } : nil
            } else if segment.feeder.searching.load(ordering: .acquiring) >= 0 {
                status.searchSecondsLeft = left.map { $0 * options.speed }
            }
        }
        return status
    }

    func startSession(_ request: SessionRequest) throws(ControlRefusal) -> SessionStarted {
        switching.lock()
        defer { switching.unlock() }
        guard current == nil else {
            throw ControlRefusal(.sessionRunning, "a session is running: end it first (lineupctl session end)")
        }
        let spaceWarning = try checkFreeSpace()
        let program = try loadProgram(named: request.program)
        let parts = request.step.split(separator: "/").map(String.init)
        guard parts.count == 2, let step = program.step(phase: parts[0], step: parts[1]) else {
            let steps = program.phases.flatMap { p in p.steps.map { "\(p.id)/\($0.id)" } }.joined(separator: ", ")
            throw ControlRefusal(.unknown, "no step \"\(request.step)\" in \(program.name) (steps: \(steps))")
        }
        guard step.lineup.stations <= inputs.stationCount else {
            throw ControlRefusal(
                .badRequest,
                "step \(request.step) needs \(step.lineup.stations) stations; this board has \(inputs.stationCount)")
        }
        var exercise: Exercise
        if let id = request.exercise {
            guard let e = step.exercises.first(where: { $0.id == id }) else {
                throw ControlRefusal(.unknown, "no exercise \"\(id)\" in step \(request.step)")
            }
            exercise = e
        } else {
            guard let e = step.exercises.first else {
                throw ControlRefusal(.badRequest, "step \(request.step) has no exercise")
            }
            exercise = e
        }
        // The step's containers are the board's first N stations; the rest are unused (never
        // blanks): their edges are logged, and no trial counts them.
        let used = step.lineup.stations
        if let planned = request.layouts {
            guard !planned.isEmpty, planned.allSatisfy({ $0.count == used }) else {
                throw ControlRefusal(
                    .badRequest, "each planned layout must give a kind for each of the step's \(used) stations")
            }
            guard planned.allSatisfy({ $0.filter { $0 == .target }.count <= 1 }) else {
                throw ControlRefusal(.badRequest, "a planned layout has more than one target")
            }
        }
        let trials = request.layouts?.count ?? request.trials ?? exercise.trials
        guard request.mode == .trainerLed || (1...10_000).contains(trials) else {
            throw ControlRefusal(.badRequest, "trials must be between 1 and 10000, not \(trials)")
        }
        if let d = request.durationSeconds, !(d >= 1 && d <= 3600) {
            throw ControlRefusal(.badRequest, "duration must be between 1 and 3600 seconds, not \(d)")
        }
        if let d = request.durationSeconds { exercise.durationSeconds = d }
        let (samples, labels) = try resolveSamples(request.samples)
        var configuration = LineupMachine.Configuration(
            step: step, exercise: exercise, stationCount: used,
            hold: nanoseconds(milliseconds: options.board.timing.holdMilliseconds / options.speed),
            holdTolerance: nanoseconds(milliseconds: options.board.timing.holdToleranceMilliseconds / options.speed))
        configuration.mode = request.mode
        if options.speed != 1 {
            configuration.hold = nanoseconds(
                seconds: (step.holdSeconds ?? options.board.timing.holdMilliseconds / 1000) / options.speed)
            configuration.searchTimeout = nanoseconds(seconds: exercise.durationSeconds / options.speed)
            configuration.interTrialInterval = nanoseconds(seconds: step.interTrialSeconds / options.speed)
            configuration.exerciseDuration = nanoseconds(seconds: exercise.durationSeconds / options.speed)
        }
        let seed = request.seed ?? UInt64.random(in: 1...999_999_999)
        // The step's lineup on its stations. A trainer-led exercise's repetitions are rounds,
        // each with its own set-up (the target moves between rounds, as the study's trainer
        // moved it), laid out like an automated block.
        var layouts: [TrialLayout] = []
        var generator = LayoutGenerator(setup: step.lineup, samples: samples, seed: seed)
        do {
            if let planned = request.layouts {
                // The sheet's kinds, with the session's samples in them as in a generated block.
                for (index, kinds) in planned.enumerated() {
                    layouts.append(try generator.layout(trialIndex: index, kinds: kinds))
                }
            } else {
                layouts = try generator.block(count: request.mode == .trainerLed ? exercise.repeats : trials)
            }
        } catch {
            throw ControlRefusal(.badRequest, "cannot lay out \(trials) trials: \(error)")
        }

        // The dog: by id or name. A name the log does not know is refused unless the request
        // says it is a new dog: a misspelt name must not start a second record of one animal.
        let dogId: UUID
        var records: [any AppendableRecord] = []
        let reader: LogReader
        do {
            reader = try SessionLog.openReader(path: options.databasePath)
        } catch {
            throw ControlRefusal(.failed, "cannot read the log: \(error)")
        }
        let known = try? reader.resolveDog(request.dog)
        if request.newDog == true {
            if known != nil {
                throw ControlRefusal(
                    .duplicate, "a dog named \"\(request.dog)\" is already in the log: leave out --new-dog to use it")
            }
            let name = request.dog.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !name.isEmpty else { throw ControlRefusal(.badRequest, "the dog's name cannot be empty") }
            let dog = DogRecord(name: name)
            records.append(dog)
            dogId = dog.id
        } else if let known, let uuid = UUID(uuidString: known) {
            dogId = uuid
        } else {
            let names = ((try? reader.dogs()) ?? []).map(\.name)
            throw ControlRefusal(
                .unknown,
                "no dog \"\(request.dog)\" in the log (\(names.isEmpty ? "none yet" : "known: " + names.joined(separator: ", "))): "
                    + "check the spelling, or add it with --new-dog or `lineupctl dogs add \(request.dog)`")
        }
        var handlerId: UUID? = nil
        if let code = request.handler {
            do {
                handlerId = try log.logHandler(code: code)
            } catch {
                throw ControlRefusal(.badRequest, "handler: \(error)")
            }
        }
        let programId: UUID
        do {
            programId = try log.logProgram(ProgramRecord(name: program.name, content: program.text))
        } catch {
            throw ControlRefusal(.failed, "cannot write the program to the log: \(error)")
        }
        let session = SessionRecord(
            dogId: dogId, handlerId: handlerId, programId: programId,
            phase: parts[0], phaseSteps: program.phases.first(where: { $0.id == parts[0] })?.steps.count,
            step: parts[1], exercise: exercise.id, mode: request.mode,
            settings: jsonObject([
                "trials": "\(request.mode == .trainerLed ? exercise.repeats : trials)", "seed": "\(seed)",
                "hold_ns": "\(configuration.hold)",
                "search_timeout_ns": "\(configuration.searchTimeout)",
                "inter_trial_ns": "\(configuration.interTrialInterval)", "speed": "\(options.speed)",
                "samples": request.samples.joined(separator: ","),
                "duration_s": "\(exercise.durationSeconds)",
                "stations": stationNames.prefix(used).joined(separator: ","),
                "unused_stations": stationNames.dropFirst(used).joined(separator: ","),
                "ready": request.mode == .trainerLed ? "trainer" : step.ready.rawValue,
            ]),
            station: stationName)
        records.append(session)
        do {
            try writer.flush()
            try log.append(records)
        } catch {
            throw ControlRefusal(.failed, "cannot write the session to the log: \(error)")
        }
        stopSegment(aborting: false)
        do {
            try startSegment(
                session: session.id, configuration: configuration, layouts: layouts, seed: seed,
                outputMode: step.stationOutputs)
        } catch {
            try? startSegment(session: nil, configuration: idleConfiguration, layouts: [], seed: 0)
            throw ControlRefusal(.failed, "cannot start the session: \(error)")
        }
        current = Current(
            sessionId: session.id, dog: request.dog, mode: request.mode, step: request.step, trials: trials, seed: seed,
            labels: labels, dogId: dogId, program: program)
        broadcast(
            jsonObject(["kind": "session-start", "session": session.id.uuidString.lowercased(), "dog": request.dog]))
        return SessionStarted(session: session.id.uuidString.lowercased(), warning: spaceWarning)
    }

    /// Free space on the log's disk at a session's start: below `[log] min_free_mb` the
    /// session is refused before anything is written (a full disk loses trials); below
    /// `warn_free_mb` it starts with a warning, in its answer and the journal.
    private func checkFreeSpace() throws(ControlRefusal) -> String? {
        let spec = options.board.log
        let directory = logDirectory(of: options.databasePath)
        guard let free = freeMegabytes(forFileAt: options.databasePath) else {
            let warning = "cannot tell the free space on \(directory) (the log's disk)"
            Log.station.warning("warning: \(warning)")
            return warning
        }
        if free < spec.minFreeMegabytes {
            let why =
                "only \(free) MB free on \(directory) (the log's disk); a session needs \(spec.minFreeMegabytes) MB "
                + "([log] min_free_mb): free some space first (lineupctl backup, then remove old copies)"
            Log.sessionLog.error("session refused: \(why)")
            throw ControlRefusal(.failed, why)
        }
        guard free < spec.warnFreeMegabytes else { return nil }
        let warning =
            "only \(free) MB free on \(directory) (the log's disk; [log] warn_free_mb is \(spec.warnFreeMegabytes) MB): "
            + "free some space before it fills"
        Log.station.warning("warning: \(warning)")
        return warning
    }

    /// A built-in program, or `NAME.toml` from the programs directory, checked against the board.
    private func loadProgram(named name: String) throws(ControlRefusal) -> Program {
        if let builtin = try? Program.builtin(named: name) { return builtin }
        let names = Program.builtinNames.joined(separator: ", ")
        guard let directory = options.programsDirectory, !name.contains("/"), !name.hasPrefix(".") else {
            throw ControlRefusal(.unknown, "no program named \"\(name)\" (built in: \(names))")
        }
        let path = "\(directory)/\(name).toml"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ControlRefusal(.unknown, "no program named \"\(name)\" (built in: \(names); none at \(path))")
        }
        do {
            let program = try Program.parse(toml: text, source: path)
            try program.validate(stationCount: inputs.stationCount)
            return program
        } catch {
            throw ControlRefusal(.badRequest, "\(error)")
        }
    }

    /// The samples asked for, and each one's label by id.
    private func resolveSamples(_ wanted: [String]) throws(ControlRefusal) -> ([Sample], [String: String]) {
        guard !wanted.isEmpty else { return ([], [:]) }
        let all: [SampleSummary]
        do {
            all = try SessionLog.openReader(path: options.databasePath).samples()
        } catch {
            throw ControlRefusal(.failed, "cannot read the samples: \(error)")
        }
        var out: [Sample] = []
        var labels: [String: String] = [:]
        for text in wanted {
            let matches = all.filter { $0.label == text || $0.id.hasPrefix(text.lowercased()) }
            guard matches.count == 1, let s = matches.first, let kind = SampleKind(rawValue: s.kind) else {
                throw ControlRefusal(
                    .unknown,
                    matches.isEmpty ? "no sample \"\(text)\" (lineupctl samples)" : "\"\(text)\" names several samples")
            }
            out.append(Sample(id: s.id, kind: kind, usageCount: s.uses))
            labels[s.id] = s.label
        }
        return (out, labels)
    }

    func layout(view: ClientView) throws(ControlRefusal) -> [LayoutEntry] {
        switching.lock()
        defer { switching.unlock() }
        guard let current, let segment else { throw ControlRefusal(.noSession, "no session is running") }
        guard !(current.mode == .doubleBlind && view == .handler) else {
            throw ControlRefusal(
                .blind, "double-blind session: the layout is for the loading assistant (lineupctl layout --assistant)")
        }
        // Trials and trainer-led rounds alike: the one running, or the next to load.
        let done = segment.feeder.committed.load(ordering: .acquiring)
        guard done < segment.layouts.count else {
            throw ControlRefusal(
                .notReady,
                current.mode == .trainerLed ? "every repetition of the exercise is done" : "the block is complete")
        }
        let names = options.board.stations.map(\.name)
        return segment.layouts[done].stations.enumerated().map { i, content in
            LayoutEntry(
                station: i < names.count ? names[i] : "\(i + 1)", kind: content.kind,
                sample: content.sampleID.map { current.labels[$0] ?? $0 })
        }
    }

    func ready() throws(ControlRefusal) {
        try command(.ready)
    }

    func abort() throws(ControlRefusal) {
        try command(.abort)
        switching.lock()
        current?.aborted = true
        switching.unlock()
    }

    private func command(_ c: EngineCommand) throws(ControlRefusal) {
        switching.lock()
        defer { switching.unlock() }
        guard current != nil, let segment else { throw ControlRefusal(.noSession, "no session is running") }
        guard segment.handler.commands.push(c) else { throw ControlRefusal(.failed, "the station is busy: try again") }
        segment.loop.wake()
    }

    func endSession(suggestions: String?) throws(ControlRefusal) {
        switching.lock()
        defer { switching.unlock() }
        guard let ending = current else { throw ControlRefusal(.noSession, "no session is running") }
        stopSegment(aborting: true)
        if let suggestions, !suggestions.isEmpty { appendNote(ending.sessionId, suggestions, kind: .improvement) }
        appendEnd(ending.sessionId, .ended, "ended by the trainer")
        recordGraduation(ending)
        current = nil
        do {
            try startSegment(session: nil, configuration: idleConfiguration, layouts: [], seed: 0)
        } catch {
            throw ControlRefusal(.failed, "the session ended, but the station could not go on: \(error)")
        }
        broadcast(jsonObject(["kind": "session-end", "session": ending.sessionId.uuidString.lowercased()]))
    }

    /// Holds the dog's trials on the session's step against its criterion and logs the
    /// milestones met (step passed, phase graduated); says so in the journal and to watchers.
    private func recordGraduation(_ session: Current) {
        let parts = session.step.split(separator: "/").map(String.init)
        guard parts.count == 2, let program = session.program else { return }
        do {
            try writer.flush()
            let earned = try log.recordGraduation(
                dogId: session.dogId, sessionId: session.sessionId, program: program, phase: parts[0],
                step: parts[1])
            for milestone in earned {
                let what = milestone.step.map { "passed step \(parts[0])/\($0)" } ?? "graduated phase \(parts[0])"
                print("lineupd: \(session.dog) \(what): \(milestone.criterion ?? "")")
                broadcast(
                    jsonObject([
                        "kind": "milestone", "dog": session.dog, "phase": parts[0], "step": milestone.step ?? "",
                        "criterion": milestone.criterion ?? "",
                    ]))
            }
        } catch {
            Log.sessionLog.error("cannot record the dog's progress: \(error)")
        }
    }

    private func appendEnd(_ session: UUID, _ how: SessionEnd.How, _ detail: String) {
        do {
            try writer.flush()
            try log.append([SessionEnd(sessionId: session, how: how, detail: detail)])
        } catch {
            Log.sessionLog.error("cannot record how the session ended: \(error)")
        }
    }

    private func appendNote(_ session: UUID, _ text: String, kind: SessionNote.Kind) {
        do {
            try writer.flush()
            try log.append([SessionNote(sessionId: session, kind: kind, text: text)])
        } catch {
            Log.sessionLog.error("cannot record the session's note: \(error)")
        }
    }

    // MARK: A simulated block (`lineupd --simulate`)

    /// Starts a simulated block as a session like any other: the virtual dog's, on the
    /// simulated samples, with the plan's lineup and times (it follows no program). The same
    /// segments, log feeder and dog serve it as serve a session started over the socket.
    func startBlock(_ plan: BlockPlan) throws -> UUID {
        switching.lock()
        defer { switching.unlock() }
        guard current == nil else { throw ControlRefusal(.sessionRunning, "a session is running") }
        let samples = try plan.registerSamples(in: log)
        var generator = LayoutGenerator(setup: plan.setup, samples: samples, seed: plan.seed)
        let layouts: [TrialLayout]
        do {
            layouts = try generator.block(count: plan.trials)
        } catch {
            throw ControlRefusal(.badRequest, "cannot lay out the block: \(error)")
        }
        let (dogId, newDog) = try virtualDog(in: log, notes: "lineupd --simulate")
        let session = SessionRecord(
            dogId: dogId, phase: "simulation", mode: .doubleBlind, settings: plan.settingsJSON, station: stationName)
        try writer.flush()
        try log.append((newDog.map { [$0] } ?? []) + [session])
        stopSegment(aborting: false)
        try startSegment(session: session.id, configuration: plan.machine, layouts: layouts, seed: plan.seed)
        current = Current(
            sessionId: session.id, dog: "virtual dog", mode: .doubleBlind, step: "simulation", trials: plan.trials,
            seed: plan.seed, dogId: dogId, program: nil)
        return session.id
    }

    /// Where the running block is: trials committed, intervals over, starts refused (a
    /// station active at the ready press). Nil between sessions.
    var blockProgress: (committed: Int, intervalsOver: Int, refusedStarts: Int)? {
        switching.lock()
        defer { switching.unlock() }
        guard current != nil, let segment else { return nil }
        return (
            segment.feeder.committed.load(ordering: .acquiring),
            segment.feeder.intervalsOver.load(ordering: .acquiring),
            segment.feeder.refusedStarts.load(ordering: .acquiring)
        )
    }

    /// What the block's summary reads, from the segment that ran it.
    struct BlockSummary {
        let feeder: LogFeeder
        let chatter: UInt64
        let ringOverflows: UInt64
    }

    /// Ends the block: finished, or stopped (`stopped` says why; its running trial is logged
    /// aborted). Returns what the summary needs; the log stays open until `shutdown`.
    func endBlock(stopped: String?) -> BlockSummary? {
        dogStop.store(true, ordering: .releasing)
        while let thread = dogThread, !thread.isFinished { usleep(1000) }
        dogThread = nil
        switching.lock()
        defer { switching.unlock() }
        guard let ending = current, let segment else { return nil }
        stopSegment(aborting: stopped != nil)
        appendEnd(ending.sessionId, stopped == nil ? .ended : .stopped, stopped ?? "the simulated block finished")
        current = nil
        return BlockSummary(
            feeder: segment.feeder, chatter: segment.loop.chatterCount,
            ringOverflows: ring.overflowCount + segment.handler.notes.overflowCount)
    }

    /// The session log's writer now (after `shutdown`, what was still spooled counts as lost).
    var logStatus: LogWriterStatus { writer.status }

    // MARK: The researcher's additions
    //
    // lineupd writes them because it owns the database: on a board the state directory is
    // the service user's, and the station's group may only read it. They are not events,
    // so they commit beside the writer's batches (GRDB serialises the writes), never on
    // the hot thread.

    func addDog(_ entry: DogEntry) throws(ControlRefusal) -> String {
        try adding { try log.addDog(name: entry.name, born: entry.born, notes: entry.notes).id }
    }

    func addSample(_ entry: SampleEntry) throws(ControlRefusal) -> String {
        try adding {
            try log.addSample(
                SampleRecord(
                    label: entry.label, kind: entry.kind, diagnosis: entry.diagnosis, source: entry.source,
                    collection: entry.collection, processing: entry.processing, collectedOn: entry.collectedOn)
            ).id
        }
    }

    func noteSample(_ entry: SampleNoteEntry) throws(ControlRefusal) -> String {
        try adding { try log.noteSample(entry.sample, text: entry.text).id }
    }

    func correctTrial(_ entry: TrialCorrectionEntry) throws(ControlRefusal) -> String {
        try adding {
            try log.correctTrial(
                entry.trial, outcome: entry.outcome, indicatedStation: entry.indicated, reason: entry.reason
            ).id
        }
    }

    func noteSession(_ entry: SessionNoteEntry) throws(ControlRefusal) -> String {
        try adding { try log.noteSession(entry.session, text: entry.text).id }
    }

    /// The simulated world moved by hand: a nose at a station, or a button pressed.
    func simulate(_ input: SimulatedInput) throws(ControlRefusal) {
        guard let simulated else {
            throw ControlRefusal(.badRequest, "this station's lineup is real: `simulate` is for lineupd --simulate")
        }
        let names = options.board.stations.map(\.name)
        let line: UInt32?
        switch input.input.lowercased() {
        case "clicker": line = inputs.line(of: .clicker)
        case "error": line = inputs.line(of: .errorButton)
        case "ready": line = inputs.line(of: .readyButton)
        default:
            if let i = names.firstIndex(of: input.input) {
                line = UInt32(i)
            } else if let n = Int(input.input), (1...names.count).contains(n) {
                line = UInt32(n - 1)
            } else {
                throw ControlRefusal(
                    .unknown,
                    "no input \"\(input.input)\": a station (\(names.joined(separator: ", ")) or 1-\(names.count)), "
                        + "clicker, error or ready")
            }
        }
        guard let line else {
            throw ControlRefusal(.unknown, "this board has no \(input.input) button")
        }
        guard simulated.inject(line: line, active: input.active) else {
            throw ControlRefusal(.failed, "the simulated lineup is full: try again")
        }
    }

    /// The log's refusals in the protocol's codes, with the log's own words.
    private func adding(_ body: () throws -> UUID) throws(ControlRefusal) -> String {
        do {
            return try body().uuidString.lowercased()
        } catch let error as SessionLogError {
            switch error {
            case .invalidInput, .malformedDate: throw ControlRefusal(.badRequest, error.description)
            case .unknownSample, .unknownTrial, .unknownSession, .ambiguousId:
                throw ControlRefusal(.unknown, error.description)
            case .duplicateDog, .duplicateSample: throw ControlRefusal(.duplicate, error.description)
            default: throw ControlRefusal(.failed, error.description)
            }
        } catch {
            throw ControlRefusal(.failed, "cannot write to the log: \(error)")
        }
    }

    func watch(_ send: @escaping @Sendable (String) -> Bool) -> Int {
        watchers.withLock { w in
            w.next += 1
            w.all[w.next] = send
            return w.next
        }
    }

    func unwatch(_ token: Int) {
        watchers.withLock { _ = $0.all.removeValue(forKey: token) }
    }

    private func broadcast(_ line: String) {
        let all = watchers.withLock { $0.all }
        guard !all.isEmpty else { return }
        for (token, send) in all where !send(line) { unwatch(token) }
    }

    // MARK: The simulated station's virtual dog

    /// Searches each trial of the running session as it starts, edge by edge in real time. In
    /// a trainer-led exercise it searches each repetition, and a virtual trainer presses the
    /// clicker when the dog holds at the target and the error button when it holds elsewhere.
    private func runDog() {
        guard let parameters = options.dog, let lineup = simulated else { return }
        var dog = VirtualDog(parameters: parameters, seed: options.dogSeed)
        var edges: [RawEdge] = []
        var lastSearched: (ObjectIdentifier?, Int) = (nil, -1)
        // The trial whose end lifts the faults that last until it (segment, turn, trial).
        var ending: (ObjectIdentifier, Int, Int)? = nil
        let lines = buttonLines
        while !dogStop.load(ordering: .acquiring) {
            usleep(20_000)
            switching.lock()
            let segment = self.segment
            switching.unlock()
            if let (owner, turn, trial) = ending {
                let still =
                    segment.map {
                        ObjectIdentifier($0) == owner && $0.feeder.searching.load(ordering: .acquiring) == turn
                    }
                    ?? false
                if !still {
                    faultInjector?.trialOver(trial: trial)
                    ending = nil
                }
            }
            guard let segment else { continue }
            let turn =
                segment.trainerLed
                ? segment.feeder.exercising.load(ordering: .acquiring)
                : segment.feeder.searching.load(ordering: .acquiring)
            let layoutIndex = segment.trainerLed ? turn - 1 : turn
            let key = (ObjectIdentifier(segment), turn)
            guard layoutIndex >= 0, layoutIndex < segment.layouts.count,
                key.0 != lastSearched.0 || key.1 != lastSearched.1
            else { continue }
            lastSearched = key
            let layout = segment.layouts[layoutIndex]
            // Trials count from 1 in each session; a trainer-led repetition counts as one.
            let trial = segment.trainerLed ? turn : turn + 1
            faultInjector?.searchStarted(trial: trial)
            ending = segment.trainerLed ? nil : (key.0, turn, trial)
            edges.removeAll(keepingCapacity: true)
            dog.search(kinds: layout.kinds, startAt: MonotonicClock.now(), into: &edges)
            edges.sort { $0.at < $1.at }
            if segment.trainerLed { edges += trainerPresses(edges, layout: layout, hold: segment.hold, lines: lines) }
            edges.sort { $0.at < $1.at }
            for edge in edges {
                let still =
                    segment.trainerLed
                    ? segment.feeder.exercising.load(ordering: .acquiring)
                    : segment.feeder.searching.load(ordering: .acquiring)
                if dogStop.load(ordering: .acquiring) || still != turn { break }
                // In short steps, so a stopping station never waits for the dog's next move.
                while MonotonicClock.now() < edge.at, !dogStop.load(ordering: .acquiring) {
                    MonotonicClock.sleep(until: min(edge.at, MonotonicClock.now() &+ 20_000_000))
                }
                if dogStop.load(ordering: .acquiring) { break }
                lineup.inject(line: UInt32(edge.station), active: edge.present)
            }
            faultInjector?.searchOver(trial: trial)
            // A nose left at a station would hold the next trial's sensor: lift it.
            for line in 0..<inputs.count where lineup.level(of: UInt32(line)) == true {
                lineup.inject(line: UInt32(line), active: false)
            }
        }
    }

    /// The virtual trainer's button presses for a search: a visit held for `hold` earns the
    /// clicker at the target and the error button elsewhere, pressed at the hold's end.
    private func trainerPresses(
        _ edges: [RawEdge], layout: TrialLayout, hold: UInt64, lines: (ready: UInt32, clicker: UInt32, error: UInt32)
    ) -> [RawEdge] {
        var presses: [RawEdge] = []
        var since: [Int: UInt64] = [:]
        var leftAt: [Int: UInt64] = [:]
        let chatter: UInt64 = 20_000_000
        func press(_ line: UInt32, at t: UInt64) {
            guard line != .max else { return }
            presses.append(RawEdge(station: Int(line), present: true, at: t))
            presses.append(RawEdge(station: Int(line), present: false, at: t &+ 30_000_000))
        }
        func close(_ station: Int, at end: UInt64) {
            guard let start = since.removeValue(forKey: station), end &- start >= hold else { return }
            let isTarget = station < layout.stations.count && layout.stations[station].kind == .target
            press(isTarget ? lines.clicker : lines.error, at: start &+ hold)
        }
        for edge in edges where edge.station < inputs.stationCount {
            if edge.present {
                // Back within the chatter span: the same visit goes on; later, a new visit.
                if let left = leftAt.removeValue(forKey: edge.station), edge.at &- left >= chatter {
                    close(edge.station, at: left)
                }
                if since[edge.station] == nil { since[edge.station] = edge.at }
            } else {
                leftAt[edge.station] = edge.at
            }
        }
        // Visits end at their last departure.
        for (station, end) in leftAt { close(station, at: end) }
        for station in Array(since.keys) { close(station, at: edges.last?.at ?? 0) }
        return presses
    }
}
