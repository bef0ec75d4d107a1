import ArgumentParser
import Foundation
import Glibc
import SessionLog
import StationConfig
import StationIO
import StationLogging
import TrainingEngine
import VirtualDog

@main
struct Lineupd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lineupd",
        abstract: "The scent lineup station daemon.",
        discussion: """
            On a board, `lineupd --config /etc/lineup/station.toml` runs the station: it requests the \
            configured GPIO lines, opens the audio device, writes the session log and serves its \
            control socket for `lineupctl` (session start, ready, layout, abort, end, watch, status).

            With no hardware, `lineupd --simulate` runs an automated double-blind block with a \
            virtual dog on a simulated 5-station lineup, printed trial by trial, and \
            `lineupd --simulate --serve` runs the simulated station as the daemon does, at \
            life's pace unless --speed is given, waiting for sessions over the control socket \
            while the virtual dog searches each trial; in a trainer-led round a simulated trainer \
            presses the clicker when the dog holds at the target and the error button when it \
            holds elsewhere. With --no-virtual-dog nothing moves but what `lineupctl simulate` \
            moves: the nose, the clicker, the error and ready buttons.

            Examples:
              lineupd --simulate
              lineupd --simulate --trials 200 --seed 7 --fast
              lineupd --simulate --serve --socket /tmp/lineup.sock --db /tmp/lineup.db
              lineupd --config /etc/lineup/station.toml
            """)

    @Flag(help: "With --simulate: serve the control socket and wait for sessions, as the daemon does.")
    var serve = false

    @Flag(
        help:
            "With --simulate --serve: no virtual dog and no simulated trainer; the lineup moves only by `lineupctl simulate` (noses and buttons by hand)."
    )
    var noVirtualDog = false

    @Option(help: "The control socket (default: $RUNTIME_DIRECTORY/control.sock, else /run/lineup/control.sock).")
    var socket: String?

    @Option(help: "The group allowed to control the station (given the socket, mode 0660).")
    var group = "lineup"

    @Option(
        help:
            "Program files NAME.toml offered besides the built-in ones (default: $CONFIGURATION_DIRECTORY/programs, else /etc/lineup/programs)."
    )
    var programs: String?

    @Flag(help: "Run a simulated station: no hardware, no root, no configuration needed.")
    var simulate = false

    @Flag(
        help:
            "With --simulate: run the block in virtual time as fast as possible (no sound; logged only when --db is given)."
    )
    var fast = false

    @Option(help: "The station's configuration file (required on a board; with --simulate, the board to simulate).")
    var config: String?

    @Option(
        help:
            "The session log's database (default: ./lineup.db simulated, $STATE_DIRECTORY/lineup.db or /var/lib/lineup/lineup.db on a board)."
    )
    var db: String?

    @Option(help: "Trials in the block.")
    var trials = 20

    @Option(help: "The block's seed (layouts and the dog); random when not given.")
    var seed: UInt64?

    @Option(help: "The virtual dog's chance of holding an indication at the target.")
    var sensitivity = 0.8

    @Option(name: .customLong("false-alert-rate"), help: "Its chance of holding at each other station it examines.")
    var falseAlertRate = 0.05

    @Option(
        name: .customLong("speed"),
        help: ArgumentHelp(
            "How many times faster than a real dog the simulated station runs (hold, search, intervals); default 20 for the block, 1 (life's pace) with --serve, where people press the buttons.",
            valueName: "speed"))
    var speedOption: Double?

    /// A served station is for people trying it: its rounds last what the program says unless
    /// a speed is asked for. The block runs unattended, so it runs fast (the project's defaults).
    var speed: Double { speedOption ?? (serve ? 1 : 20) }

    @Option(help: "The ALSA device for the click; `null` is used, with a warning, when it cannot be opened.")
    var device: String?

    @Flag(help: "Do not ask for SCHED_FIFO and locked memory for the hot thread.")
    var noRealtime = false

    @Option(
        name: .customLong("fault"),
        help: ArgumentHelp(
            "With --simulate: a broken sensor on the simulated lineup, repeatable: stuck (active from just after the start cue, and stays), chatter (toggles every 1 ms through each search), dead (never active); from trial FIRST (default 1) to LAST (default: the end).",
            valueName: "kind:station[@first[-last]]"))
    var faults: [String] = []

    func run() throws {
        StationLogging.bootstrap(program: "lineupd")
        guard trials >= 1 && trials <= 100_000 else { fail("--trials must be between 1 and 100000") }
        guard sensitivity >= 0 && sensitivity <= 1 else { fail("--sensitivity must be between 0 and 1") }
        guard falseAlertRate >= 0 && falseAlertRate <= 1 else { fail("--false-alert-rate must be between 0 and 1") }
        guard speed.isFinite && speed >= 1 && speed <= 1000 else { fail("--speed must be between 1 and 1000") }

        var board = StationConfiguration.simulated(stationCount: 5)
        if let config {
            do {
                board = try StationConfigLoader.load(path: config)
            } catch {
                fail(error.description)
            }
        }
        if let device { board.audio.device = device }
        if simulate && !fast, let refusal = BlockPlan.speedRefusal(speed, timing: board.timing) { fail(refusal) }
        var injected: [InjectedFault] = []
        if !faults.isEmpty {
            guard simulate && !fast else {
                fail("--fault breaks a simulated sensor: it needs --simulate, and the simulated lineup (not --fast)")
            }
            let names = board.stations.map(\.name)
            for text in faults {
                switch InjectedFault.parse(text, stations: names, trials: serve ? nil : trials) {
                case .success(let fault): injected.append(fault)
                case .failure(let error): fail(error.message)
                }
            }
            if let clash = InjectedFault.overlap(injected, stations: names) { fail(clash) }
        }
        let environment = ProcessInfo.processInfo.environment
        let programsDirectory =
            programs ?? environment["CONFIGURATION_DIRECTORY"].map { "\($0)/programs" } ?? "/etc/lineup/programs"
        let socketPath =
            socket ?? environment["RUNTIME_DIRECTORY"].map { "\($0)/control.sock" } ?? "/run/lineup/control.sock"
        if !simulate {
            guard config != nil else {
                fail("give the board's configuration (--config /etc/lineup/station.toml), or --simulate")
            }
            let database = db ?? environment["STATE_DIRECTORY"].map { "\($0)/lineup.db" } ?? "/var/lib/lineup/lineup.db"
            let status = StationDaemon(
                configPath: config, board: board, databasePath: database, socketPath: socketPath, group: group,
                realtime: !noRealtime, dog: nil, speed: 1, simulated: false, programsDirectory: programsDirectory
            ).run()
            if status != 0 { throw ExitCode(status) }
            return
        }
        if noVirtualDog && !serve { fail("--no-virtual-dog is for --simulate --serve") }
        let db = self.db ?? "./lineup.db"
        let plan = BlockPlan(
            board: board, trials: trials, seed: seed ?? UInt64.random(in: 1...999_999), sensitivity: sensitivity,
            falseAlertRate: falseAlertRate, speed: fast ? 1 : speed, faults: injected)
        if fast {
            try runFast(plan, databasePath: self.db)
        } else if serve {
            let status = StationDaemon(
                configPath: config, board: board, databasePath: db, socketPath: socketPath, group: group,
                realtime: !noRealtime, dog: noVirtualDog ? nil : plan.dog, speed: speed, simulated: true,
                programsDirectory: programsDirectory, faults: injected
            ).run()
            if status != 0 { throw ExitCode(status) }
        } else {
            let status = SimulatedBlock(plan: plan, databasePath: db, realtime: !noRealtime).run()
            if status != 0 { throw ExitCode(status) }
        }
    }
}

