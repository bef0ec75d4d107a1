// Layouts for automated blocks: which sample goes in which station, each trial. Seeded and
// recorded, so a block can be generated again exactly from its seed and its sample list.

/// A physical scent sample as the layout generator sees it.
public struct Sample: Sendable, Hashable, Identifiable {
    public var id: String
    public var kind: SampleKind
    /// How many times the sample may be presented in all (dogs learn individual samples); nil: no limit.
    public var usageLimit: Int?
    /// How many times it has been presented so far.
    public var usageCount: Int
    /// How many times it may be presented to the dog the block is for; nil: no limit.
    public var usageLimitPerDog: Int?
    /// The dog's exposure to it so far (earlier trials of this dog that laid it out); 0: novel.
    public var dogUsageCount: Int
    /// The label on the container, for messages; the id when nil.
    public var label: String?
    /// Its uses on the lab's other stations, as the station last heard (nil: never heard):
    /// in all, and with this dog. The limits count them beside this log's; novelty does not.
    public var usesElsewhere: UsesElsewhere?
    public var dogUsesElsewhere: UsesElsewhere?

    public init(
        id: String, kind: SampleKind, usageLimit: Int? = nil, usageCount: Int = 0, usageLimitPerDog: Int? = nil,
        dogUsageCount: Int = 0, label: String? = nil
    ) {
        self.id = id
        self.kind = kind
        self.usageLimit = usageLimit
        self.usageCount = usageCount
        self.usageLimitPerDog = usageLimitPerDog
        self.dogUsageCount = dogUsageCount
        self.label = label
    }

    /// Presentations in all and with this dog, here and on the lab's other stations.
    public var labUsageCount: Int { usageCount + (usesElsewhere?.uses ?? 0) }
    public var labDogUsageCount: Int { dogUsageCount + (dogUsesElsewhere?.uses ?? 0) }

    /// Presentations left before either limit stops it.
    public var remainingUses: Int {
        min(
            usageLimit.map { max(0, $0 - labUsageCount) } ?? Int.max,
            usageLimitPerDog.map { max(0, $0 - labDogUsageCount) } ?? Int.max)
    }

    /// Whether the dog has never met it.
    public var isNovel: Bool { dogUsageCount == 0 }

    /// Which limit stops it, in words ("T1: used 5 times, max_uses 5"; with the lab's part
    /// "T1: used 9 times (3 here, 6 on other stations as of ...), max_uses 9"), or nil.
    public var limitReached: String? {
        let name = label ?? id
        func parts(_ here: Int, _ elsewhere: UsesElsewhere?) -> String {
            elsewhere.map { " (\(here) here, \($0.uses) on other stations as of \($0.asOf))" } ?? ""
        }
        if let limit = usageLimitPerDog, labDogUsageCount >= limit {
            return
                "\(name): met \(labDogUsageCount) times by this dog\(parts(dogUsageCount, dogUsesElsewhere)), "
                + "max_uses_per_dog \(limit)"
        }
        if let limit = usageLimit, labUsageCount >= limit {
            return "\(name): used \(labUsageCount) times\(parts(usageCount, usesElsewhere)), max_uses \(limit)"
        }
        return nil
    }
}

/// A sample's uses on the lab's other stations, as the lab store said at a pull: the count,
/// and when the store counted it, in words for messages (the engine reads no clock).
public struct UsesElsewhere: Sendable, Hashable {
    public var uses: Int
    public var asOf: String

    public init(uses: Int, asOf: String) {
        self.uses = uses
        self.asOf = asOf
    }
}

/// What one station holds on one trial.
public struct StationContent: Sendable, Hashable {
    public var kind: SampleKind
    /// Nil when no sample of that kind is registered (an anonymous clean container, say).
    public var sampleID: String?
    /// Whether the dog had never met the sample before this trial; nil without a sample, or
    /// when the dog's exposure is not known (hand-made layouts).
    public var novel: Bool?

