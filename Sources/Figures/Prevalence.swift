import Foundation
import TrainingEngine

// PPV and NPV at a prevalence the researcher sets (`stats --prevalence`): the lineup's own PPV
// holds only at the lineup's share of targets, which a screening population never has
// (Vesga et al. 2021: 69.7 % in trials, 28.2 % in the field). docs/figures.md, "PPV and NPV
// at a prevalence", defines the figures and their interval.

/// PPV and NPV at one prevalence, from a group's sensitivity and specificity (Bayes' theorem),
/// each with a conservative 95 % interval (`predictiveValues(sensitivity:specificity:prevalence:)`).
public struct PredictiveValues: Sendable, Hashable, Codable {
    /// The share of targets among everything screened, 0 < prevalence < 1.
    public var prevalence: Double
    /// Se·π / (Se·π + (1 − Sp)(1 − π)); nil when no indication could be expected (Se = 0 and
    /// Sp = 1) or nothing was counted.
    public var ppv: Double?
    public var ppvLower: Double?
    public var ppvUpper: Double?
    /// Sp(1 − π) / (Sp(1 − π) + (1 − Se)π); nil when Se = 1 and Sp = 0, or nothing was counted.
    public var npv: Double?
    public var npvLower: Double?
    public var npvUpper: Double?
}

/// The z of each Wilson interval behind the PPV and NPV intervals: each at √0.95 (97.47 %), so
/// that both contain their true value together with probability 0.95 (Šidák), sensitivity and
/// specificity being counted on different presentations (targets, controls).
public let predictiveValueZ = inverseNormal(1 - (1 - 0.95.squareRoot()) / 2)

/// The one definition of PPV and NPV at a prevalence (docs/figures.md). PPV and NPV both rise
/// with sensitivity and with specificity, so the lowest and highest values over the rectangle of
/// the two Wilson intervals (at `predictiveValueZ`) are at its corners (lower, lower) and
/// (upper, upper): the interval contains the true value whenever both intervals contain theirs.
/// Nil when sensitivity or specificity counted nothing. `prevalence` must be within (0, 1):
/// `checkPrevalence` says so to the person.
public func predictiveValues(sensitivity: Proportion, specificity: Proportion, prevalence: Double) -> PredictiveValues?
{
    precondition(prevalence > 0 && prevalence < 1, "prevalence must be within (0, 1)")
    guard sensitivity.trials > 0, specificity.trials > 0 else { return nil }
    let se = Proportion(successes: sensitivity.successes, trials: sensitivity.trials, z: predictiveValueZ)
    let sp = Proportion(successes: specificity.successes, trials: specificity.trials, z: predictiveValueZ)
    let pi = prevalence
    func ppv(_ se: Double?, _ sp: Double?) -> Double? {
        guard let se, let sp else { return nil }
        let indicated = se * pi + (1 - sp) * (1 - pi)
        return indicated > 0 ? se * pi / indicated : nil
    }
    func npv(_ se: Double?, _ sp: Double?) -> Double? {
        guard let se, let sp else { return nil }
        let passed = sp * (1 - pi) + (1 - se) * pi
        return passed > 0 ? sp * (1 - pi) / passed : nil
    }
    return PredictiveValues(
        prevalence: pi,
        ppv: ppv(se.value, sp.value), ppvLower: ppv(se.lower, sp.lower), ppvUpper: ppv(se.upper, sp.upper),
        npv: npv(se.value, sp.value), npvLower: npv(se.lower, sp.lower), npvUpper: npv(se.upper, sp.upper))
}

extension Figures {
    /// This group's PPV and NPV at `prevalence` (`predictiveValues`).
    public func atPrevalence(_ prevalence: Double) -> PredictiveValues? {
        predictiveValues(sensitivity: sensitivity, specificity: specificity, prevalence: prevalence)
    }
}
