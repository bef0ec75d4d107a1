import Foundation
import Glibc
import StationIO
import Synchronization

/// The hot-path benchmark behind `lineup-bench click`: pulses on one station of the
/// simulated lineup are clicked through the real ALSA library while a storm of edges on the
/// other stations is read, debounced and queued for the log. Measures each click from the
/// edge's timestamp to the samples accepted by ALSA. Not product code: it lives here, beside
/// the log filler, so StationIO holds only what the station runs.
public struct ClickBenchmark {
    public struct Settings: Sendable {
        public var clicks = 1000
        public var interval = 0.020
        public var stormEdgesPerSecond = 10_000
        public var stations = 5
        public var device = "null"
        public var periodFrames = 64
        public var periods = 2
        public var rate = 48_000
        public var debounceMilliseconds = 5.0
        public var realtime = true
        public var lockMemory = true
        /// The engine path with a feeder on the board (its delay and pulse in ms): its line
        /// pulsed after each click by the hot loop, its pulses logged.
        public var feeder: (delayMilliseconds: Int, pulseMilliseconds: Int)? = nil
        public init() {}
    }

    public struct Result: Sendable {
        public var handedLatencies: [UInt64]
        public var onsetLatencies: [UInt64]
        public var stormEdgesInjected: UInt64
        public var edgesRead: UInt64
        public var edgesLogged: UInt64
        public var droppedAtSource: UInt64
        public var ringOverflows: UInt64
        public var failedClicks: UInt64
        public var negotiated: NegotiatedAudio?
        public var realtimeProblem: String?
        public var hotThreadAllocations: Int?
        public var seconds: Double
        /// Clicks the hot loop played, the warm-up's included, where the figures come from the
        /// log (which misses a click whose record the full ring refused); nil otherwise.
        public var clicksPlayed: UInt64? = nil
        /// With a feeder: the times its line went on, and the pulses logged.
        public var feederPulses: UInt64? = nil
        public var feederLogged: Int? = nil
        /// Clicks whose stream the hot thread checked to have played them, and the runs of
        /// failing clicks found (ClickPlayer's sound health).
        public var streamChecks: UInt64 = 0
        public var soundFaults: UInt64 = 0
        /// Peak resident memory (MiB) when the station shut down, before the benchmark read its
        /// log back: the station's figure. Reading the log back formats times in the local time
        /// zone, which maps ICU's time-zone data (3.3 MB more in a debug build) that the clicking station never
        /// touches. Nil where there is no log to read (the fixed handler).
        public var stationPeakMegabytes: Double? = nil

        /// Edges lost: dropped before the hot loop read them, or read and never logged (an edge
        /// the full ring refused is one of these: `ringOverflows` also counts it, so it is not
        /// added again).
        public var dropped: UInt64 { droppedAtSource + (edgesRead - min(edgesRead, edgesLogged)) }
    }

    /// Pulses before measuring: first use of each code path, page faults, caches.
    public static let warmUpClicks = 20

    public static func run(_ s: Settings, allocations: AllocationCounter? = nil) throws(StationIOError) -> Result {
        let lineup = try SimulatedLineup(lineCount: s.stations)
        let player = try ClickPlayer(
            sound: .standard,
            opener: { () throws(StationIOError) -> any PCMDevice in
                try ALSAPlayback(
                    device: s.device, rate: s.rate, channels: 2, periodFrames: s.periodFrames, periods: s.periods)
            }, keepTrying: false)
        let rig = try ClickRig(
            source: lineup, lineCount: s.stations, debounceNanoseconds: UInt64(s.debounceMilliseconds * 1e6), target: 0,
            player: player, skipClicks: warmUpClicks, allocations: allocations)
        rig.start(realtime: s.realtime, lockMemory: s.lockMemory)

        let driven = drive(
            s, lineup: lineup, pulseLine: 0, stormLines: (1..<max(1, s.stations)).map(UInt32.init),
            allocations: allocations)
        let f = rig.finish()
        var result = Result(
            handedLatencies: f.handedLatencies, onsetLatencies: f.onsetLatencies,
            stormEdgesInjected: driven.stormEdges, edgesRead: f.edgesRead, edgesLogged: f.edgesLogged,
            droppedAtSource: lineup.droppedEdges, ringOverflows: f.ringOverflows, failedClicks: f.failedClicks,
            negotiated: player.negotiated, realtimeProblem: f.realtimeProblem,
            hotThreadAllocations: f.hotThreadAllocations,
            seconds: driven.seconds)
        result.streamChecks = player.streamChecks
        result.soundFaults = player.soundFaults
        return result
    }

