// Every figure a researcher may publish is defined here, once, and computed by `Tally`.
// lineupd's summary, `--fast`, `lineupctl stats` (each grouping), `session show`, and the
// exports' recomputation all go through it. README, "What the figures mean", gives each
// definition with its formula, a worked example and the references.
//
// The rule, per station of each scored (not aborted) trial, from what that station saw:
//   target:                indicated at any time in the trial -> hit, else -> miss;
//   control or distractor: indicated -> false alert; visited and not indicated -> correct
//                          rejection; never visited -> not examined (left out of specificity:
//                          an early hit must not count as controls the dog passed);
//   blank:                 counted apart (blank indicated / passed / not examined), never in
//                          sensitivity or specificity: a clean container is not a control, and
//                          including it would flatter specificity in early steps.

import TrainingEngine

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What one station saw in one trial, in the trainer's terms. Recorded since log schema v3.
public struct StationSeen: Sendable, Hashable, Codable {
    /// The dog's nose was at the station at least once during the search.
    public var visited: Bool
    /// The dog held an indication there at least once.
    public var indicated: Bool
    /// From the start cue to the first indication completed there.
    public var firstIndicationNs: Int64?
    /// Nose visits that did not become an indication.
    public var sniffs: Int
    /// Total time the nose spent at the station, indications included.
    public var dwellNs: Int64

    public init(visited: Bool, indicated: Bool, firstIndicationNs: Int64? = nil, sniffs: Int = 0, dwellNs: Int64 = 0) {
        self.visited = visited
        self.indicated = indicated
        self.firstIndicationNs = firstIndicationNs
        self.sniffs = sniffs
        self.dwellNs = dwellNs
    }
}

/// One station of a scored trial: what stood there and what it saw.
public struct StationObservation: Sendable, Hashable, Codable {
    /// 1-based, as the stations are numbered on the lineup.
    public var station: Int
    public var kind: SampleKind
    /// The sample that sat there (its id), nil for a blank without one.
    public var sample: String?
    /// Nil for trials logged before the log kept what each station saw.
    public var seen: StationSeen?

    public init(station: Int, kind: SampleKind, sample: String? = nil, seen: StationSeen?) {
        self.station = station
        self.kind = kind
        self.sample = sample
        self.seen = seen
    }
}

/// A trial as the figures see it.
public struct ScoredTrial: Sendable, Hashable {
    public var outcome: TrialOutcome
    /// From the start cue to the first indication anywhere, if there was one.
    public var latencyNs: Int64?
    public var stations: [StationObservation]

    public init(outcome: TrialOutcome, latencyNs: Int64?, stations: [StationObservation]) {
        self.outcome = outcome
        self.latencyNs = latencyNs
        self.stations = stations
    }

    /// Whether every station's view was recorded (schema v3 and later).
    public var hasStationData: Bool { stations.allSatisfy { $0.seen != nil } }
}

/// What a station's presentation counts as: the one rule (see the top of this file).
public enum StationVerdict: String, Sendable, Hashable, CaseIterable {
    case hit, miss
    case falseAlert = "false-alert"
    case correctRejection = "correct-rejection"
    case notExamined = "not-examined"
    case blankIndicated = "blank-indicated"
    case blankPassed = "blank-passed"
    case blankNotExamined = "blank-not-examined"

    public init(kind: SampleKind, seen: StationSeen) {
        switch kind {
        case .target:
            self = seen.indicated ? .hit : .miss
        case .control, .distractor:
            self = seen.indicated ? .falseAlert : (seen.visited ? .correctRejection : .notExamined)
        case .blank:
            self = seen.indicated ? .blankIndicated : (seen.visited ? .blankPassed : .blankNotExamined)
        }
    }
}

/// Trial outcomes counted (each trial once, by the outcome the station gave it).
public struct OutcomeCounts: Sendable, Hashable, Codable {
    public var trials = 0
    public var hits = 0
    public var misses = 0
    public var falseAlerts = 0
    public var correctRejections = 0
    public var aborted = 0

    /// Trials that were scored (not aborted).
    public var scored: Int { trials - aborted }
    /// Hits and correct rejections: the trials `TrialOutcome.isCorrect` counts.
    public var correct: Int { hits + correctRejections }

    public init() {}

    public mutating func add(_ outcome: TrialOutcome, count: Int = 1) {
        trials += count
        switch outcome {
        case .hit: hits += count
        case .miss: misses += count
        case .falseAlert: falseAlerts += count
        case .correctRejection: correctRejections += count
        case .aborted: aborted += count
        }
    }
}

