import TrainingEngine

// Groups of figures for a block or a session: overall, per dog, per sample, per station.
// Counting is `Tally`'s (Figures.swift); this only files trials into groups.

/// Scores for a run of trials: overall, per dog, per sample, per station.
public struct Scoreboard: Sendable, Hashable {
    public private(set) var overall = Tally()
    public private(set) var byDog: [String: Tally] = [:]
    /// Keyed by sample id.
    public private(set) var bySample: [String: Tally] = [:]
    /// Keyed by 1-based station number.
    public private(set) var byStation: [Int: Tally] = [:]

    public init() {}

    /// Adds a finished (or aborted) trial.
    public mutating func add(_ trial: ScoredTrial, dog: String = "") {
        overall.add(trial)
        byDog[dog, default: Tally()].add(trial)
        for station in trial.stations {
            byStation[station.station, default: Tally()].add(trial, station: station)
            if let sample = station.sample { bySample[sample, default: Tally()].add(trial, station: station) }
        }
    }
}
