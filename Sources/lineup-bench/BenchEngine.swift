import ArgumentParser
import Figures
import Foundation
import TrainingEngine
import VirtualDog

#if canImport(Glibc)
    import Glibc
#endif

/// Monotonic now in nanoseconds: benchmarks time themselves; the engine never reads a clock.
func monotonicNow() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Times the hot decision: an edge or timer that completes an indication at the target and
/// answers with the click. Allocations are counted around the decision calls only.
struct BenchEngine: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "engine",
        abstract: "Time the engine's click decision (indication at the target) and count its allocations."
    )

    @Option(help: "Decisions to time (half completed by a timer, half by a returning edge).")
    var iterations = 200_000

    func run() throws {
        let preloaded = MallocCounter.preloaded()
        let interposer = try? preloaded.get()
        let hold: Nanoseconds = 2_000_000_000
        var machine = LineupMachine(
            configuration: LineupMachine.Configuration(
                mode: .automated, stationCount: 5, hold: hold, holdTolerance: 150_000_000,
                searchTimeout: 60_000_000_000, interTrialInterval: 1_000_000_000))
        let layouts = (0..<5).map { target in
            TrialLayout(kinds: (0..<5).map { $0 == target ? SampleKind.target : .control })
        }
        var samples = [UInt64](repeating: 0, count: iterations)
        var mallocs = 0
        var clicks = 0
        var t: Nanoseconds = 1_000_000_000
        interposer?.reset()
        for i in 0..<iterations {
            let layout = layouts[i % 5]
            let target = i % 5
            _ = machine.load(layout: layout, at: t)
            _ = machine.readyButton(at: t)
            let arrival = t + 500_000_000
            _ = machine.stationEdge(station: target, present: true, at: arrival)
            let answer: Actions
            if i % 2 == 0 {
                // Completed by the hold timer.
                let fire = arrival + hold
                interposer?.start()
                let start = monotonicNow()
                answer = machine.timerFired(at: fire)
                let end = monotonicNow()
                interposer?.stop()
                samples[i] = end - start
                t = fire
            } else {
                // Completed by the edge returning from a brief break after T had passed.
                _ = machine.stationEdge(station: target, present: false, at: arrival + hold - 50_000_000)
                _ = machine.timerFired(at: arrival + hold)  // T passes during the break: no indication yet
                let back = arrival + hold + 50_000_000
                interposer?.start()
                let start = monotonicNow()
                answer = machine.stationEdge(station: target, present: true, at: back)
                let end = monotonicNow()
                interposer?.stop()
                samples[i] = end - start
                t = back
            }
            if case .click = answer[0] { clicks += 1 }
            // Through the inter-trial interval to idle.
            while let d = machine.timerDeadline {
                _ = machine.timerFired(at: d)
                t = d
            }
            t += 1_000_000
        }
        if let interposer { mallocs = Int(interposer.mallocCount) }
        // The engine's one quantile (docs/figures.md, "Quantiles"), as every figure.
        var json =
            "{\"n\":\(iterations),\"clicks\":\(clicks),\"p50_ns\":\(percentile(samples, 50)),"
            + "\"p99_ns\":\(percentile(samples, 99)),\"p999_ns\":\(percentile(samples, 99.9)),"
            + "\"max_ns\":\(samples.max() ?? 0),"
        if case .failure(let why) = preloaded {
            json += "\"mallocs_on_decision\":null,\"note\":\"not counted: \(why.reason)\"}"
        } else {
            json += "\"mallocs_on_decision\":\(mallocs)}"
        }
        print(json)
    }
}

/// Runs a simulated block in virtual time: layouts, virtual dog, debounce, engine, scoring.
struct BenchBlock: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "block",
        abstract: "Time a simulated block of trials (5 stations, virtual dog) in virtual time."
    )

    @Option(help: "Trials in the block.")
    var trials = 10_000

    @Option(help: "Seed for layouts and the virtual dog.")
    var seed: UInt64 = 1

    @Option(help: "The dog's sensitivity.")
    var sensitivity = 0.71

    @Option(help: "The dog's false-alert rate per non-target station it examines.")
    var falseAlertRate = 0.07

    func run() throws {
        var settings = BlockSimulation.Settings.fiveStation(
            trials: trials, seed: seed,
            dog: DogParameters(
                sensitivity: sensitivity, falseAlertRate: falseAlertRate, chatterToggles: 2, holdBreakChance: 0.2))
        settings.lineup.noTargetShare = 0.1
        let start = monotonicNow()
        let result = try BlockSimulation(settings: settings).run()
        let seconds = Double(monotonicNow() - start) / 1e9
        struct Report: Encodable {
            var trials: Int
            var seed: UInt64
            var seconds: Double
            var trials_per_second: Double
            var clicks: Int
            var sniffs: Int
            var raw_edges: Int
            var debounced_edges: Int
            var virtual_seconds: Double
            /// The block's figures, from the one implementation (`Tally`).
            var figures: Figures
        }
        let report = Report(
            trials: trials, seed: seed, seconds: seconds, trials_per_second: Double(trials) / max(seconds, 1e-9),
            clicks: result.clicks, sniffs: result.sniffs, raw_edges: result.rawEdges,
            debounced_edges: result.debouncedEdges, virtual_seconds: Double(result.endedAt) / 1e9,
            figures: result.scoreboard.overall.figures)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(report), as: UTF8.self))
    }
}
