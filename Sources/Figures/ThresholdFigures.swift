import Thresholds
import TrainingEngine

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// `stats --threshold` (docs/figures.md, "How little the dog can smell: a threshold", "In
// `stats`"): the trials whose target is a rung of a dilution ladder, per dog, session (or dog,
// or the session's conditions) and stock, counted per dilution and fitted by Thresholds'
// psychometric fit with its profile interval. Pure: the log and the store hand over plain rows.

/// A sample as the threshold figures see it: what it was diluted from and how.
public struct ThresholdSample: Sendable, Hashable {
    public var label: String
    /// The sample it was made from; nil for a sample that is no dilution (a stock).
    public var stockId: String?
    /// 1000 for 1:1000, from `stockId`.
    public var factor: Double?
    public var concentration: Double?
    public var unit: String?

    public init(
        label: String, stockId: String? = nil, factor: Double? = nil, concentration: Double? = nil,
        unit: String? = nil
    ) {
        self.label = label
        self.stockId = stockId
        self.factor = factor
        self.concentration = concentration
        self.unit = unit
    }
}

/// How trials are pooled before a fit: the session is the default (one staircase, one fit).
public enum ThresholdGrouping: String, Sendable, Hashable, CaseIterable, Codable {
    case session, dog, conditions
}

/// One dilution's trials and finds in a group.
public struct ThresholdDilution: Sendable, Hashable, Codable {
    public var sample: String
    /// On the group's scale (`ThresholdRow.scale`); nil when the group has no common scale.
    public var concentration: Double?
    public var trials: Int
    public var found: Int
}

/// The fit of a group: the threshold (where F = ½), its 95 % profile-likelihood interval, and
/// the curve's other parameters, the guess rate as used (1 / stations) and the lapse as fitted.
public struct ThresholdFitFigures: Sendable, Hashable, Codable {
    public var form: String
    public var threshold: Double
    public var log10Threshold: Double
    public var lower: Double
    public var upper: Double
    /// An end the data do not close is the search's bound, marked open.
    public var lowerOpen: Bool
    public var upperOpen: Bool
    public var intervalMethod: String
    public var level: Double
    public var width: Double
    public var guessRate: Double
    public var lapseRate: Double
    /// The lapse's rule: `fitted within 0 to 0.06`.
    public var lapseRule: String
    public var negativeLogLikelihood: Double
}

/// One trial of a session's track, in the order the trials ran (the report's staircase plot).
public struct ThresholdTrackPoint: Sendable, Hashable, Codable {
    public var sample: String
    /// On the group's scale; nil when it has none.
    public var concentration: Double?
    public var found: Bool
    /// The staircase turned at this trial (its dilution is a reversal's), as the log recorded.
    public var reversal: Bool = false
}

extension ThresholdFitFigures {
    /// ψ, the fitted chance of a find at `concentration` (on the group's scale).
    public func chanceFound(at concentration: Double) -> Double {
        PsychometricCurve(
            form: PsychometricForm(rawValue: form) ?? .logistic, log10Threshold: log10Threshold, width: width,
            guessRate: guessRate, lapseRate: lapseRate
        ).probabilityFound(concentration: concentration)
    }
}

/// One group's threshold figures. `fit` is nil when the group cannot be fitted; `notFitted`
/// then says why, in the researcher's words.
public struct ThresholdRow: Sendable, Hashable, Codable {
    public var dogId: String
    public var dog: String
    /// The session (`--threshold-by session`), else nil.
    public var sessionId: String?
    public var sessionWallNs: Int64?
    /// When the session started (ISO 8601, the station's offset), as `stats --by session` says it.
    public var sessionStarted: String?
    /// The session's conditions as recorded (`--threshold-by conditions`: the group's), or nil.
    public var conditions: String?
    /// The stock the ladder was diluted from: its label.
    public var stock: String
    /// The concentrations' scale: the dilutions' own unit when every one has a concentration
    /// in one unit, else `fraction of the stock`.
    public var scale: String
    /// Stations in the lineup: the guess rate is 1 / choices.
    public var choices: Int?
    public var trials: Int
    public var found: Int
    /// Weakest first.
    public var dilutions: [ThresholdDilution]
    public var fit: ThresholdFitFigures?
    public var notFitted: String?
    /// The reversal estimate (`ThresholdReversals.swift`); nil when it is not computed, and
    /// `reversalNotComputed` says why: never a guess, never zero.
    public var reversalEstimate: ThresholdReversalFigures? = nil
    public var reversalNotComputed: String? = nil
    /// The trials in the order they were handed over, for the report (nil in `stats`).
    public var track: [ThresholdTrackPoint]? = nil

    public static let fractionOfStock = "fraction of the stock"
}

/// Counts the trials handed to it and fits each group. Trials without a target (catch trials)
/// and aborted ones are not on the curve; a trial counts when its target sample is a dilution,
/// or the stock of a dilution the samples hold.
public struct ThresholdCounter {
    struct Key: Hashable, Comparable {
        var dog: String
        var dogId: String
        var sessionWallNs: Int64
        var sessionId: String
        var conditions: String
        var stock: String