/// Station presentations counted by verdict.
public struct PresentationCounts: Sendable, Hashable, Codable {
    public var hits = 0
    public var misses = 0
    public var falseAlerts = 0
    public var correctRejections = 0
    public var notExamined = 0
    public var blankIndicated = 0
    public var blankPassed = 0
    public var blankNotExamined = 0

    public init() {}

    public mutating func add(_ verdict: StationVerdict) {
        switch verdict {
        case .hit: hits += 1
        case .miss: misses += 1
        case .falseAlert: falseAlerts += 1
        case .correctRejection: correctRejections += 1
        case .notExamined: notExamined += 1
        case .blankIndicated: blankIndicated += 1
        case .blankPassed: blankPassed += 1
        case .blankNotExamined: blankNotExamined += 1
        }
    }

    /// Every station the dog indicated, blanks included.
    public var indications: Int { hits + falseAlerts + blankIndicated }
}

/// The project's one quantile, used by every figure with a percentile in it: latency's median
/// and IQR, the report's click p50/p99, the benchmarks' and `selftest`'s p50/p99, the log
/// writer's batch and durability p50/p99 in `status`. R's type 7 (its default, and numpy's):
/// h = (n - 1) p, interpolated linearly between the order statistics around it, so p = 0 is
/// the least value and p = 1 the greatest. `sorted` must be in ascending order and not empty.
/// docs/figures.md, "Quantiles", says why this one and gives a worked example.
public func quantile(_ sorted: [Double], _ p: Double) -> Double {
    precondition(!sorted.isEmpty, "quantile of no values")
    let h = Double(sorted.count - 1) * min(1, max(0, p))
    let lower = Int(h.rounded(.down))
    let upper = min(sorted.count - 1, lower + 1)
    return sorted[lower] + (h - Double(lower)) * (sorted[upper] - sorted[lower])
}

/// `quantile` over nanosecond counts in any order, `percent` in 0...100, rounded to the
/// nearest nanosecond; 0 for no values (the benchmarks print 0 when nothing was clicked).
public func percentile(_ nanoseconds: [UInt64], _ percent: Double) -> UInt64 {
    guard !nanoseconds.isEmpty else { return 0 }
    return UInt64(quantile(nanoseconds.sorted().map { Double($0) }, percent / 100).rounded())
}

/// A median with its interquartile range, in milliseconds (`quantile`, R's type 7).
public struct Spread: Sendable, Hashable, Codable {
    public var n: Int
    public var median: Double
    public var q1: Double
    public var q3: Double

    public init?(milliseconds values: [Double]) {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        n = sorted.count
        median = quantile(sorted, 0.5)
        q1 = quantile(sorted, 0.25)
        q3 = quantile(sorted, 0.75)
    }
}

/// The figures of one group of trials (a dog, a session, a sample, a station, a block).
public struct Figures: Sendable, Hashable, Codable {
    /// Trial-level outcomes.
    public var results: OutcomeCounts
    /// (hits + correct rejections) / scored trials, trial level: what graduation criteria count.
    public var trialAccuracy: Proportion
    /// Station-level counts (trials with station data only).
    public var presentations: PresentationCounts
    /// hits / (hits + misses), station level.
    public var sensitivity: Proportion
    /// correct rejections / (correct rejections + false alerts): examined controls and distractors.
    public var specificity: Proportion
    /// Positive predictive value: hits / every station indicated (blanks included).
    public var positivePredictiveValue: Proportion
    /// Non-target stations indicated (false alerts + blank indications) per scored trial.
    public var falseAlertsPerTrial: Double?
    /// d′ = z(H) − z(F) with the log-linear correction (Hautus 1995): H = (hits + 0.5) /
    /// (hits + misses + 1), F = (false alerts + 0.5) / (false alerts + correct rejections + 1).
    public var dPrime: Double?
    /// Criterion c = −(z(H) + z(F)) / 2, same rates; positive is conservative.
    public var criterion: Double?
    /// Latency from the start cue to the first indication, over trials (or, by station and
    /// sample, over the station's indications).
    public var latency: Spread?
    /// Scored trials logged before the log kept what each station saw: in `results` and
    /// `trialAccuracy`, left out of every station-level figure.
    public var trialsWithoutStationData: Int
}

extension Figures {
    /// False alerts over examined controls and distractors (1 − specificity, same counts).
    public var falseAlertRate: Proportion {
        Proportion(
            successes: presentations.falseAlerts, trials: presentations.falseAlerts + presentations.correctRejections)
    }
}