/// One line on stderr (the station's logger), then exit status 1.
func fail(_ message: String) -> Never {
    Log.station.error("\(message)")
    exit(1)
}

/// The block to run: the lineup, the protocol's times (divided by `speed` for the real-time
/// simulation, so a 20-trial block takes seconds, not minutes), the dog.
struct BlockPlan {
    var board: StationConfiguration
    var trials: Int
    var seed: UInt64
    var sensitivity: Double
    var falseAlertRate: Double
    var speed: Double
    /// Broken sensors on the simulated lineup (`--fault`).
    var faults: [InjectedFault] = []

    var stationCount: Int { board.stations.count }
    var stationNames: [String] { board.stations.map(\.name) }

    /// One target, the rest controls and a blank; a fifth of the trials have no target, so
    /// the block measures specificity as well.
    var setup: LineupSetup {
        let n = stationCount
        return LineupSetup(
            stations: n, targets: 1, controls: max(0, n - 2), blanks: n >= 2 ? 1 : 0, noTargetShare: 0.2,
            maxSameStationInARow: 2)
    }

    private func scaled(_ seconds: Double) -> Nanoseconds { nanoseconds(seconds: seconds / speed) }

    /// The fastest honest simulation for a board. `--speed` divides the hold and its tolerance
    /// but not the debounce window (the sensors' chatter does not speed up). The scaled hold
    /// must be at least 6 windows: measured in virtual time (2,000 trials, seed 3), every
    /// outcome matches 20× real time down to 6.06 windows of hold, and false alerts rise from
    /// 5.7 (sniffs stretched by the debouncer become holds). The scaled tolerance must be at
    /// least 1 window, or a break in the beam cannot be seen at all (the virtual dog makes no
    /// such breaks, so this one is argued, not measured). These factors are the project's rule.
    static func fastestSpeed(timing: TimingSpec) -> Double {
        let window = max(timing.debounceMilliseconds, 0.001)
        return min(timing.holdMilliseconds / (6 * window), timing.holdToleranceMilliseconds / window)
    }

