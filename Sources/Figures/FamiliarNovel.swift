import Foundation
import TrainingEngine

/// A dog's sensitivity and specificity on familiar and on novel samples (docs/figures.md,
/// "Familiar and novel samples"), each counted per station as `stats` counts them.
public struct FamiliarNovelRow: Sendable, Hashable, Codable {
    public var dog: String
    public var dogId: String
    /// Target presentations whose sample the dog had met before the trial / had not.
    public var familiarSensitivity: Proportion
    public var novelSensitivity: Proportion
    /// Examined control and distractor presentations, familiar / novel.
    public var familiarSpecificity: Proportion
    public var novelSpecificity: Proportion
    /// Fisher's exact test (two-sided) of familiar against novel.
    public var sensitivityP: Double?
    public var specificityP: Double?
    /// The memorisation signature by the project's rule (`FamiliarNovelRule`).
    public var memorisation: Bool
}

/// The project's thresholds for the memorisation flag (not the study's, nor the papers').
public enum FamiliarNovelRule {
    /// Target presentations needed on each side before the rule speaks.
    public static let minimumTargets = 10
    /// Familiar minus novel sensitivity, at least.
    public static let minimumDrop = 0.20
    /// Fisher's exact test, two-sided, below this.
    public static let significance = 0.05

    public static func flags(familiar: Proportion, novel: Proportion, p: Double?) -> Bool {
        guard familiar.trials >= minimumTargets, novel.trials >= minimumTargets, let f = familiar.value,
            let v = novel.value, let p
        else { return false }
        return f - v >= minimumDrop && p < significance
    }
}

/// The familiar and novel tallies over the ordered pass of trials (after corrections, by
/// start, then session id, then number): the one place they are counted, for `stats
/// --familiar-novel` and the report, on a log and on the lab store.
public struct FamiliarNovelCounter: Sendable {
    private var exposure = Exposure()
    private var dogs: [String: (name: String, familiar: Tally, novel: Tally)] = [:]

    public init() {}

    /// The next trial of the pass. Every trial counts toward its samples' exposure (narrowing
    /// to a week must not make the week's first trial of an old sample novel); only those the
    /// filter chose (`inScope`) are counted. The trial's sample ids must be read
    /// (`TrialRowDecoder(samples: true)`).
    public mutating func add(_ trial: ScoredTrial, dogId: String, dog: String, inScope: Bool) {
        let exposures = exposure.meet(dogId: dogId, samples: trial.stations.compactMap(\.sample))
        guard inScope else { return }
        let id = dogId
        if dogs[id] == nil { dogs[id] = (dog, Tally(), Tally()) }
        // Stations without a sample (blanks) are neither familiar nor novel; the exposures
        // come in the order of the stations that have one. Added in place: a copy of the
        // tally per trial would copy its latencies each time.
        var next = exposures.makeIterator()
        for station in trial.stations where station.sample != nil {
            guard let exposure = next.next() else { break }
            if exposure == 0 {
                dogs[id]!.novel.add(trial, station: station)
            } else {
                dogs[id]!.familiar.add(trial, station: station)
            }
        }
    }

    /// Per dog, by name.
    public var rows: [FamiliarNovelRow] {
        return dogs.map { id, entry in
            let familiar = entry.familiar.figures
            let novel = entry.novel.figures
            let pf = familiar.presentations
            let pn = novel.presentations
            let sensitivityP = fisherExactTest(pf.hits, pf.misses, pn.hits, pn.misses)
            return FamiliarNovelRow(
                dog: entry.name, dogId: id, familiarSensitivity: familiar.sensitivity,
                novelSensitivity: novel.sensitivity, familiarSpecificity: familiar.specificity,
                novelSpecificity: novel.specificity, sensitivityP: sensitivityP,
                specificityP: fisherExactTest(
                    pf.correctRejections, pf.falseAlerts, pn.correctRejections, pn.falseAlerts),
                memorisation: FamiliarNovelRule.flags(
                    familiar: familiar.sensitivity, novel: novel.sensitivity, p: sensitivityP))
        }.sorted { ($0.dog, $0.dogId) < ($1.dog, $1.dogId) }
    }
}