/// Counts a group of trials; `figures` gives the group's figures. The one implementation.
public struct Tally: Sendable, Hashable {
    public private(set) var results = OutcomeCounts()
    public private(set) var presentations = PresentationCounts()
    /// Scored trials whose station data was counted.
    public private(set) var scoredWithStations = 0
    public private(set) var trialsWithoutStationData = 0
    public private(set) var latenciesNs: [Int64] = []

    public init() {}

    /// Adds a whole trial: each of its stations, its outcome and latency (groups by dog,
    /// session, or a whole block).
    public mutating func add(_ trial: ScoredTrial) {
        results.add(trial.outcome)
        guard trial.outcome != .aborted else { return }
        if let latency = trial.latencyNs { latenciesNs.append(latency) }
        guard trial.hasStationData else {
            trialsWithoutStationData += 1
            return
        }
        scoredWithStations += 1
        for station in trial.stations {
            if let seen = station.seen { presentations.add(StationVerdict(kind: station.kind, seen: seen)) }
        }
    }

    /// Adds one station of a trial (groups by station or by sample): the trial's outcome, the
    /// station's verdict, and the time of the station's first indication.
    public mutating func add(_ trial: ScoredTrial, station: StationObservation) {
        results.add(trial.outcome)
        guard trial.outcome != .aborted else { return }
        // A trial's station data is whole or absent; either way the trial decides.
        guard trial.hasStationData, let seen = station.seen else {
            trialsWithoutStationData += 1
            return
        }
        scoredWithStations += 1
        presentations.add(StationVerdict(kind: station.kind, seen: seen))
        if seen.indicated, let first = seen.firstIndicationNs { latenciesNs.append(first) }
    }

    /// Adds another group's counts: a pooled group (consecutive sessions pooled into one point
    /// of a long learning curve) counted exactly as if its trials had been added here.
    public mutating func add(_ other: Tally) {
        results.trials += other.results.trials
        results.hits += other.results.hits
        results.misses += other.results.misses
        results.falseAlerts += other.results.falseAlerts
        results.correctRejections += other.results.correctRejections
        results.aborted += other.results.aborted
        let q = other.presentations
        presentations.hits += q.hits
        presentations.misses += q.misses
        presentations.falseAlerts += q.falseAlerts
        presentations.correctRejections += q.correctRejections
        presentations.notExamined += q.notExamined
        presentations.blankIndicated += q.blankIndicated
        presentations.blankPassed += q.blankPassed
        presentations.blankNotExamined += q.blankNotExamined
        scoredWithStations += other.scoredWithStations
        trialsWithoutStationData += other.trialsWithoutStationData
        latenciesNs += other.latenciesNs
    }

    public var figures: Figures {
        let p = presentations
        let hitRate = Self.logLinear(p.hits, p.hits + p.misses)
        let alarmRate = Self.logLinear(p.falseAlerts, p.falseAlerts + p.correctRejections)
        var dPrime: Double? = nil
        var criterion: Double? = nil
        if p.hits + p.misses > 0 && p.falseAlerts + p.correctRejections > 0 {
            let zH = inverseNormal(hitRate)
            let zF = inverseNormal(alarmRate)
            dPrime = zH - zF
            criterion = -(zH + zF) / 2
        }
        return Figures(
            results: results,
            trialAccuracy: Proportion(successes: results.correct, trials: results.scored),
            presentations: p,
            sensitivity: Proportion(successes: p.hits, trials: p.hits + p.misses),
            specificity: Proportion(successes: p.correctRejections, trials: p.correctRejections + p.falseAlerts),
            positivePredictiveValue: Proportion(successes: p.hits, trials: p.indications),
            falseAlertsPerTrial: scoredWithStations > 0
                ? Double(p.falseAlerts + p.blankIndicated) / Double(scoredWithStations) : nil,
            dPrime: dPrime, criterion: criterion,
            latency: Spread(milliseconds: latenciesNs.map { Double($0) / 1e6 }),
            trialsWithoutStationData: trialsWithoutStationData)
    }

    /// Hautus (1995): add 0.5 to the count and 1 to the number of trials, for every cell, so
    /// rates of 0 and 1 (common in small lineup blocks) give a finite z.
    static func logLinear(_ count: Int, _ trials: Int) -> Double {
        (Double(count) + 0.5) / (Double(trials) + 1)
    }
}