    /// One line saying why `speed` is refused for this board, or nil.
    static func speedRefusal(_ speed: Double, timing: TimingSpec) -> String? {
        let limit = fastestSpeed(timing: timing)
        guard speed > limit else { return nil }
        return String(
            format:
                "--speed %g is too fast for honest figures: the hold (%g ms) and its tolerance (%g ms) would become %.1f ms and %.1f ms, "
                + "against the %g ms debounce window (needed: 6 windows and 1); the fastest allowed here is %g",
            speed, timing.holdMilliseconds, timing.holdToleranceMilliseconds, timing.holdMilliseconds / speed,
            timing.holdToleranceMilliseconds / speed, timing.debounceMilliseconds, (limit * 10).rounded(.down) / 10)
    }

    var machine: LineupMachine.Configuration {
        var configuration = LineupMachine.Configuration(
            mode: .doubleBlind, stationCount: stationCount,
            hold: scaled(board.timing.holdMilliseconds / 1000),
            holdTolerance: scaled(board.timing.holdToleranceMilliseconds / 1000),
            searchTimeout: scaled(30), interTrialInterval: scaled(10),
            // The dog may search on after a false alert (`after_false_alert = "continue"`),
            // so one block shows both: a stuck or wrong station, then the target found.
            endOnFalseAlert: false)
        // The storm and the debouncer are physical: not scaled (see `Configuration.chatterGap`).
        configuration.chatterGap = nanoseconds(milliseconds: 2 * board.timing.debounceMilliseconds)
        return configuration
    }

    var dog: DogParameters {
        let s = speed
        let hold = board.timing.holdMilliseconds / 1000
        return DogParameters(
            sensitivity: sensitivity, falseAlertRate: falseAlertRate,
            startLatencySeconds: (0.5 / s)...(2 / s), travelSeconds: (0.4 / s)...(1.5 / s),
            sniffSeconds: (min(0.2, hold / 4) / s)...(min(1.2, hold / 2) / s), indicationHoldSeconds: hold * 1.5 / s,
            // Real beams chatter at the nose's arrival and departure: the debouncer's work.
            chatterToggles: 2, chatterSpanMilliseconds: 2)
    }

    var debounce: Nanoseconds { nanoseconds(milliseconds: board.timing.debounceMilliseconds) }

    /// The assistant's time to load the containers between trials.
    var loadingTime: Nanoseconds { scaled(1) }
}

func formatProportion(_ p: Proportion) -> String {
    guard let value = p.value, let lower = p.lower, let upper = p.upper else { return "n/a (no trials)" }
    return String(format: "%.2f (95 %% CI %.2f–%.2f, %d/%d)", value, lower, upper, p.successes, p.trials)
}

/// The block's figures as the summary prints them: every number comes from `Tally.figures`,
/// the implementation `lineupctl stats` and `session show` use.
func printFigures(_ figures: Figures) {
    let r = figures.results
    let trials = [
        ("hit", r.hits), ("false-alert", r.falseAlerts), ("miss", r.misses),
        ("correct-rejection", r.correctRejections), ("aborted", r.aborted),
    ].filter { $0.1 > 0 }.map { "\($0.0) \($0.1)" }
    print("  trials: \(trials.isEmpty ? "none" : trials.joined(separator: ", "))")
    let p = figures.presentations
    print(
        "  stations (each station of a scored trial is one presentation): hits \(p.hits), "
            + "misses \(p.misses), false alerts \(p.falseAlerts), "
            + "correct rejections \(p.correctRejections), not examined \(p.notExamined); blanks indicated "
            + "\(p.blankIndicated), passed \(p.blankPassed), not examined \(p.blankNotExamined)")
    print("  sensitivity  \(formatProportion(figures.sensitivity))")
    print("  specificity  \(formatProportion(figures.specificity))")
    print("  PPV          \(formatProportion(figures.positivePredictiveValue))")
    let perTrial = figures.falseAlertsPerTrial.map { String(format: "%.3f", $0) } ?? "n/a"
    let dPrime = figures.dPrime.map { String(format: "%.2f", $0) } ?? "n/a"
    let criterion = figures.criterion.map { String(format: "%.2f", $0) } ?? "n/a"
    print("  false alerts per trial \(perTrial), d′ \(dPrime), c \(criterion)")
    if let l = figures.latency {
        print(
            String(
                format: "  latency to indication: median %.0f ms (IQR %.0f–%.0f ms, n = %d)", l.median, l.q1,
                l.q3, l.n))
    }
}

