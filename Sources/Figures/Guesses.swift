import Foundation
import TrainingEngine

#if canImport(Glibc)
    import Glibc
#endif

// The handler's guesses counted: the one place their figures are computed (docs/figures.md,
// "The handler's guess"). `lineupctl stats --guesses` prints them.

/// The exact one-sided binomial test's p-value, P(X ≥ k) for X ~ Binomial(n, p): the sum of
/// the binomial probabilities from k to n, each in log space (Glibc's lgamma), summed by log-sum-exp,
/// so large n neither overflows the binomial coefficient nor underflows a term to 0 too early.
public func binomialUpperTail(successes k: Int, trials n: Int, probability p: Double) -> Double {
    precondition(n >= 0 && k <= n, "successes must be at most trials")
    precondition(p >= 0 && p <= 1, "probability must be within 0...1")
    if k <= 0 { return 1 }
    if p == 0 { return 0 }
    if p == 1 { return 1 }
    let logP = log(p)
    let logQ = log1p(-p)
    let logN = logGamma(Double(n) + 1)
    let terms = (k...n).map { i in
        logN - logGamma(Double(i) + 1) - logGamma(Double(n - i) + 1) + Double(i) * logP + Double(n - i) * logQ
    }
    let top = terms.max()!
    let sum = terms.reduce(0) { $0 + exp($1 - top) }
    return min(1, exp(top + log(sum)))
}

/// ln Γ(x): the C library's, not the overlay's that also returns the sign.
private func logGamma(_ x: Double) -> Double { lgamma(x) }

/// How the guesses are grouped.
public enum GuessGrouping: String, Sendable, CaseIterable, Codable {
    case handler, session
}

/// One group's guesses and what they show (docs/figures.md, "The handler's guess").
public struct GuessFigures: Sendable, Hashable, Codable {
    public var group: String
    public var groupId: String
    /// Guesses counted: in scored trials, made before the dog's first indication.
    public var guesses: Int
    /// Of those, in trials with no target (they cannot hit).
    public var targetAbsentGuesses: Int
    /// Guesses at the station that held the target.
    public var hits: Int
    /// hits / guesses, with its 95 % Wilson interval.
    public var hitRate: Proportion
    /// What uniform guessing would hit: the mean over the guesses of 1/N (N the trial's
    /// stations) for a trial with a target and 0 for one without, = (1 − target-absent share)/N.
    public var chance: Double?
    /// P(hits ≥ observed) if the handler guessed uniformly among the N stations, by the exact
    /// binomial over the guesses in trials with a target, Binomial(those guesses, 1/N). Nil
    /// when there were none, or when the group's lineups differ in N.
    public var pValue: Double?
    /// pValue < 0.05, the project's threshold: the handler did better than guessing.
    public var aboveChance: Bool?
    /// Guesses logged after the dog's first indication in their trial: not counted.
    public var lateGuesses: Int
    /// Stations without the target the dog indicated, in trials whose guess was not the target.
    public var falseAlerts: Int
    /// Of those, at the guessed station.
    public var falseAlertsAtGuess: Int
    /// falseAlertsAtGuess / falseAlerts.
    public var falseAlertShareAtGuess: Double?
    /// The share expected if the dog's false alerts did not follow the guess: the mean over
    /// those false alerts of 1/M, M the trial's stations without the target.
    public var falseAlertShareExpected: Double?
    /// P(at the guess ≥ observed), Binomial(falseAlerts, 1/M); nil when M differs in the group.
    public var falseAlertPValue: Double?

    public init(group: String, groupId: String, tally: GuessTally) {
        self.group = group
        self.groupId = groupId
        guesses = tally.guesses
        targetAbsentGuesses = tally.targetAbsent
        hits = tally.hits
        hitRate = Proportion(successes: tally.hits, trials: tally.guesses)
        chance = tally.guesses > 0 ? tally.chanceSum / Double(tally.guesses) : nil
        let present = tally.guesses - tally.targetAbsent
        if present > 0, tally.stationCounts.count == 1, let n = tally.stationCounts.first {
            let p = binomialUpperTail(successes: tally.hits, trials: present, probability: 1 / Double(n))
            pValue = p
            aboveChance = p < guessTestAlpha
        }
        lateGuesses = tally.late
        falseAlerts = tally.falseAlerts
        falseAlertsAtGuess = tally.falseAlertsAtGuess
        if tally.falseAlerts > 0 {
            falseAlertShareAtGuess = Double(tally.falseAlertsAtGuess) / Double(tally.falseAlerts)
            falseAlertShareExpected = tally.falseAlertExpectedSum / Double(tally.falseAlerts)
            if tally.nonTargetCounts.count == 1, let m = tally.nonTargetCounts.first {
                falseAlertPValue = binomialUpperTail(
                    successes: tally.falseAlertsAtGuess, trials: tally.falseAlerts, probability: 1 / Double(m))
            }
        }
    }
}

