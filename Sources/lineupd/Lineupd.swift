import ArgumentParser
import Figures
import Foundation
import Glibc
import SessionLog
import StationConfig
import StationControl
import StationIO
import StationLogging
import StationRuntime
import Thresholds
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
            "With --simulate: go on with the block cut short on this log (a crash, a kill, a power cut) instead of starting one: its trials, seed and committed layouts are the block's own; the trial cut short is logged interrupted."
    )
    var resume = false

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
        name: .customLong("memorise-after"),
        help: ArgumentHelp(
            "The virtual dog memorises samples: at a target it has met N times or more it holds with --familiar-sensitivity instead of --sensitivity.",
            valueName: "N"))
    var memoriseAfter: Int?

    @Option(
        name: .customLong("familiar-sensitivity"),
        help: "With --memorise-after: its chance of holding at a target it has met that often.")
    var familiarSensitivity = 0.98

    @Option(
        name: .customLong("dog-threshold"),
        help: ArgumentHelp(
            "With --serve: the virtual dog has a detection threshold (issue 38): at a target dilution of a threshold step it holds with a logistic curve's chance at the dilution's concentration (in the ladder's own unit; a dilution factor F is 1/F), half-way up at C.",
            valueName: "C"))
    var dogThreshold: Double?

    @Option(
        name: .customLong("dog-threshold-width"),
        help: "With --dog-threshold: the curve's width in decades of concentration (from 10 % to 90 % of the way up).")
    var dogThresholdWidth = 0.5

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
            "With --simulate: a broken sensor on the simulated lineup, repeatable: stuck (active from just after the start cue, and stays), chatter (toggles every 1 ms through each search), dead (never active); or a failing sound device, with no station: sound-not-taken (writes take no frames), sound-stalled (the stream does not play), sound-error (writes fail with EIO); from trial FIRST (default 1) to LAST (default: the end).",
            valueName: "kind:station[@first[-last]] | sound-kind[@first[-last]]"))
    var faults: [String] = []

    func run() throws {
        // Before any thread starts, so that every thread shares it (MallocArena.swift says why).
        useOneMallocArena()
        StationLogging.bootstrap(program: "lineupd")
        guard trials >= 1 && trials <= 100_000 else { fail("--trials must be between 1 and 100000") }
        guard sensitivity >= 0 && sensitivity <= 1 else { fail("--sensitivity must be between 0 and 1") }
        guard falseAlertRate >= 0 && falseAlertRate <= 1 else { fail("--false-alert-rate must be between 0 and 1") }
        guard speed.isFinite && speed >= 1 && speed <= 1000 else { fail("--speed must be between 1 and 1000") }
        if let memoriseAfter, memoriseAfter < 1 { fail("--memorise-after must be at least 1, not \(memoriseAfter)") }
        guard familiarSensitivity >= 0 && familiarSensitivity <= 1 else {
            fail("--familiar-sensitivity must be between 0 and 1")
        }
        if memoriseAfter != nil && fast {
            fail("--memorise-after needs samples to remember, which --fast does not lay out: leave out --fast")
        }
        if let dogThreshold, !(dogThreshold.isFinite && dogThreshold > 0) {
            fail("--dog-threshold must be a concentration above 0, not \(dogThreshold)")
        }
        guard dogThresholdWidth.isFinite && dogThresholdWidth > 0 && dogThresholdWidth <= 10 else {
            fail("--dog-threshold-width must be above 0 and at most 10 decades, not \(dogThresholdWidth)")
        }
        if dogThreshold != nil && !serve {
            fail("--dog-threshold is for --simulate --serve, which runs threshold steps")
        }
        if memoriseAfter == nil && familiarSensitivity != 0.98 {
            fail("--familiar-sensitivity is for a memorising virtual dog: give --memorise-after N too")
        }

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
                fail(
                    "--fault breaks a simulated sensor or the sound: it needs --simulate, and the simulated lineup (not --fast)"
                )
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
        if resume && !simulate {
            fail("--resume is for --simulate (a station resumes with `lineupctl session resume`)")
        }
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
        if resume && (serve || fast) {
            fail(
                "--resume goes on with a simulated block (lineupd --simulate --resume); a served station resumes with `lineupctl session resume`, and --fast logs nothing to resume"
            )
        }
        let db = self.db ?? "./lineup.db"
        var plan = BlockPlan(
            board: board, trials: trials, seed: seed ?? UInt64.random(in: 1...999_999), sensitivity: sensitivity,
            falseAlertRate: falseAlertRate, speed: fast ? 1 : speed, faults: injected)
        plan.memorising = memoriseAfter.map { Memorising(after: $0, familiarSensitivity: familiarSensitivity) }
        plan.threshold = dogThreshold.map {
            // No guess term (the lineup's other stations are the dog's guesses) and no lapse.
            PsychometricCurve(
                form: .logistic, log10Threshold: log10($0), width: dogThresholdWidth, guessRate: 0, lapseRate: 0)
        }
        if fast {
            try runFast(plan, databasePath: self.db)
        } else if serve {
            let status = StationDaemon(
                configPath: config, board: board, databasePath: db, socketPath: socketPath, group: group,
                realtime: !noRealtime, dog: noVirtualDog ? nil : plan.dog, speed: speed, simulated: true,
                programsDirectory: programsDirectory, faults: injected,
                soundFaults: injected.contains(where: \.isSound) ? SoundFaultSwitch() : nil
            ).run()
            if status != 0 { throw ExitCode(status) }
        } else {
            let status = SimulatedBlock(plan: plan, databasePath: db, realtime: !noRealtime, resume: resume).run()
            if status != 0 { throw ExitCode(status) }
        }
    }
}

/// One line on stderr (the station's logger), then exit status 1.
func fail(_ message: String) -> Never {
    Log.station.error("\(message)")
    exit(1)
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
