/// One trial as exposure counts it: whose it was and which samples its layout put in a
/// station, in station order (blanks have none).
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
public struct Exposure: Sendable {
    private var met: [String: [String: Int]] = [:]
    private var dog = ""
    private var counts: [String: Int] = [:]

    public init() {}

    /// The next trial of the log (after corrections, oldest first): the exposure before it of
    /// each of its samples, in the order of `samples`. A sample in two stations of one trial
    /// counts once: the dog met it in one trial.
    public mutating func meet(dogId: String, samples: [String]) -> [Int] {
        // A dog's trials mostly come together (by session): keep its counts at hand.
        if dogId != dog {
            met[dog] = counts
            dog = dogId
            counts = met[dog] ?? [:]
        }
        let exposures = samples.map { counts[$0] ?? 0 }
        for (index, sample) in samples.enumerated() where !samples[..<index].contains(sample) {
            counts[sample, default: 0] += 1
        }
        return exposures
    }

    /// `meet` over every trial of `trials`, in order.
    public static func before(_ trials: [ExposureTrial]) -> [[Int]] {
        var exposure = Exposure()
        return trials.map { exposure.meet(dogId: $0.dogId, samples: $0.samples) }
    }
}