        static func < (a: Key, b: Key) -> Bool {
            (a.dog, a.dogId, a.sessionWallNs, a.sessionId, a.conditions, a.stock)
                < (b.dog, b.dogId, b.sessionWallNs, b.sessionId, b.conditions, b.stock)
        }
    }

    struct Tally {
        var conditions: String?
        var stations: Set<Int> = []
        /// By sample id: trials, finds.
        var bySample: [String: (trials: Int, found: Int)] = [:]
        var track: [(id: String, found: Bool, reversal: Bool)] = []
        /// Its sessions and when each started (the reversal estimate reads each staircase).
        var sessions: [String: Int64] = [:]
    }

    let samples: [String: ThresholdSample]
    let grouping: ThresholdGrouping
    /// Samples that are the stock of another.
    let stocks: Set<String>
    /// Keep each group's trials in order (the report's track: its trials come ordered).
    let recordsTrack: Bool
    /// k of the reversal estimate (`ThresholdRow.reversalsAveraged`).
    let reversalsAveraged: Int
    var groups: [Key: Tally] = [:]
    /// Each session's procedure state per trial, as `addProcedure` hands it over.
    var procedures: [String: [ThresholdProcedureTrial]] = [:]
    /// Why no reversal estimate can be given at all (a store without the state), or nil.
    var procedureWithheld: String?

    /// `samples`: every sample of the log or store by id (stocks are followed through it).
    public init(
        samples: [String: ThresholdSample], grouping: ThresholdGrouping, recordsTrack: Bool = false,
        reversalsAveraged: Int = ThresholdRow.reversalsAveraged
    ) {
        self.samples = samples
        self.grouping = grouping
        self.recordsTrack = recordsTrack
        self.reversalsAveraged = reversalsAveraged
        stocks = Set(samples.values.compactMap(\.stockId))
    }

    /// One trial's procedure state (a `trial_procedure` row) of `sessionId`, in any order.
    public mutating func addProcedure(sessionId: String, _ trial: ThresholdProcedureTrial) {
        procedures[sessionId, default: []].append(trial)
    }

    /// The source holds no procedure state: every group's reversal estimate says `reason`.
    public mutating func withholdProcedures(_ reason: String) {
        procedureWithheld = reason
    }

    /// The stock at the end of `id`'s chain (itself when it is no dilution); nil past a sample
    /// the registry lacks or a chain longer than the registry (a loop).
    func root(_ id: String) -> String? {
        var at = id
        for _ in 0...samples.count {
            guard let sample = samples[at] else { return nil }
            guard let stock = sample.stockId else { return at }
            at = stock
        }
        return nil
    }

    /// Adds one trial; `conditions` is its session's, as recorded (nil: none).
    public mutating func add(_ trial: ScoredTrial, context: TrialContext, conditions: String?) {
        guard trial.outcome != .aborted,
            let target = trial.stations.first(where: { $0.kind == .target }), let id = target.sample,
            samples[id]?.stockId != nil || stocks.contains(id), let stock = root(id)
        else { return }
        let key = Key(
            dog: context.dog, dogId: context.dogId,
            sessionWallNs: grouping == .session ? context.sessionWallNs : 0,
            sessionId: grouping == .session ? context.sessionId : "",
            conditions: grouping == .conditions ? conditions ?? "" : "", stock: stock)
        var tally = groups[key] ?? Tally(conditions: grouping == .dog ? nil : conditions)
        tally.stations.insert(trial.stations.count)
        let found = trial.outcome == .hit ? 1 : 0
        let before = tally.bySample[id] ?? (0, 0)
        tally.bySample[id] = (before.trials + 1, before.found + found)
        tally.sessions[context.sessionId] = context.sessionWallNs
        if recordsTrack {
            // Procedure rows come before the trials (`addProcedure` first), so a track point
            // knows whether the staircase turned at it.
            let turned = context.trialNumber.map { number in
                procedures[context.sessionId]?.contains { $0.trialNumber == number && $0.reversal } ?? false
            }
            tally.track.append((id, found == 1, turned ?? false))
        }
        groups[key] = tally
    }

    /// The fraction of its root stock a sample holds: the product of the factors up its chain;
    /// nil when a link has no factor.
    func fraction(_ id: String) -> Double? {
        var value = 1.0
        var at = id
        for _ in 0...samples.count {
            guard let sample = samples[at] else { return nil }
            guard let stock = sample.stockId else { return value }
            guard let factor = sample.factor else { return nil }
            value /= factor
            at = stock
        }
        return nil
    }

