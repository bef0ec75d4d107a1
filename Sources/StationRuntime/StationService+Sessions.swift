import Foundation
import Glibc
import Logging
import ProgramFiles
import SessionLog
import StationConfig
import StationControl
import StationIO
import Synchronization
import TrainingEngine
import VirtualDog

// Sessions and their requests: start (from a program step, or a simulated block), layout,
// ready, abort, end.
extension StationService {
    public func startSession(_ request: SessionRequest) throws(ControlRefusal) -> SessionStarted {
        switching.lock()
        defer { switching.unlock() }
        guard current == nil else {
            throw ControlRefusal(.sessionRunning, "a session is running: end it first (lineupctl session end)")
        }
        let spaceWarning = try checkFreeSpace()
        // The room's conditions are checked before anything (a handler, a program) is written.
        let conditions: SessionConditions?
        do {
            conditions = try SessionConditions(
                temperatureC: request.temperatureC, humidityPercent: request.humidityPercent, text: request.conditions
            ).checked()
        } catch {
            throw ControlRefusal(.badRequest, "\(error)")
        }
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
        // The step fixes the mode: a trainer-led step shows the layout to the handler, a
        // double-blind one never does, and its graduation counts only its own mode.
        if let asked = request.mode, asked != step.mode {
            throw ControlRefusal(
                .badRequest,
                "step \(request.step) of \(program.name) is \(step.mode.rawValue); --mode \(asked.rawValue) contradicts it "
                    + "(leave out --mode: the step decides)")
        }
        let mode = step.mode
        if mode == .doubleBlind, request.seed != nil || request.layouts != nil,
            !(request.asker ?? .station).mayFixBlindLayouts
        {
            throw ControlRefusal(
                .blind,
                "step \(request.step) of \(program.name) is double-blind: the page may not fix its seed or layouts "
                    + "(whoever fixes them knows where each target stands)")
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
        let usedStations = try chooseStations(request.stations, count: used, step: request.step)
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
        guard mode == .trainerLed || (1...10_000).contains(trials) else {
            throw ControlRefusal(.badRequest, "trials must be between 1 and 10000, not \(trials)")
        }
        if let d = request.durationSeconds, !(d >= 1 && d <= 3600) {
            throw ControlRefusal(.badRequest, "duration must be between 1 and 3600 seconds, not \(d)")
        }
        if let d = request.durationSeconds { exercise.durationSeconds = d }
        do throws(RepetitionsRefused) {
            exercise = try step.exercise(exercise, repetitions: request.repetitions)
        } catch {
            throw ControlRefusal(.badRequest, "step \(request.step) of \(program.name): \(error)")
        }
        // A program read from a file is already within these; one built otherwise must not
        // reach a deadline's arithmetic or a block's allocation unchecked.
        if let why = ProgramLimits.outOfRange(step: step, exercise: exercise) {
            throw ControlRefusal(.badRequest, "step \(request.step) of \(program.name): \(why)")
        }
        let unlabelled = request.unlabelled == true
        if unlabelled && !request.samples.isEmpty {
            throw ControlRefusal(.badRequest, "--unlabelled and --sample contradict each other: give one")
        }
        // The dog: by id or name. A name the log does not know is refused unless the request
        // says it is a new dog: a misspelt name must not start a second record of one animal.
        let dogId: UUID
        var records: [any AppendableRecord] = []
        // The daemon's own readers, not a connection opened (its schema parsed, its cache
        // filled) at every session start: lineupd must not grow session by session.
        let reader = log.reader
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
        // Limits per dog, rotation and novelty rest on this dog's exposure to each sample.
        let exposure: [String: Int]
        do {
            exposure = records.isEmpty ? try reader.exposure(dog: dogId.uuidString) : [:]
        } catch {
            throw ControlRefusal(.failed, "cannot read the dog's samples from the log: \(error)")
        }
        let (samples, labels) = try resolveSamples(
            request.samples, exposure: exposure, dog: records.isEmpty ? dogId.uuidString.lowercased() : nil)

        var configuration = LineupMachine.Configuration(
            step: step, exercise: exercise, stationCount: used,
            hold: nanoseconds(milliseconds: options.board.timing.holdMilliseconds / options.speed),
            holdTolerance: nanoseconds(milliseconds: options.board.timing.holdToleranceMilliseconds / options.speed))
        if options.speed != 1 {
            configuration.hold = nanoseconds(
                seconds: (step.holdSeconds ?? options.board.timing.holdMilliseconds / 1000) / options.speed)
            configuration.searchTimeout = nanoseconds(seconds: exercise.durationSeconds / options.speed)
            configuration.interTrialInterval = nanoseconds(seconds: step.interTrialSeconds / options.speed)
            configuration.exerciseDuration = nanoseconds(seconds: exercise.durationSeconds / options.speed)
        }
        let seed = request.seed ?? UInt64.random(in: 1...999_999_999)
        // A threshold step: its ladder, its catch trials and its positions (the dilutions are
        // the procedure's, trial by trial: StationService+Threshold.swift).
        var threshold: ThresholdPlan? = nil
        if let procedure = step.procedure {
            guard request.layouts == nil else {
                throw ControlRefusal(
                    .badRequest,
                    "step \(request.step) chooses each trial's dilution by its procedure: no planned layouts")
            }
            threshold = try thresholdPlan(
                procedure: procedure, setup: step.lineup, samples: samples, exerciseTrials: trials, seed: seed,
                step: request.step)
        }
        // The step's lineup on its stations. A trainer-led exercise's repetitions are rounds,
        // each with its own set-up (the target moves between rounds, as the study's trainer
        // moved it), laid out like an automated block.
        var layouts: [TrialLayout] = []
        var generator = LayoutGenerator(setup: step.lineup, samples: samples, seed: seed)
        do {
            if let threshold {
                layouts = threshold.layouts
            } else if let planned = request.layouts {
                // The sheet's kinds, with the session's samples in them as in a generated block.
                generator.chooseNovelTargetTrials(among: planned.indices.filter { planned[$0].contains(.target) })
                for (index, kinds) in planned.enumerated() {
                    layouts.append(try generator.layout(trialIndex: index, kinds: kinds))
                }
            } else {
                layouts = try generator.block(count: mode == .trainerLed ? exercise.repeats : trials)
            }
        } catch {
            throw ControlRefusal(.badRequest, "cannot lay out \(trials) trials: \(error)")
        }

        // A trainer-led round may run on containers the trainer knows by kind; an automated
        // or double-blind one is research and records which sample sat where.
        if !unlabelled && mode != .trainerLed {
            // A threshold trial's target holds one of the ladder's dilutions, chosen as it goes.
            try checkEveryStationLabelled(
                threshold.map { plan in
                    layouts.map {
                        var l = $0
                        if let t = l.targetStation { l.stations[t].sampleID = plan.ladder[0] }
                        return l
                    }
                } ?? layouts, step: request.step)
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
        var session = SessionRecord(
            dogId: dogId, handlerId: handlerId, programId: programId,
            phase: parts[0], phaseSteps: program.phases.first(where: { $0.id == parts[0] })?.steps.count,
            step: parts[1], exercise: exercise.id, mode: mode,
            settings: jsonObject(
                [
                    "trials": "\(mode == .trainerLed ? exercise.repeats : threshold?.trials ?? trials)",
                    "seed": "\(seed)",
                    "hold_ns": "\(configuration.hold)",
                    "search_timeout_ns": "\(configuration.searchTimeout)",
                    "inter_trial_ns": "\(configuration.interTrialInterval)", "speed": "\(options.speed)",
                    // The debouncer is physical: never scaled by --speed.
                    "debounce_ns": "\(nanoseconds(milliseconds: options.board.timing.debounceMilliseconds))",
                    "samples": request.samples.joined(separator: ","),
                    "unlabelled": unlabelled || samples.isEmpty ? "true" : "",
                    "duration_s": "\(exercise.durationSeconds)",
                    "stations": usedStations.map { stationNames[$0] }.joined(separator: ","),
                    "unused_stations": stationNames.indices.filter { !usedStations.contains($0) }.map {
                        stationNames[$0]
                    }
                    .joined(separator: ","),
                    "ready": mode == .trainerLed ? "trainer" : step.ready.rawValue,
                ].merging(running(configuration).loggedRules) { ours, _ in ours }.merging(
                    threshold.map(Self.thresholdSettings) ?? [:]
                ) { ours, _ in ours }),
            station: stationName)
        session.conditions = conditions
        records.append(session)
        // Double-blind: every trial's layout committed in the log before the first one runs.
        var commitments: [TrialCommitment] = []
        if mode == .doubleBlind {
            commitments = TrialCommitment.make(
                session: session.id, layouts: layouts, usedStations: usedStations, labels: labels)
            records += TrialCommitment.records(commitments, session: session.id, time: .now())
        }
        var feed: ThresholdFeed? = nil
        if let threshold {
            do {
                feed = try ThresholdFeed(
                    session: session.id, procedure: threshold.procedure, ladder: threshold.ladder,
                    labels: threshold.labels, concentrations: threshold.concentrations, trials: threshold.trials,
                    seed: seed, blind: mode == .doubleBlind)
            } catch {
                throw ControlRefusal(.badRequest, "step \(request.step): \(error)")
            }
            // Double-blind: the first trial's dilution (constant stimuli: every trial's) committed now.
            records += feed?.commitmentsAtStart(time: .now()) ?? []
        }
        // A session cut short and never resumed ends as this one starts: one session at a time.
        let endedInterrupted = endInterrupted(suggestions: nil, why: "a new session was started instead")
        do {
            try writer.flush()
            try log.append(records)
        } catch {
            throw ControlRefusal(.failed, "cannot write the session to the log: \(error)")
        }
        // What a resume needs, before the first trial (ResumableSession).
        let trialIds = layouts.map { _ in UUID() }
        var resumable = ResumableSession(
            session: session.id, dog: request.dog, dogId: dogId, mode: mode, step: request.step,
            program: program.name, configuration: configuration, layouts: layouts, trialIds: trialIds,
            salts: commitments.map(\.salt), digests: commitments.map(\.digest), seed: seed,
            usedStations: usedStations, labels: labels, outputMode: step.stationOutputs,
            autoStart: step.ready == .auto, startedWallNs: session.time.wallNs)
        // A threshold session's rules, ladder and dilution salts; its state is recomputed from
        // the trials logged when it is resumed (`resumedThreshold`).
        if let threshold, let feed { resumable.threshold = ResumableThreshold(threshold, salts: feed.salts) }
        let fileWarning = saveResumable(resumable)
        stopSegment(aborting: false)
        do {
            try startSegment(
                session: session.id, configuration: configuration, layouts: layouts, seed: seed,
                outputMode: step.stationOutputs, usedStations: usedStations, blind: mode == .doubleBlind,
                commitments: commitments, trialIds: trialIds, threshold: feed)
        } catch {
            try? startSegment(session: nil, configuration: idleConfiguration, layouts: [], seed: 0)
            throw ControlRefusal(.failed, "cannot start the session: \(error)")
        }
        current = Current(
            sessionId: session.id, dog: request.dog, mode: mode, step: request.step, trials: layouts.count, seed: seed,
            labels: labels, dogId: dogId, program: program)
        current?.autoStart = step.ready == .auto
        broadcast(.sessionStart(session: session.id.uuidString.lowercased(), dog: request.dog))
        var started = SessionStarted(
            session: session.id.uuidString.lowercased(),
            warning: [spaceWarning, endedInterrupted, fileWarning].compactMap { $0 }.first)
        started.mode = mode
        started.conditionsRecorded = conditions != nil ? true : nil
        let next: String
        if mode == .trainerLed {
            next = "press ready (or `lineupctl ready`) to start each repetition (\(exercise.repeats))"
        } else if step.ready == .auto {
            next = "trial 1 of \(layouts.count) starts by itself once no station is active (ready = auto)"
        } else if mode == .doubleBlind {
            // The answer goes to whoever started it, the handler's page too: what the station
            // waits for, nothing of the loading assistant's part.
            next = "trial 1 of \(layouts.count) waits for ready (the ready button or `lineupctl ready`)"
        } else {
            next =
                "load trial 1 of \(layouts.count) (lineupctl layout --assistant), then press ready (or `lineupctl ready`)"
        }
        started.message =
            "Session \(started.session.prefix(8)) started for \(request.dog) on \(program.name) \(request.step) "
            + "(\(mode.rawValue)\(unlabelled ? ", unlabelled: no sample ids recorded" : "")): \(next)."
        return started
    }

    /// The ready press, answered with what the engine did: it is asked on the hot thread and
    /// its answer read back here (within microseconds; a second is the bound).
    public func ready() throws(ControlRefusal) -> ReadyReply {
        switching.lock()
        defer { switching.unlock() }
        guard let current, let segment else { throw ControlRefusal(.noSession, "no session is running") }
        readyTickets &+= 1
        let ticket = readyTickets
        guard segment.handler.commands.push(.ready(ticket: ticket)) else {
            throw ControlRefusal(.failed, "the station is busy: try again")
        }
        segment.loop.wake()
        let deadline = MonotonicClock.now() &+ 1_000_000_000
        var answer: UInt64 = 0
        while true {
            answer = segment.handler.snapshot.answer.load(ordering: .acquiring)
            if answer >> 32 == UInt64(ticket) { break }
            guard MonotonicClock.now() < deadline, !segment.loopDone.load(ordering: .acquiring) else {
                throw ControlRefusal(.failed, "the station did not answer the ready press within a second")
            }
            usleep(200)
        }
        return try Self.readyReply(
            answer, trainerLed: current.mode == .trainerLed, total: current.firstTrial + segment.layouts.count,
            usedStations: segment.usedStations, stationNames: stationNames, logProblem: writer.status.lastError,
            firstTrial: current.firstTrial)
    }

    /// The engine's answer to a ready press (its snapshot's answer word) in the trainer's
    /// words: the reply, or the refusal saying why nothing started. Apart, so tests can ask it
    /// in virtual time.
    static func readyReply(
        _ answer: UInt64, trainerLed: Bool, total: Int, usedStations: [Int], stationNames: [String],
        logProblem: String? = nil, firstTrial: Int = 0
    ) throws(ControlRefusal) -> ReadyReply {
        let number = firstTrial + Int(answer & 0xFFFF)
        let station = Int((answer >> 16) & 0xFF) - 1
        let what = trainerLed ? "repetition" : "trial"
        switch ReadyAnswer(rawValue: UInt8((answer >> 24) & 0xFF)) {
        case .started:
            return ReadyReply(result: "started", trial: number, message: "\(what) \(number) of \(total) started")
        case .startsAfterInterval:
            return ReadyReply(
                result: "queued", trial: number,
                message: "trial \(number) of \(total) is loaded: it starts when the inter-trial interval is over")
        case .refusedActive:
            let name =
                station >= 0 && station < usedStations.count && usedStations[station] < stationNames.count
                ? stationNames[usedStations[station]] : "a station"
            throw ControlRefusal(
                .notReady,
                "trial \(number) of \(total) did not start: station \(name) is active (a lid, a paw, a cable?); "
                    + "clear it, then press ready again")
        case .running:
            throw ControlRefusal(
                .notReady, "\(what) \(number) of \(total) is running: the press started nothing")
        case .blockComplete:
            throw ControlRefusal(
                .notReady, "the block is complete (\(total) trials): end the session (lineupctl session end)")
        case .repetitionsDone:
            throw ControlRefusal(
                .notReady,
                "every repetition (\(total)) of the exercise is done: end the session (lineupctl session end)")
        case .stopped, nil:
            throw ControlRefusal(.notReady, "the session was stopped: end it (lineupctl session end)")
        case .logUnwritable:
            throw ControlRefusal(
                .notReady,
                "\(what) \(number) of \(total) did not start: \(Self.logPausedWords(logProblem)); "
                    + "press ready again once it can")
        case .startsOnceLogged where trainerLed:
            throw ControlRefusal(
                .notReady,
                "repetition \(number) of \(total) did not start: the last round is still being written to the log; "
                    + "press ready again in a moment")
        case .startsOnceLogged:
            return ReadyReply(
                result: "queued", trial: number,
                message: "trial \(number) of \(total) is loaded: it starts once trial \(number - 1) is in the log")
        }
    }

    public func abort() throws(ControlRefusal) {
        try command(.abort)
        switching.lock()
        current?.aborted = true
        switching.unlock()
    }

    func command(_ c: EngineCommand) throws(ControlRefusal) {
        switching.lock()
        defer { switching.unlock() }
        guard current != nil, let segment else { throw ControlRefusal(.noSession, "no session is running") }
        guard segment.handler.commands.push(c) else { throw ControlRefusal(.failed, "the station is busy: try again") }
        segment.loop.wake()
    }

    public func endSession(suggestions: String?) throws(ControlRefusal) {
        switching.lock()
        defer { switching.unlock() }
        guard let ending = current else {
            // A session cut short ends here if it is not to be resumed.
            if endInterrupted(suggestions: suggestions, why: "ended by the trainer without resuming it") != nil {
                return
            }
            throw ControlRefusal(.noSession, "no session is running")
        }
        stopSegment(aborting: true)
        if let suggestions, !suggestions.isEmpty { appendNote(ending.sessionId, suggestions, kind: .improvement) }
        appendEnd(ending.sessionId, .ended, "ended by the trainer")
        ResumableSession.remove(forLog: options.databasePath)
        recordGraduation(ending)
        current = nil
        do {
            try startSegment(session: nil, configuration: idleConfiguration, layouts: [], seed: 0)
        } catch {
            throw ControlRefusal(.failed, "the session ended, but the station could not go on: \(error)")
        }
        broadcast(.sessionEnd(session: ending.sessionId.uuidString.lowercased()))
    }

    /// The board stations a session's step uses: those named (a station's name or number,
    /// as many as the step's containers, each once), or the board's first N.
    func chooseStations(_ wanted: [String]?, count: Int, step: String) throws(ControlRefusal) -> [Int] {
        guard let wanted, !wanted.isEmpty else { return Array(0..<count) }
        let names = stationNames
        var chosen: [Int] = []
        for text in wanted {
            let index =
                names.firstIndex(of: text) ?? Int(text).flatMap { (1...names.count).contains($0) ? $0 - 1 : nil }
            guard let index else {
                throw ControlRefusal(
                    .unknown,
                    "no station \"\(text)\" on this board (\(names.joined(separator: ", ")) or 1-\(names.count))")
            }
            guard !chosen.contains(index) else {
                throw ControlRefusal(.badRequest, "station \(names[index]) is named twice")
            }
            chosen.append(index)
        }
        guard chosen.count == count else {
            throw ControlRefusal(
                .badRequest,
                "step \(step) uses \(count) station(s); \(chosen.count) were named (\(wanted.joined(separator: ",")))")
        }
        return chosen
    }
}
