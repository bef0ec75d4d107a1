// A whole block in virtual time: layouts, the virtual dog, debounce and the engine, exactly as
// the daemon wires them but with no clock, sound or database. The statistical tests, the
// `bench block` benchmark and `lineupd --simulate --fast` use it.

import Figures
import TrainingEngine

/// When a simulated trial ran, in virtual time.
public struct TrialTiming: Sendable, Hashable {
    public var startedAt: Nanoseconds
    public var endedAt: Nanoseconds
    /// The first station indicated (0-based), if any.
    public var firstStation: Int?
}

public struct BlockSimulation: Sendable {
    public struct Settings: Sendable, Hashable {
        public var lineup: LineupSetup
        public var machine: LineupMachine.Configuration
        public var dog: DogParameters
        public var samples: [Sample]
        public var trials: Int
        public var seed: UInt64
        public var debounce: Nanoseconds
        /// Virtual time the assistant takes to load the containers.
        public var loadingTime: Nanoseconds

        public init(
            lineup: LineupSetup, machine: LineupMachine.Configuration, dog: DogParameters = DogParameters(),
            samples: [Sample] = [], trials: Int, seed: UInt64, debounce: Nanoseconds = 5_000_000,
            loadingTime: Nanoseconds = 20_000_000_000
        ) {
            self.lineup = lineup
            self.machine = machine
            self.dog = dog
            self.samples = samples
            self.trials = trials
            self.seed = seed
            self.debounce = debounce
            self.loadingTime = loadingTime
        }

        /// The research set-up: five stations, one target and four controls, automated, T = 2 s.
        public static func fiveStation(trials: Int, seed: UInt64, dog: DogParameters = DogParameters()) -> Settings {
            let lineup = LineupSetup(stations: 5, targets: 1, controls: 4, noTargetShare: 0, maxSameStationInARow: 2)
            return Settings(
                lineup: lineup,
                machine: LineupMachine.Configuration(
                    mode: .automated, stationCount: 5, hold: 2_000_000_000, holdTolerance: 150_000_000,
                    searchTimeout: 60_000_000_000, interTrialInterval: 10_000_000_000),
                dog: dog, trials: trials, seed: seed)
        }
    }

    public struct Result: Sendable {
        public var scoreboard = Scoreboard()
        /// Each trial as the figures count it, in order, and when it ran (virtual time).
        public var trials: [ScoredTrial] = []
        public var timings: [TrialTiming] = []
        public var clicks = 0
        public var sniffs = 0
        public var indications = 0
        public var rawEdges = 0
        public var debouncedEdges = 0
        /// Virtual time at the end of the block.
        public var endedAt: Nanoseconds = 0
        /// The layouts, for the record (each carries the block seed).
        public var layouts: [TrialLayout] = []
    }

    public let settings: Settings

    public init(settings: Settings) { self.settings = settings }

    /// Runs the block. Layout errors (samples exhausted, impossible constraints) are thrown before
    /// anything runs.
    public func run() throws(LayoutError) -> Result {
        let s = settings
        // Separate streams for layouts and the dog, both from the block seed.
        var layouts = LayoutGenerator(setup: s.lineup, samples: s.samples, seed: s.seed)
        var dog = VirtualDog(parameters: s.dog, seed: s.seed ^ 0xD06_D06_D06)
        // The dog remembers the samples it met before the block, as the layouts count them.
        for sample in s.samples where sample.dogUsageCount > 0 { dog.met[sample.id] = sample.dogUsageCount }
        var debouncer = LeadingEdgeDebouncer(stations: s.lineup.stations, window: s.debounce)
        var machine = LineupMachine(configuration: s.machine)
        var result = Result()
        var observer = TrialObserver(stationCount: s.lineup.stations)
        result.layouts = try layouts.block(count: s.trials)
        var edges: [RawEdge] = []
        edges.reserveCapacity(64)
        var t: Nanoseconds = 0

        func take(_ actions: Actions, _ result: inout Result) {
            for action in actions {
                if case .record(let record) = action { observer.observe(record) }
                switch action {
                case .click: result.clicks += 1
                case .record(.visit(_, _, _, let indicated)): if !indicated { result.sniffs += 1 }
                case .record(.indication): result.indications += 1
                default: break
                }
            }
        }
        func fireTimers(upTo limit: Nanoseconds, _ machine: inout LineupMachine, _ result: inout Result) {
            while let deadline = machine.timerDeadline, deadline <= limit {
                take(machine.timerFired(at: deadline), &result)
            }
        }

        for layout in result.layouts {
            take(machine.load(layout: layout, at: t), &result)
            t &+= s.loadingTime
            take(machine.readyButton(at: t), &result)
            edges.removeAll(keepingCapacity: true)
            debouncer.reset()
            dog.search(layout: layout.stations, startAt: t, into: &edges)
            // Chatter and breaks can interleave with later edges: keep time order.
            edges.sort { $0.at < $1.at }
            result.rawEdges += edges.count
            for edge in edges {
                fireTimers(upTo: edge.at, &machine, &result)
                // Every edge reaches the engine, after the trial too: the dog leaves the station
                // it held, and a nose still present would (rightly) refuse the next start.
                if debouncer.accept(edge) {
                    result.debouncedEdges += 1
                    take(machine.stationEdge(station: edge.station, present: edge.present, at: edge.at), &result)
                }
            }
            // Let the trial time out if it must, then the inter-trial interval pass.
            while machine.activity != .idle, let deadline = machine.timerDeadline {
                take(machine.timerFired(at: deadline), &result)
                t = deadline
            }
            if let trial = machine.lastTrial, trial.trialIndex == layout.trialIndex {
                let scored = ScoredTrial(
                    outcome: trial.outcome, latencyNs: trial.latency.map { Int64(bitPattern: $0) }, layout: layout,
                    seen: observer.stations(visitedMask: trial.visitedMask, indicatedMask: trial.indicatedMask))
                result.trials.append(scored)
                result.timings.append(
                    TrialTiming(
                        startedAt: trial.searchStartedAt, endedAt: trial.endedAt,
                        firstStation: trial.firstIndicationStation))
                result.scoreboard.add(scored, dog: "virtual")
                t = max(t, trial.endedAt)
            }
        }
        result.endedAt = t
        return result
    }
}