    public init(kind: SampleKind, sampleID: String? = nil, novel: Bool? = nil) {
        self.kind = kind
        self.sampleID = sampleID
        self.novel = novel
    }
}

/// One trial's layout, with what is needed to generate it again.
public struct TrialLayout: Sendable, Hashable {
    /// The seed of the block this layout belongs to.
    public var blockSeed: UInt64
    /// Position within the block, from 0.
    public var trialIndex: Int
    public var stations: [StationContent]

    public init(blockSeed: UInt64 = 0, trialIndex: Int = 0, stations: [StationContent]) {
        self.blockSeed = blockSeed
        self.trialIndex = trialIndex
        self.stations = stations
    }

    /// A layout from kinds alone (hand-made trials, tests).
    public init(kinds: [SampleKind], trialIndex: Int = 0) {
        self.init(trialIndex: trialIndex, stations: kinds.map { StationContent(kind: $0) })
    }

    /// The station holding the target, if any.
    public var targetStation: Int? { stations.firstIndex { $0.kind == .target } }
    public var kinds: [SampleKind] { stations.map(\.kind) }
}

public enum LayoutError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Fewer samples of a kind than the trial has stations of that kind.
    case samplesExhausted(kind: SampleKind, trialIndex: Int, needed: Int, available: Int)
    /// The run-length limit cannot be met with these counts (e.g. one station and a limit of 1).
    case constraintsUnsatisfiable(String)
    /// Enough samples of the kind were given, but usage limits stop too many of them; `stopped`
    /// names each stopped sample and its limit.
    case usageLimitsReached(kind: SampleKind, trialIndex: Int, needed: Int, available: Int, stopped: [String])
    /// The trial must have samples of the kind the dog has never met (`novel_target_share`,
    /// `novel_only`), and too few are left; `met` names those it has met.
    case novelSamplesExhausted(kind: SampleKind, trialIndex: Int, needed: Int, available: Int, met: [String])

    public var description: String {
        switch self {
        case .samplesExhausted(let kind, let trial, let needed, let available):
            // Each station of a kind holds a different sample; a trial with no target puts one
            // more control (or blank) where the target would have been.
            return
                "trial \(trial + 1): \(needed) different \(kind.rawValue) samples needed (one per \(kind.rawValue) station) "
                + "but only \(available) given"
        case .constraintsUnsatisfiable(let why): return why
        case .usageLimitsReached(let kind, let trial, let needed, let available, let stopped):
            return
                "trial \(trial + 1): \(needed) different \(kind.rawValue) samples needed but only \(available) "
                + "within their usage limits (\(stopped.joined(separator: "; "))): register more samples or raise the limits"
        case .novelSamplesExhausted(let kind, let trial, let needed, let available, let met):
            return
                "trial \(trial + 1): \(needed) \(kind.rawValue) sample(s) this dog has never met needed "
                + "(novel_target_share or novel_only) but only \(available) left"
                + (met.isEmpty ? "" : " (met already: \(met.joined(separator: ", ")))")
                + ": register new samples, or lower the share"
        }
    }
}

/// Generates a block of layouts for a step's lineup.
///
/// - the target's station is balanced over the block (each station gets the target within one
///   time of every other) and never more than `maxSameStationInARow` trials in a row;
/// - a share of trials has no target (`noTargetShare`, rounded to whole trials);
/// - every kind rotates: the samples this dog has met least go first (then the least used
///   overall, then at random), so no sample is presented far more than its peers, and never
///   beyond its usage limits (overall and per dog; the step's `max_uses` and
///   `max_uses_per_dog` for samples without their own);
/// - `novel_target_share` of the trials with a target (rounded half away from zero) are
///   chosen at random to get a target the dog has never met; the other target trials take
///   targets it has met while any is within its limits; `novel_only` makes every sample novel.
public struct LayoutGenerator: Sendable {
    public var setup: LineupSetup
    /// The sample pool, with usage counts updated as layouts are made.
    public private(set) var samples: [Sample]
    public let seed: UInt64
    private var random: SeededGenerator
    /// The trials (by index) whose target must be novel to the dog (`novel_target_share`).
    public private(set) var novelTargetTrials: Set<Int> = []