/// The standard normal quantile, Φ⁻¹(p) for 0 < p < 1 (Acklam's rational approximation,
/// relative error under 1.2e-9, refined by one Halley step on erfc).
public func inverseNormal(_ p: Double) -> Double {
    precondition(p > 0 && p < 1, "inverseNormal needs 0 < p < 1")
    let a = [
        -3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02,
        -3.066479806614716e+01, 2.506628277459239e+00,
    ]
    let b = [
        -5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01,
        -1.328068155288572e+01,
    ]
    let c = [
        -7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00,
        4.374664141464968e+00, 2.938163982698783e+00,
    ]
    let d = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00]
    let low = 0.02425
    var x: Double
    if p < low {
        let q = (-2 * log(p)).squareRoot()
        x =
            (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
            / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    } else if p <= 1 - low {
        let q = p - 0.5
        let r = q * q
        x =
            (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q
            / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
    } else {
        let q = (-2 * log(1 - p)).squareRoot()
        x =
            -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
            / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    }
    // One Halley step against Φ(x) = erfc(−x/√2)/2 brings it to full double precision.
    let e = 0.5 * erfc(-x / 2.0.squareRoot()) - p
    let u = e * (2 * Double.pi).squareRoot() * exp(x * x / 2)
    x = x - u / (1 + x * u / 2)
    return x
}

/// Follows a trial's search as its records arrive and gives what each station saw. Fed by
/// the station's log feeder and by `BlockSimulation` alike, so both record the same thing.
public struct TrialObserver: Sendable {
    private var startedAt: Nanoseconds = 0
    private var seen: [StationSeen]

    public init(stationCount: Int) {
        seen = Array(repeating: StationSeen(visited: false, indicated: false), count: stationCount)
    }

    /// A new search: forget the last one.
    public mutating func searchStarted(at t: Nanoseconds) {
        startedAt = t
        for i in seen.indices { seen[i] = StationSeen(visited: false, indicated: false) }
    }

    /// Takes one of the engine's records; others are ignored.
    public mutating func observe(_ record: Record) {
        switch record {
        case .searchStarted(_, let at):
            searchStarted(at: at)
        case .visit(let station, let from, let to, let indicated):
            visit(station: station, from: from, to: to, indicated: indicated)
        case .indication(let station, _, let at, _):
            indication(station: station, at: at)
        default:
            break
        }
    }

    /// A nose visit ended (0-based station).
    public mutating func visit(station: Int, from: Nanoseconds, to: Nanoseconds, indicated: Bool) {
        guard seen.indices.contains(station) else { return }
        seen[station].visited = true
        seen[station].dwellNs &+= Int64(bitPattern: to &- from)
        if !indicated { seen[station].sniffs += 1 }
    }

    /// An indication completed (0-based station).
    public mutating func indication(station: Int, at: Nanoseconds) {
        guard seen.indices.contains(station) else { return }
        seen[station].visited = true
        seen[station].indicated = true
        if seen[station].firstIndicationNs == nil {
            seen[station].firstIndicationNs = Int64(bitPattern: at &- startedAt)
        }
    }

    /// What each station saw. The hot loop's masks, when given, are the authority on visits and
    /// indications (a record lost to a full ring must not turn an indication into a pass).
    public func stations(visitedMask: UInt64? = nil, indicatedMask: UInt64? = nil) -> [StationSeen] {
        seen.enumerated().map { index, s in
            var s = s
            if index < 64 {
                let bit: UInt64 = 1 << UInt64(index)
                if let visitedMask, visitedMask & bit != 0 { s.visited = true }
                if let indicatedMask, indicatedMask & bit != 0 {
                    s.indicated = true
                    s.visited = true
                }
            }
            return s
        }
    }
}

extension ScoredTrial {
    /// A trial from its layout and what the observer saw (0-based layout stations, logged 1-based).
    public init(outcome: TrialOutcome, latencyNs: Int64?, layout: TrialLayout, seen: [StationSeen]) {
        self.init(
            outcome: outcome, latencyNs: latencyNs,
            stations: layout.stations.enumerated().map { index, content in
                StationObservation(
                    station: index + 1, kind: content.kind, sample: content.sampleID,
                    seen: index < seen.count ? seen[index] : StationSeen(visited: false, indicated: false))
            })
    }

    /// A correction: the trainer's or researcher's word replaces where the dog indicated.
    /// Visits are kept; the indicated station (1-based) becomes the only one indicated,
    /// keeping its first-indication time if it had one.
    public func corrected(outcome: TrialOutcome, indicatedStation: Int?) -> ScoredTrial {
        var copy = self
        copy.outcome = outcome
        copy.stations = stations.map { s in
            var s = s
            guard var seen = s.seen else { return s }
            let now = s.station == indicatedStation
            if !now { seen.firstIndicationNs = nil }
            seen.indicated = now
            if now { seen.visited = true }
            s.seen = seen
            return s
        }
        copy.latencyNs = copy.stations.first { $0.station == indicatedStation }?.seen?.firstIndicationNs
        return copy
    }
}