    /// Each group's figures, by dog, then session start (or conditions), then stock.
    public func rows() -> [ThresholdRow] {
        var iso = ISOTimeFormatter()
        return groups.keys.sorted().map { key in
            let tally = groups[key]!
            let ids = tally.bySample.keys.sorted()
            var row = ThresholdRow(
                dogId: key.dogId, dog: key.dog, sessionId: grouping == .session ? key.sessionId : nil,
                sessionWallNs: grouping == .session ? key.sessionWallNs : nil,
                sessionStarted: grouping == .session ? iso.string(wallNs: key.sessionWallNs) : nil,
                conditions: tally.conditions,
                stock: samples[key.stock]?.label ?? key.stock, scale: ThresholdRow.fractionOfStock,
                choices: tally.stations.count == 1 ? tally.stations.first : nil,
                trials: tally.bySample.values.reduce(0) { $0 + $1.trials },
                found: tally.bySample.values.reduce(0) { $0 + $1.found }, dilutions: [])
            // The dilutions' own concentrations when all have one in one unit; else the
            // fraction of the stock, when every link has a factor.
            let units = Set(ids.map { samples[$0]?.concentration == nil ? nil : samples[$0]?.unit })
            var scale: [String: Double] = [:]
            if units.count == 1, let unit = units.first ?? nil {
                row.scale = unit
                for id in ids { scale[id] = samples[id]?.concentration }
            } else {
                for id in ids { scale[id] = fraction(id) }
            }
            if recordsTrack {
                row.track = tally.track.map {
                    ThresholdTrackPoint(
                        sample: samples[$0.id]?.label ?? $0.id, concentration: scale[$0.id], found: $0.found,
                        reversal: $0.reversal)
                }
            }
            // The reversal estimate on the same scale: a unit's concentrations or the fraction.
            let unit = row.scale == ThresholdRow.fractionOfStock ? nil : row.scale
            row.reversalEstimate = reversals(
                sessions: tally.sessions.sorted { ($0.value, $0.key) < ($1.value, $1.key) }.map(\.key),
                stock: key.stock,
                concentration: { id in
                    guard let unit else { return fraction(id) }
                    return samples[id]?.unit == unit ? samples[id]?.concentration : nil
                }, notComputed: &row.reversalNotComputed)
            if let missing = ids.first(where: { scale[$0] == nil }) {
                row.dilutions = ids.map {
                    ThresholdDilution(
                        sample: samples[$0]?.label ?? $0, concentration: nil, trials: tally.bySample[$0]!.trials,
                        found: tally.bySample[$0]!.found)
                }
                row.notFitted =
                    "dilution \(samples[missing]?.label ?? missing) has no dilution factor from its stock and the "
                    + "dilutions do not all have a concentration in one unit: no common scale"
                return row
            }
            row.dilutions = ids.map {
                ThresholdDilution(
                    sample: samples[$0]?.label ?? $0, concentration: scale[$0]!, trials: tally.bySample[$0]!.trials,
                    found: tally.bySample[$0]!.found)
            }
            .sorted { ($0.concentration ?? 0, $0.sample) < ($1.concentration ?? 0, $1.sample) }
            guard let choices = row.choices else {
                row.notFitted =
                    "its trials had \(tally.stations.sorted().map(String.init).joined(separator: " and ")) stations, "
                    + "so no one guess rate: choose the sessions of one lineup (--step)"
                return row
            }
            row.fit = Self.fit(row.dilutions, choices: choices, notFitted: &row.notFitted)
            return row
        }
    }

    /// The fit and its interval, or nil with the reason in `notFitted`.
    static func fit(_ dilutions: [ThresholdDilution], choices: Int, notFitted: inout String?) -> ThresholdFitFigures? {
        // Two samples of one concentration are one point of the curve.
        var pooled: [Double: (Int, Int)] = [:]
        for d in dilutions {
            guard let c = d.concentration else { continue }
            let before = pooled[c] ?? (0, 0)
            pooled[c] = (before.0 + d.trials, before.1 + d.found)
        }
        let tallies = pooled.keys.sorted().map {
            ConcentrationTally(concentration: $0, trials: pooled[$0]!.0, found: pooled[$0]!.1)
        }
        let settings = FitSettings(form: .logistic, choices: choices)
        do {
            let fit = try PsychometricFit(tallies, settings: settings)
            let interval = try fit.profileInterval(level: 0.95)
            var rule = ""
            switch settings.lapse {
            case .fitted(let max): rule = "fitted within 0 to \(max)"
            case .fixed(let l): rule = "fixed at \(l)"
            }
            return ThresholdFitFigures(
                form: settings.form.rawValue, threshold: fit.threshold, log10Threshold: fit.curve.log10Threshold,
                lower: interval.lower, upper: interval.upper, lowerOpen: interval.lowerIsBound,
                upperOpen: interval.upperIsBound, intervalMethod: interval.method.rawValue, level: interval.level,
                width: fit.curve.width, guessRate: fit.curve.guessRate, lapseRate: fit.curve.lapseRate,
                lapseRule: rule, negativeLogLikelihood: fit.negativeLogLikelihood)
        } catch {
            notFitted = "\(error)"
            return nil
        }
    }
}
