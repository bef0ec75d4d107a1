import TrainingEngine

/// What the registry says of a sample, as the confound figures group it.
public struct SampleRegistryDetails: Sendable {
    var kind: SampleKind
    var facts: SampleFacts

    public init(kind: SampleKind, facts: SampleFacts) {
        self.kind = kind
        self.facts = facts
    }
}

/// A detail the registry keeps of each sample, by which the confound figures group.
public enum SampleDetail: String, Sendable, Hashable, Codable, CaseIterable {
    case source, collection, processing

    /// The sample's fact it groups by.
    var fact: SampleFacts.Fact {
        switch self {
        case .source: .source
        case .collection: .collection
        case .processing: .processing
        }
    }
}

/// One value of a detail (one source, say) in one dog's trials.
public struct SampleDetailFigures: Sendable, Hashable, Codable {
    /// nil: samples with no such detail in the registry.
    public var value: String?
    /// Targets from it indicated / presented (its sensitivity).
    public var sensitivity: Proportion
    /// Controls and distractors from it examined and passed / examined (its specificity).
    public var specificity: Proportion
    /// Its target and examined control presentations that were indicated / all of them.
    public var indicated: Proportion
}

/// A dog's figures by one sample detail and the confound flag (docs/figures.md, "Confound
/// flags"). Counted over target presentations and examined control and distractor
/// presentations, the units of sensitivity and specificity; blanks have no sample.
public struct ConfoundRow: Sendable, Hashable, Codable {
    public var dog: String
    public var dogId: String
    public var detail: SampleDetail
    public var values: [SampleDetailFigures]
    /// Presentations counted.
    public var presentations: Int
    /// How far the targets' values differ from the controls': half the sum over values of the
    /// difference of the two kinds' shares (total variation distance, 0 the same mix, 1 disjoint).
    public var kindDifference: Double?
    /// Share of presentations whose indication (or not) is predicted by the majority of its
    /// kind / of its value of the detail.
    public var accuracyByKind: Double?
    public var accuracyByDetail: Double?
    /// Goodman and Kruskal's λ of the indication on the detail: how much of the error of
    /// always guessing the dog's more common answer knowing the value removes.
    public var lambdaByDetail: Double?
    public var flagged: Bool
}

/// The project's thresholds for the confound flag (not the study's, nor the papers').
public enum ConfoundRule {
    public static let minimumPresentations = 20
    /// Targets and controls "mostly different" in the detail.
    public static let minimumKindDifference = 0.5
    /// The dog's indications separate by the detail at least this well.
    public static let minimumLambda = 0.5

    public static func flags(
        presentations: Int, kindDifference: Double?, accuracyByKind: Double?, accuracyByDetail: Double?,
        lambdaByDetail: Double?
    ) -> Bool {
        guard presentations >= minimumPresentations, let kindDifference, let accuracyByKind, let accuracyByDetail,
            let lambdaByDetail
        else { return false }
        // A hair of tolerance: equal accuracies computed by different sums must count as equal.
        return kindDifference >= minimumKindDifference && accuracyByDetail >= accuracyByKind - 1e-12
            && lambdaByDetail >= minimumLambda
    }
}

/// Counts of one group of presentations.
private struct DetailCounts {
    var hits = 0
    var misses = 0
    var falseAlerts = 0
    var correctRejections = 0
    var targets: Int { hits + misses }
    var controls: Int { falseAlerts + correctRejections }
    var indicated: Int { hits + falseAlerts }
    var total: Int { targets + controls }
    var majority: Int { max(indicated, total - indicated) }

    mutating func add(_ other: DetailCounts) {
        hits += other.hits
        misses += other.misses
        falseAlerts += other.falseAlerts
        correctRejections += other.correctRejections
    }
}

/// The confound figures' counts over a stream of trials (any order); `rows` folds them by
/// each sample's details.
public struct ConfoundCounter {
    // Counted per dog and sample first (one lookup per station), then folded by detail.
    private var names: [String: String] = [:]
    private var bySample: [String: [String: DetailCounts]] = [:]
    private var dogId = ""
    private var current: [String: DetailCounts] = [:]

    public init() {}