    public init(setup: LineupSetup, samples: [Sample], seed: UInt64) {
        self.setup = setup
        // The step's limits stand for samples registered without their own.
        self.samples = samples.map {
            var sample = $0
            sample.usageLimit = sample.usageLimit ?? setup.maxUses
            sample.usageLimitPerDog = sample.usageLimitPerDog ?? setup.maxUsesPerDog
            return sample
        }
        self.seed = seed
        self.random = SeededGenerator(seed: seed)
    }

    /// Chooses which of the trials with a target get a novel target: `novelTargetShare` of
    /// them, rounded half away from zero, at random. Called by `block`; a planned sheet's
    /// caller gives its own trials with a target.
    public mutating func chooseNovelTargetTrials(among trialsWithTarget: [Int]) {
        let count = Int((Double(trialsWithTarget.count) * setup.novelTargetShare).rounded())
        var order = trialsWithTarget
        random.shuffle(&order)
        novelTargetTrials = Set(order.prefix(count))
    }

    /// The target's station for each trial of a block of `count` (nil: no target).
    public mutating func targetStations(count: Int) throws(LayoutError) -> [Int?] {
        guard count > 0 else { return [] }
        guard setup.targets == 1 else { return Array(repeating: nil, count: count) }
        let noTarget = Int((Double(count) * setup.noTargetShare).rounded())
        let withTarget = count - noTarget
        let n = setup.stations
        // Balanced: every station gets floor(withTarget / n), the remainder goes to random stations.
        var remaining = Array(repeating: withTarget / n, count: n)
        var extra = Array(0..<n)
        random.shuffle(&extra)
        for s in extra.prefix(withTarget % n) { remaining[s] += 1 }
        // Which trials have no target: a random choice.
        var slots = Array(repeating: true, count: count)
        var order = Array(0..<count)
        random.shuffle(&order)
        for i in order.prefix(noTarget) { slots[i] = false }

        let k = setup.maxSameStationInARow
        // Greedy with weighted draws; a dead end restarts from the same counts. The balanced
        // counts make a dead end rare, and it only costs a retry.
        for _ in 0..<1000 {
            var left = remaining
            var result: [Int?] = []
            result.reserveCapacity(count)
            var last = -1
            var run = 0
            var stuck = false
            for hasTarget in slots {
                guard hasTarget else {
                    result.append(nil)
                    last = -1
                    run = 0
                    continue
                }
                var total = 0
                for s in 0..<n where left[s] > 0 && !(s == last && run >= k) { total += left[s] }
                guard total > 0 else {
                    stuck = true
                    break
                }
                var pick = random.below(total)
                var chosen = 0
                for s in 0..<n where left[s] > 0 && !(s == last && run >= k) {
                    if pick < left[s] {
                        chosen = s
                        break
                    }
                    pick -= left[s]
                }
                left[chosen] -= 1
                run = chosen == last ? run + 1 : 1
                last = chosen
                result.append(chosen)
            }
            if !stuck { return result }
        }
        throw .constraintsUnsatisfiable(
            "cannot place the target on \(withTarget) trials over \(n) station(s) with at most \(k) in a row"
        )
    }

    /// A block of `count` layouts. Usage counts in `samples` are advanced as it goes.
    public mutating func block(count: Int) throws(LayoutError) -> [TrialLayout] {
        let targets = try targetStations(count: count)
        if setup.novelTargetShare > 0 {
            chooseNovelTargetTrials(among: targets.indices.filter { targets[$0] != nil })
        }
        var layouts: [TrialLayout] = []
        layouts.reserveCapacity(count)
        for (i, target) in targets.enumerated() {
            layouts.append(try layout(trialIndex: i, targetStation: target))
        }
        return layouts
    }