/// The one-sided level below which a handler's hit rate is called above chance (the
/// project's choice, the usual 0.05).
public let guessTestAlpha = 0.05

/// Counts one group's guesses; `GuessFigures(tally:)` gives its figures.
public struct GuessTally: Sendable, Hashable {
    public private(set) var guesses = 0
    public private(set) var targetAbsent = 0
    public private(set) var hits = 0
    public private(set) var late = 0
    var chanceSum = 0.0
    var stationCounts: Set<Int> = []
    public private(set) var falseAlerts = 0
    public private(set) var falseAlertsAtGuess = 0
    var falseAlertExpectedSum = 0.0
    var nonTargetCounts: Set<Int> = []

    public init() {}

    /// A guess of `station` (as the log numbers stations) in a scored trial. `beforeIndication`:
    /// made before the dog's first indication; a later one is only counted as late.
    public mutating func add(guess station: Int, trial: ScoredTrial, beforeIndication: Bool) {
        guard trial.outcome != .aborted, !trial.stations.isEmpty else { return }
        guard beforeIndication else {
            late += 1
            return
        }
        let n = trial.stations.count
        let targets = trial.stations.filter { $0.kind == .target }.count
        guesses += 1
        stationCounts.insert(n)
        if targets == 0 { targetAbsent += 1 } else { chanceSum += 1 / Double(n) }
        let hit = trial.stations.contains { $0.station == station && $0.kind == .target }
        if hit { hits += 1 }
        // Lit et al. (2011): do the dog's false alerts go where the handler believed the
        // target was? Only a wrong guess can coincide with a false alert.
        guard !hit, trial.hasStationData else { return }
        let nonTargets = n - targets
        guard nonTargets > 0 else { return }
        for falseAlert in Self.falseAlertStations(in: trial) {
            falseAlerts += 1
            if falseAlert == station { falseAlertsAtGuess += 1 }
            falseAlertExpectedSum += 1 / Double(nonTargets)
            nonTargetCounts.insert(nonTargets)
        }
    }

    /// Whether a guess made at `guessedAtMonoNs` came before the dog's first indication in its
    /// trial (started at `startedMonoNs`, first indication `latencyNs` later; none: before).
    /// The counter and the guesses' export both ask this, so their rule is one.
    public static func beforeIndication(guessedAtMonoNs: Int64, startedMonoNs: Int64, latencyNs: Int64?) -> Bool {
        latencyNs.map { guessedAtMonoNs < startedMonoNs + $0 } ?? true
    }

    /// The stations without the target the dog indicated in `trial`, in station order: its
    /// false alerts, which a wrong guess is compared with (the counter and the export).
    public static func falseAlertStations(in trial: ScoredTrial) -> [Int] {
        trial.stations.filter { $0.kind != .target && $0.seen?.indicated == true }.map(\.station)
    }
}

/// The handler's guesses counted row by row, grouped by handler code or by session: what a
/// log's `guessStats` and the lab store's count with, so both give the same figures from the
/// same rows (a guess joined to its trial as it stands after corrections, in session order).
public struct GuessCounter {
    public let grouping: GuessGrouping
    private var order: [String] = []
    private var groups: [String: (name: String, tally: GuessTally)] = [:]

    public init(by grouping: GuessGrouping) { self.grouping = grouping }

    /// One guess of `station` made at `guessedAtMonoNs`, with its trial (as it stands after
    /// corrections, started at `startedMonoNs`) and its session's.
    public mutating func add(
        guess station: Int, guessedAtMonoNs: Int64, trial: ScoredTrial, startedMonoNs: Int64, sessionId: String,
        dog: String, handler: String?
    ) {
        let key = grouping == .session ? sessionId : handler ?? ""
        if groups[key] == nil {
            let name = grouping == .session ? "\(dog) \(sessionId)" : handler ?? "(no handler code)"
            groups[key] = (name, GuessTally())
            order.append(key)
        }
        groups[key]!.tally.add(
            guess: station, trial: trial,
            beforeIndication: GuessTally.beforeIndication(
                guessedAtMonoNs: guessedAtMonoNs, startedMonoNs: startedMonoNs, latencyNs: trial.latencyNs))
    }

    /// Each group's figures, in the order its first guess came.
    public var figures: [GuessFigures] {
        order.map { GuessFigures(group: groups[$0]!.name, groupId: $0, tally: groups[$0]!.tally) }
    }
}