    public mutating func add(_ trial: ScoredTrial, dogId id: String, dog: String) {
        guard trial.outcome != .aborted, trial.hasStationData else { return }
        // Trials come by session: keep the dog's counts at hand.
        if id != dogId {
            if !dogId.isEmpty { bySample[dogId] = current }
            dogId = id
            current = bySample[dogId] ?? [:]
            names[dogId] = dog
        }
        for station in trial.stations {
            guard let seen = station.seen, let sample = station.sample else { continue }
            switch StationVerdict(kind: station.kind, seen: seen) {
            case .hit: current[sample, default: DetailCounts()].hits += 1
            case .miss: current[sample, default: DetailCounts()].misses += 1
            case .falseAlert: current[sample, default: DetailCounts()].falseAlerts += 1
            case .correctRejection: current[sample, default: DetailCounts()].correctRejections += 1
            default: continue
            }
        }
    }

    /// The same from the samples' details by id, however the source read them (the report and
    /// `stats --sources --lab` read them from their own source).
    public func rows(details: [String: SampleRegistryDetails]) -> [ConfoundRow] {
        var bySample = bySample
        if !dogId.isEmpty { bySample[dogId] = current }
        struct Key: Hashable {
            var dogId: String
            var detail: SampleDetail
        }
        var groups: [Key: [String?: DetailCounts]] = [:]
        for (dogId, samples) in bySample {
            for (sample, counts) in samples {
                let d = details[sample]
                for detail in SampleDetail.allCases {
                    let value = d?.facts[detail.fact]
                    groups[Key(dogId: dogId, detail: detail), default: [:]][value, default: DetailCounts()].add(counts)
                }
            }
        }
        return groups.compactMap { key, byValue -> ConfoundRow? in
            guard byValue.keys.contains(where: { $0 != nil }) else { return nil }
            return Self.row(dog: names[key.dogId] ?? key.dogId, dogId: key.dogId, key.detail, byValue)
        }.sorted {
            ($0.dog, $0.dogId, SampleDetail.allCases.firstIndex(of: $0.detail)!)
                < ($1.dog, $1.dogId, SampleDetail.allCases.firstIndex(of: $1.detail)!)
        }
    }
}

extension ConfoundCounter {
    fileprivate static func row(
        dog: String, dogId: String, _ detail: SampleDetail, _ byValue: [String?: DetailCounts]
    ) -> ConfoundRow {
        var all = DetailCounts()
        for c in byValue.values { all.add(c) }
        let n = all.total
        var kindDifference: Double? = nil
        if all.targets > 0, all.controls > 0 {
            kindDifference =
                byValue.values.map {
                    abs(Double($0.targets) / Double(all.targets) - Double($0.controls) / Double(all.controls))
                }.reduce(0, +) / 2
        }
        let byKind =
            max(all.hits, all.misses) + max(all.falseAlerts, all.correctRejections)
        let byDetail = byValue.values.map(\.majority).reduce(0, +)
        let errors = n - all.majority
        let lambda: Double? = n == 0 || errors == 0 ? nil : Double(errors - (n - byDetail)) / Double(errors)
        let accuracyByKind = n == 0 ? nil : Double(byKind) / Double(n)
        let accuracyByDetail = n == 0 ? nil : Double(byDetail) / Double(n)
        let values = byValue.map { value, c in
            SampleDetailFigures(
                value: value, sensitivity: Proportion(successes: c.hits, trials: c.targets),
                specificity: Proportion(successes: c.correctRejections, trials: c.controls),
                indicated: Proportion(successes: c.indicated, trials: c.total))
        }.sorted { ($0.value == nil ? 1 : 0, $0.value ?? "") < ($1.value == nil ? 1 : 0, $1.value ?? "") }
        return ConfoundRow(
            dog: dog, dogId: dogId, detail: detail, values: values, presentations: n, kindDifference: kindDifference,
            accuracyByKind: accuracyByKind, accuracyByDetail: accuracyByDetail, lambdaByDetail: lambda,
            flagged: ConfoundRule.flags(
                presentations: n, kindDifference: kindDifference, accuracyByKind: accuracyByKind,
                accuracyByDetail: accuracyByDetail, lambdaByDetail: lambda))
    }
}
