// The trainer's and researcher's words, shared by the engine, the log and the tools.

/// What a scent sample is, as the loading assistant and the researcher call it.
public enum SampleKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// Holds the scent the dog is trained to find.
    case target
    /// A sample from the same kind of source without the target condition.
    case control
    /// A clean, empty container.
    case blank
    /// An unrelated odour meant to tempt the dog.
    case distractor
}

/// How a session is run.
public enum TrainingMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// The trainer presses the clicker; the station times, cues and records.
    case trainerLed = "trainer-led"
    /// The station picks layouts and clicks by itself; the handler may know the layout.
    case automated
    /// As automated, and the handler is never shown the layout.
    case doubleBlind = "double-blind"
}

/// How one trial ended.
public enum TrialOutcome: String, Sendable, Hashable, Codable, CaseIterable {
    /// The dog indicated the target.
    case hit
    /// The dog indicated a station without the target.
    case falseAlert = "false-alert"
    /// A target was present and nothing was indicated in time.
    case miss
    /// No target was present and nothing was indicated.
    case correctRejection = "correct-rejection"
    /// Stopped by the trainer, a command or shutdown before it could be scored.
    case aborted

    /// Whether the trial counts as correct for graduation criteria.
    public var isCorrect: Bool { self == .hit || self == .correctRejection }
}

/// A proportion with its Wilson score interval (95 % unless another z is given).
///
/// Wilson rather than the normal approximation because lineup counts are small and
/// proportions sit near 0 or 1, where the normal interval leaves [0, 1].
public struct Proportion: Sendable, Hashable, Codable {
    public var successes: Int
    public var trials: Int
    public var value: Double?
    public var lower: Double?
    public var upper: Double?

    public init(successes: Int, trials: Int, z: Double = 1.959963984540054) {
        precondition(successes >= 0 && trials >= successes, "successes must be within 0...trials")
        self.successes = successes
        self.trials = trials
        guard trials > 0 else {
            value = nil
            lower = nil
            upper = nil
            return
        }
        let n = Double(trials)
        let p = Double(successes) / n
        let z2 = z * z
        let centre = (p + z2 / (2 * n)) / (1 + z2 / n)
        let half = z / (1 + z2 / n) * (p * (1 - p) / n + z2 / (4 * n * n)).squareRoot()
        value = p
        // Clamped to enclose p: at p = 0 or 1 rounding can otherwise leave a bound a hair past it.
        lower = min(p, max(0, centre - half))
        upper = max(p, min(1, centre + half))
    }
}
