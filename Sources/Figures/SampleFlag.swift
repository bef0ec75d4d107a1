import Foundation
import TrainingEngine

/// The flag on a sample the dogs indicate far more than the rest of its kind: a control they
/// find (contaminated, or smelling of the handler), a target they find far more than the
/// other targets (something besides the target scent to find in it), decided here once for
/// every surface that flags (`stats --by sample`, the report, the page's report). The
/// project's rule, not the study's (docs/figures.md, "A flagged sample"):
///
/// - at least `minimumPresentations` counted presentations of the sample (a target's presented,
///   a control's examined), and at least `minimumIndications` of them indicated: one false
///   alert is never evidence, however clean the others are;
/// - Fisher's exact test, one-sided, of the sample's count against the pooled count of every
///   other sample of its kind (targets with targets; controls with controls and distractors)
///   below `level`: more than chance would put on one sample;
/// - and odds at least `oddsRatio` times the others': far more, not merely more (on a big log a
///   small excess passes any test).
public enum SampleFlag {
    public static let minimumPresentations = 10
    public static let minimumIndications = 3
    /// The one-sided test's level.
    public static let level = 0.01
    public static let oddsRatio = 2.0

    /// The counts one sample is judged on: its own, the pooled others', and the test's p.
    public struct Verdict: Sendable, Hashable, Codable {
        /// The sample's presentations indicated, of those counted: a target's hits of its
        /// presentations (sensitivity), a control's false alerts of those examined.
        public var indicated: Proportion
        /// The same over every other sample of its kind, pooled.
        public var others: Proportion
        /// Fisher's exact test, one-sided (the sample's share greater than the others').
        public var p: Double?
        public var flagged: Bool
    }

    /// Whether `indicated` (a target's hits, a control's false alerts) stands out from the
    /// pooled `others` of its kind, by the rule above; with the test's p.
    public static func judge(_ against: Proportion, others: Proportion) -> Verdict {
        let p = fisherExactTestGreater(
            against.successes, against.trials - against.successes, others.successes,
            others.trials - others.successes)
        let odds = { (x: Int, n: Int) -> Double in x >= n ? .infinity : Double(x) / Double(n - x) }
        let flagged =
            against.trials >= minimumPresentations && against.successes >= minimumIndications
            && (p ?? 1) < level
            && odds(against.successes, against.trials) >= oddsRatio * odds(others.successes, others.trials)
        return Verdict(indicated: against, others: others, p: p, flagged: flagged)
    }

    /// Each sample's verdict against the others of its kind, by sample id; none for a blank or
    /// for a sample with no other of its kind. `samples`: id, kind, and its figures' counts.
    public static func judge(_ samples: [(String, SampleKind, Figures)]) -> [String: Verdict] {
        func against(_ kind: SampleKind, _ f: Figures) -> Proportion? {
            switch kind {
            case .target: f.sensitivity
            case .control, .distractor: f.falseAlertRate
            case .blank: nil
            }
        }
        func family(_ kind: SampleKind) -> Int { kind == .target ? 0 : 1 }
        var sums: [Int: (successes: Int, trials: Int)] = [:]
        for (_, kind, figures) in samples {
            guard let a = against(kind, figures) else { continue }
            sums[family(kind), default: (0, 0)].successes += a.successes
            sums[family(kind), default: (0, 0)].trials += a.trials
        }
        var verdicts: [String: Verdict] = [:]
        for (id, kind, figures) in samples {
            guard let a = against(kind, figures), let total = sums[family(kind)], total.trials > a.trials
            else { continue }
            verdicts[id] = judge(
                a, others: Proportion(successes: total.successes - a.successes, trials: total.trials - a.trials))
        }
        return verdicts
    }
}