/// `--fast`: the same block in virtual time through `BlockSimulation`, for planning; with a
/// database, its trials (layouts and what each station saw, no raw events) are logged as one
/// session, so an analysis can be tried on a realistic log in seconds.
func runFast(_ plan: BlockPlan, databasePath: String?) throws {
    let settings = BlockSimulation.Settings(
        lineup: plan.setup, machine: plan.machine, dog: plan.dog, trials: plan.trials, seed: plan.seed,
        debounce: plan.debounce, loadingTime: plan.loadingTime)
    let clock = ContinuousClock()
    let started = clock.now
    let result: BlockSimulation.Result
    do {
        result = try BlockSimulation(settings: settings).run()
    } catch {
        fail("cannot lay out the block: \(error)")
    }
    let elapsed = started.duration(to: clock.now)
    print(
        "lineupd --fast: \(plan.trials) trials, seed \(plan.seed), \(plan.stationCount) stations, "
            + "virtual time \(String(format: "%.0f", Double(result.endedAt) / 1e9)) s, computed in "
            + "\(String(format: "%.3f", Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds))) s"
    )
    printFigures(result.scoreboard.overall.figures)
    print("  clicks \(result.clicks), sniffs \(result.sniffs), raw edges \(result.rawEdges)")
    guard let databasePath else {
        print("  --fast runs in virtual time with no sound; give --db PATH to log its trials.")
        return
    }
    do {
        let session = try logFastBlock(plan, result, databasePath: databasePath)
        print("  logged as session \(session.uuidString.lowercased().prefix(8)) in \(databasePath)")
    } catch {
        fail("cannot log the block in \(databasePath): \(error)")
    }
}

/// The dog every simulated block is logged for: "virtual dog", added by the first block on a
/// log (returned to be appended with its session) and found by name by every later one, so a
/// log's simulated blocks are one dog's sessions.
func virtualDog(in log: SessionLog, notes: String) throws -> (id: UUID, new: DogRecord?) {
    if let known = try log.reader.dogs().first(where: { $0.name == "virtual dog" }), let id = UUID(uuidString: known.id)
    {
        return (id, nil)
    }
    let dog = DogRecord(name: "virtual dog", notes: notes)
    return (dog.id, dog)
}

/// Writes a `--fast` block to the log in one transaction: the virtual dog, the session (its
/// times are now plus the block's virtual time), every trial, and the session's end.
func logFastBlock(_ plan: BlockPlan, _ result: BlockSimulation.Result, databasePath: String) throws -> UUID {
    let log = try SessionLog(path: databasePath)
    let start = LogTime.now()
    func at(_ virtual: Nanoseconds) -> LogTime {
        LogTime(monoNs: start.monoNs &+ Int64(virtual), wallNs: start.wallNs &+ Int64(virtual))
    }
    let (dogId, newDog) = try virtualDog(in: log, notes: "lineupd --simulate --fast")
    let session = SessionRecord(
        dogId: dogId, phase: "simulation", mode: .doubleBlind,
        settings: jsonObject([
            "simulated": "true", "fast": "true", "trials": "\(plan.trials)", "seed": "\(plan.seed)",
            "dog_sensitivity": "\(plan.sensitivity)", "dog_false_alert_rate": "\(plan.falseAlertRate)",
        ]), station: "simulated", time: start)
    var records: [any AppendableRecord] = (newDog.map { [$0] } ?? []) + [session]
    for (index, trial) in result.trials.enumerated() {
        let timing = result.timings[index]
        records.append(
            TrialRecord(
                sessionId: session.id, number: index + 1, seed: plan.seed,
                layout: trial.stations.map {
                    StationSlot(
                        station: $0.station, sampleId: $0.sample.flatMap(UUID.init(uuidString:)), kind: $0.kind,
                        seen: $0.seen)
                }, outcome: trial.outcome, indicatedStation: timing.firstStation.map { $0 + 1 },
                latencyNs: trial.latencyNs, searchNs: Int64(timing.endedAt &- timing.startedAt),
                started: at(timing.startedAt), ended: at(timing.endedAt)))
    }
    records.append(
        SessionEnd(sessionId: session.id, how: .ended, detail: "simulated block finished", time: at(result.endedAt)))
    try log.append(records)
    return session.id
}
