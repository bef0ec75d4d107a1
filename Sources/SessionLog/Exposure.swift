/// One trial as exposure counts it: whose it was and which samples its layout put in a
/// station (blanks have none).
public struct ExposureTrial: Sendable, Hashable {
    public var dogId: String
    public var samples: [String]

    public init(dogId: String, samples: [String]) {
        self.dogId = dogId
        self.samples = samples
    }
}

/// A dog's exposure to a sample before a trial (docs/figures.md, "Exposure and novelty"): the
/// number of earlier trials of that dog, any outcome (aborted included), whose layout put that
/// sample in a station. The sample is novel in the trial when it is 0, familiar otherwise.
public enum Exposure {
    /// For each trial of `trials` (every trial of the log, after corrections, oldest first),
    /// each of its samples' exposure before it. A sample in two stations of one trial counts
    /// once: the dog met it in one trial.
    public static func before(_ trials: [ExposureTrial]) -> [[String: Int]] {
        var met: [String: [String: Int]] = [:]
        return trials.map { trial in
            var counts = met[trial.dogId] ?? [:]
            var exposures: [String: Int] = [:]
            for sample in trial.samples where exposures[sample] == nil { exposures[sample] = counts[sample] ?? 0 }
            for sample in exposures.keys { counts[sample, default: 0] += 1 }
            met[trial.dogId] = counts
            return exposures
        }
    }
}
