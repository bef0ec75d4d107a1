import SessionLog
import TrainingEngine

/// The report's flag on a sample that stands out from the rest of its kind: a control the dogs
/// find (contaminated, or smelling of the handler) or a target they miss. The project's rule
/// (docs/session-log.md, "The report"), not the study's; the log only counts the rates.
public enum SampleFlag {
    /// Samples flagged need at least this many counted presentations.
    public static let minimumPresentations = 5
    /// ... and odds of indication at least this many times the rest's.
    public static let oddsRatio = 2.0

    /// Whether a sample indicated at `rate` stands out from the pooled `rest` of its kind: at
    /// least `minimumPresentations`, the Wilson 95 % lower bound of its rate above the rest's
    /// rate, and odds of indication at least `oddsRatio` times the rest's.
    public static func flags(rate: Proportion, rest: Double) -> Bool {
        // Far more, not merely more: on a big log a small excess is "significant" at once, so
        // the odds of indication must also be at least twice the rest's (odds, so that a
        // target near 80 % can be flagged too; at a control's low rates it is about twice the rate).
        let odds = { (p: Double) in p >= 1 ? Double.infinity : p / (1 - p) }
        return rate.trials >= minimumPresentations && (rate.lower ?? 0) > rest
            && odds(rate.value ?? 0) >= oddsRatio * odds(rest)
    }
}

extension ReportSample {
    /// `SampleFlag`'s rule on this sample; never for a blank or a sample with no others of its
    /// kind to be compared with.
    public var flagged: Bool {
        guard let rate, let restRate else { return false }
        return SampleFlag.flags(rate: rate, rest: restRate)
    }
}