    /// One layout with the target (if any) at `targetStation`.
    public mutating func layout(trialIndex: Int, targetStation: Int?) throws(LayoutError)
        -> TrialLayout
    {
        var kinds: [SampleKind] = []
        kinds += Array(repeating: .control, count: setup.controls)
        kinds += Array(repeating: .blank, count: setup.blanks)
        kinds += Array(repeating: .distractor, count: setup.distractors)
        if setup.targets == 1 && targetStation == nil { kinds.append(setup.fillerKind) }
        random.shuffle(&kinds)
        var stationKinds: [SampleKind] = []
        var next = 0
        for s in 0..<setup.stations {
            if s == targetStation {
                stationKinds.append(.target)
            } else if next < kinds.count {
                stationKinds.append(kinds[next])
                next += 1
            } else {
                stationKinds.append(.blank)
            }
        }
        return try layout(trialIndex: trialIndex, kinds: stationKinds)
    }

    /// One layout whose kinds are given station by station (a researcher's planned sheet),
    /// filled with samples as the generated ones are. Usage counts in `samples` advance.
    public mutating func layout(trialIndex: Int, kinds stationKinds: [SampleKind]) throws(LayoutError) -> TrialLayout {
        // Pick samples kind by kind: least met by this dog first, then least used, ties at random.
        var contents = stationKinds.map { StationContent(kind: $0) }
        for kind in SampleKind.allCases {
            let stationsOfKind = stationKinds.indices.filter { stationKinds[$0] == kind }
            guard !stationsOfKind.isEmpty else { continue }
            var pool = samples.indices.filter { samples[$0].kind == kind }
            guard !pool.isEmpty else { continue }  // anonymous containers of that kind
            guard pool.count >= stationsOfKind.count else {
                throw .samplesExhausted(
                    kind: kind, trialIndex: trialIndex, needed: stationsOfKind.count, available: pool.count)
            }
            random.shuffle(&pool)
            let within = pool.filter { samples[$0].remainingUses > 0 }
            guard within.count >= stationsOfKind.count else {
                throw .usageLimitsReached(
                    kind: kind, trialIndex: trialIndex, needed: stationsOfKind.count, available: within.count,
                    stopped: pool.compactMap { samples[$0].limitReached }.sorted())
            }
            pool = within
            let mustBeNovel = setup.novelOnly || (kind == .target && novelTargetTrials.contains(trialIndex))
            if mustBeNovel {
                pool = pool.filter { samples[$0].isNovel }
                guard pool.count >= stationsOfKind.count else {
                    throw .novelSamplesExhausted(
                        kind: kind, trialIndex: trialIndex, needed: stationsOfKind.count, available: pool.count,
                        met: within.filter { !samples[$0].isNovel }.map { samples[$0].label ?? samples[$0].id }
                            .sorted())
                }
            }
            // With a novel share, the other target trials keep the novel targets for the
            // trials that need them: samples the dog has met go first.
            let metFirst = kind == .target && setup.novelTargetShare > 0 && !mustBeNovel
            // Stable sort keeps the random tie order.
            let chosen = pool.enumerated().sorted {
                let a = samples[$0.element]
                let b = samples[$1.element]
                return (metFirst && a.isNovel ? 1 : 0, a.dogUsageCount, a.usageCount, $0.offset)
                    < (metFirst && b.isNovel ? 1 : 0, b.dogUsageCount, b.usageCount, $1.offset)
            }.prefix(stationsOfKind.count).map(\.element)
            for (station, sampleIndex) in zip(stationsOfKind, chosen) {
                contents[station].sampleID = samples[sampleIndex].id
                contents[station].novel = samples[sampleIndex].isNovel
                samples[sampleIndex].usageCount += 1
                samples[sampleIndex].dogUsageCount += 1
            }
        }
        return TrialLayout(blockSeed: seed, trialIndex: trialIndex, stations: contents)
    }
}

/// Kept with a running session (the station's resume file), so a session cut short goes on
/// with the same layouts.
extension StationContent: Codable {}
extension TrialLayout: Codable {}