    /// Drives the simulated lineup: a storm of edges on `stormLines` at the asked rate, and
    /// `warmUpClicks + clicks` pulses on `pulseLine`, each longer than the debounce window.
    /// Counting starts (`allocations.begin()`) after the warm-up. Returns the storm's edges and
    /// the seconds from the first pulse's slot to the end.
    static func drive(
        _ s: Settings, lineup: SimulatedLineup, pulseLine: UInt32, stormLines: [UInt32],
        allocations: AllocationCounter?
    ) -> (stormEdges: UInt64, seconds: Double) {
        // The storm: edges on `stormLines` in turn at the asked rate, each stamped as injected.
        let stormStop = Atomic<Bool>(false)
        let stormCount = Atomic<UInt64>(0)
        let storm = Thread {
            guard s.stormEdgesPerSecond > 0, !stormLines.isEmpty else { return }
            let gap = 1_000_000_000 / UInt64(s.stormEdgesPerSecond)
            var next = MonotonicClock.now()
            var k: UInt64 = 0
            var levels = [Bool](repeating: false, count: stormLines.count)
            while !stormStop.load(ordering: .relaxed) {
                let now = MonotonicClock.now()
                while next <= now {
                    let index = Int(k % UInt64(stormLines.count))
                    levels[index].toggle()
                    lineup.inject(line: stormLines[index], active: levels[index])
                    k += 1
                    next += gap
                }
                MonotonicClock.sleep(until: next)
            }
            stormCount.store(k, ordering: .relaxed)
        }
        storm.start()

        // The pulses (the dog at the target, or the trainer's thumb on the clicker): in, then
        // out after the debounce window. The kernel stamps
        // an edge in its interrupt handler and queues it at once; this thread stands in for it,
        // so it runs SCHED_FIFO too (below the hot thread) and ordinary load cannot slip in
        // between the stamp and the write and be counted as the station's latency.
        var previousPolicy: Int32 = 0
        var previousParam = sched_param()
        pthread_getschedparam(pthread_self(), &previousPolicy, &previousParam)
        if s.realtime {
            var param = sched_param()
            param.sched_priority = 70
            pthread_setschedparam(pthread_self(), SCHED_FIFO, &param)
        }
        defer { pthread_setschedparam(pthread_self(), previousPolicy, &previousParam) }
        let start = MonotonicClock.now() + 10_000_000
        let period = UInt64(s.interval * 1e9)
        var seed: UInt64 = 0x5EED_C11C
        // A nose that comes back within the debounce window of leaving is chatter, not a new
        // indication, and rightly gets no click. If load delays this thread's release, the
        // next pulse waits so that it stays a pulse of its own (a benchmark run under a 20,000
        // events/s log once lost one of 2,500 clicks this way).
        let settle = UInt64(s.debounceMilliseconds * 1e6) + 2_000_000
        var released: UInt64 = 0
        for i in 0..<(s.clicks + warmUpClicks) {
            if i == warmUpClicks {
                MonotonicClock.sleep(until: start + UInt64(i) * period - period / 2)
                allocations?.begin()
            }
            // A little jitter so pulses do not lock to the storm's phase.
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let at = max(start + UInt64(i) * period + (seed >> 33) % (period / 4), released + settle)
            MonotonicClock.sleep(until: at)
            lineup.inject(line: pulseLine, active: true)
            MonotonicClock.sleep(until: at + UInt64(s.debounceMilliseconds * 1e6) + 1_000_000)
            lineup.inject(line: pulseLine, active: false)
            released = MonotonicClock.now()
        }
        // Let the last click and the storm's tail through.
        MonotonicClock.sleep(until: MonotonicClock.now() + 50_000_000)
        stormStop.store(true, ordering: .relaxed)
        while !storm.isFinished { usleep(1000) }
        MonotonicClock.sleep(until: MonotonicClock.now() + 50_000_000)
        let seconds = Double(MonotonicClock.now() - start) / 1e9
        return (stormCount.load(ordering: .relaxed), seconds)
    }
}

/// Peak resident memory (VmHWM) of this process, or of process `pid`, in MiB.
public func peakResidentMegabytes(pid: Int32? = nil) -> Double {
    let path = pid.map { "/proc/\($0)/status" } ?? "/proc/self/status"
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let kb = line.split(separator: " ").compactMap { Double($0) }.first ?? 0
        return kb / 1024
    }
    return 0
}
