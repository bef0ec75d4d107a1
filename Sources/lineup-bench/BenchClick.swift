import ArgumentParser
import Figures
import Glibc
import LineupBench
import StationIO
import StationLogging
import Synchronization
import TrainingEngine

/// Which thread's allocations the interposer's hook counts: the hot thread's only.
nonisolated(unsafe) private var countedThread: pthread_t = 0
private let hotThreadAllocations = Atomic<Int>(0)

private let countHotThreadAllocation: MallocCounter.Hook = { _ in
    if pthread_equal(pthread_self(), countedThread) != 0 { hotThreadAllocations.add(1, ordering: .relaxed) }
}

struct BenchClick: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "click",
        abstract: "Edge-to-click latency on the simulated lineup through the real ALSA library.",
        discussion: """
            Runs the station lineupd runs on the simulated board (the engine on the hot thread, \
            the one ring to the log feeder, a real log in a temporary directory): a trainer-led \
            round is started and each pulse is the trainer's clicker button. Measures each click \
            from the edge's timestamp to the moment ALSA accepted the samples, while a storm of \
            edges on the five stations is read, debounced, judged by the engine and logged. \
            `--handler fixed` runs the older measurement for comparison: a fixed rule clicks on \
            one station's edges, with no engine and no log. Prints one JSON object; `path` says \
            which was measured.

            Examples:
              lineup-bench click
              lineup-bench click --clicks 2000 --storm 20000 --device null
              lineup-bench click --handler fixed --clicks 200
              lineup-bench click --feeder 2,5
            """)

    enum Handler: String, ExpressibleByArgument, CaseIterable {
        case engine, fixed
    }

    @Option(help: "Clicks to measure.") var clicks = 1000
    @Option(help: "Edges per second on the other stations.") var storm = 10_000
    @Option(help: "Milliseconds between pulses at the target station.") var intervalMs = 20.0
    @Option(help: "ALSA device (null discards the samples; a real card measures it too).") var device = "null"
    @Option(help: "Frames per ALSA period.") var periodFrames = 64
    @Option(help: "ALSA periods in the buffer.") var periods = 2
    @Option(help: "What decides on the hot thread: engine (lineupd's) or fixed (a rule, for comparison).")
    var handler: Handler = .engine
    @Option(
        help: ArgumentHelp(
            "A feeder on the board, pulsed after each click: DELAY_MS,PULSE_MS (engine handler only).",
            valueName: "delay,pulse"))
    var feeder: String?
    @Flag(help: "Do not ask for SCHED_FIFO on the hot thread.") var noRealtime = false
    @Flag(
        help:
            "Do not lock memory (mlockall) for the hot thread (--handler fixed: the engine's locks it, as lineupd's does)."
    )
    var noMemoryLock = false

    func validate() throws {
        guard clicks > 0 else { throw ValidationError("--clicks must be at least 1") }
        guard storm >= 0 else { throw ValidationError("--storm cannot be negative") }
        // A pulse lasts the debounce window plus 1 ms; the next must clear the window of its end.
        guard intervalMs >= 16 else { throw ValidationError("--interval-ms must be at least 16") }
        if let feeder {
            guard handler == .engine else { throw ValidationError("--feeder needs --handler engine") }
            guard parsedFeeder(feeder) != nil else {
                throw ValidationError(
                    "--feeder \(feeder): expected DELAY_MS,PULSE_MS, a delay of 0 to 5000 and a pulse of 1 to 5000 (e.g. 2,5)"
                )
            }
        }
        if noMemoryLock && handler == .engine {
            throw ValidationError(
                "--no-memory-lock needs --handler fixed: the engine's hot thread is set up as lineupd's")
        }
    }

    func run() throws {
        var settings = ClickBenchmark.Settings()
        settings.clicks = clicks
        settings.stormEdgesPerSecond = storm
        settings.interval = intervalMs / 1000
        settings.device = device
        settings.periodFrames = periodFrames
        settings.periods = periods
        settings.realtime = !noRealtime
        settings.lockMemory = !noMemoryLock
        settings.feeder = feeder.flatMap(parsedFeeder)
        let preloaded = MallocCounter.preloaded()
        let interposer = try? preloaded.get()
        let counter = interposer.map { interposer in
            AllocationCounter(
                attach: { thread in countedThread = thread },
                begin: {
                    hotThreadAllocations.store(0, ordering: .relaxed)
                    interposer.setHook(countHotThreadAllocation)
                    interposer.start()
                },
                end: {
                    interposer.stop()
                    interposer.setHook(nil)
                    return hotThreadAllocations.load(ordering: .relaxed)
                })
        }
        let result: ClickBenchmark.Result
        do {
            switch handler {
            case .engine: result = try ClickBenchmark.runEngineHandler(settings, allocations: counter)
            case .fixed: result = try ClickBenchmark.run(settings, allocations: counter)
            }
        } catch {
            printError("bench click: \(error)")
            throw ExitCode(1)
        }
        let us = { (ns: UInt64) in Double(ns / 100) / 10 }
        var json = JSONObject()
        json["path"] = handler == .engine ? ClickBenchmark.enginePath : ClickBenchmark.fixedPath
        json["n"] = result.handedLatencies.count
        // Pulses made and clicks kept: any difference is a click the station did not give.
        json["pulses"] = clicks
        // The engine path's figures are the log's: a click it lost is still counted here.
        if let played = result.clicksPlayed {
            json["clicks_played"] = Int(played) - ClickBenchmark.warmUpClicks
        }
        json["p50_us"] = us(percentile(result.handedLatencies, 50))
        json["p99_us"] = us(percentile(result.handedLatencies, 99))
        json["max_us"] = us(result.handedLatencies.max() ?? 0)
        json["storm_eps"] = Int((Double(result.stormEdgesInjected) / result.seconds).rounded())
        json["dropped"] = Int(result.dropped)
        // Records of any kind (edges, clicks, the engine's notes) the full ring refused.
        json["ring_overflows"] = Int(result.ringOverflows)
        // The station's peak: before the engine path reads its log back (ClickBenchmark.Result).
        json["rss_mb"] = ((result.stationPeakMegabytes ?? peakResidentMegabytes()) * 10).rounded() / 10
        json["onset_p50_us"] = us(percentile(result.onsetLatencies, 50))
        json["onset_p99_us"] = us(percentile(result.onsetLatencies, 99))
        json["failed_clicks"] = Int(result.failedClicks)
        json["stream_checks"] = Int(result.streamChecks)
        json["sound_faults"] = Int(result.soundFaults)
        json["edges_read"] = Int(result.edgesRead)
        json["edges_logged"] = Int(result.edgesLogged)
        json["hot_thread_allocations"] =
            result.hotThreadAllocations.map { $0 as Any }
            ?? {
                if case .failure(let why) = preloaded { return "not counted: \(why.reason)" }
                return "not counted"
            }()
        if let pulses = result.feederPulses {
            json["feeder_pulses"] = Int(pulses)
            json["feeder_logged"] = result.feederLogged ?? 0
        }
        json["realtime"] =
            noRealtime
            ? "not asked"
            : result.realtimeProblem.map { "no: \($0)" }
                ?? (noMemoryLock ? "SCHED_FIFO 80" : "SCHED_FIFO 80, memory locked on fault")
        json["audio"] = result.negotiated?.description ?? "none"
        json["cpus"] = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        print(json.render())
    }
}

/// `--feeder DELAY_MS,PULSE_MS` in the ranges `[feeder]` accepts.
private func parsedFeeder(_ text: String) -> (delayMilliseconds: Int, pulseMilliseconds: Int)? {
    let parts = text.split(separator: ",", omittingEmptySubsequences: false)
    guard parts.count == 2, let delay = Int(parts[0]), let pulse = Int(parts[1]), (0...5000).contains(delay),
        (1...5000).contains(pulse)
    else { return nil }
    return (delay, pulse)
}
