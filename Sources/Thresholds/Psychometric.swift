// The psychometric function of a detection task with a fixed number of choices (docs/figures.md,
// "A threshold"): the chance of finding the target at log10 concentration x is
//   ψ(x) = γ + (1 − γ − λ) F(x),
// γ = 1 / choices (a guess finds it), λ the lapse rate (a miss however strong the target), F a
// sigmoid in x with threshold m (F(m) = ½) and width w (F runs from 0.1 to 0.9 over w log10
// units; Schütt et al. 2016's parameters, so both forms read alike): the logistic, or the
// Weibull in concentration, which in log concentration is the Gumbel (as psignifit's "weibull").

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One concentration's trials and finds: the fit's data (a published table's row).
public struct ConcentrationTally: Sendable, Hashable {
    public var concentration: Double
    public var trials: Int
    public var found: Int

    public init(concentration: Double, trials: Int, found: Int) {
        self.concentration = concentration
        self.trials = trials
        self.found = found
    }
}

public enum PsychometricForm: String, Sendable, Hashable, CaseIterable {
    case logistic
    /// Weibull in concentration: 1 − exp(−(c/α)^β); the Gumbel in log10 concentration.
    case weibull
}

public struct PsychometricCurve: Sendable, Hashable {
    public var form: PsychometricForm
    /// m: log10 of the threshold concentration, where F = ½.
    public var log10Threshold: Double
    /// w: log10 units over which F runs from 0.1 to 0.9.
    public var width: Double
    /// γ: 1 / the number of choices.
    public var guessRate: Double
    /// λ: the lapse rate.
    public var lapseRate: Double

    public init(form: PsychometricForm, log10Threshold: Double, width: Double, guessRate: Double, lapseRate: Double) {
        self.form = form
        self.log10Threshold = log10Threshold
        self.width = width
        self.guessRate = guessRate
        self.lapseRate = lapseRate
    }

    /// The threshold as a concentration.
    public var threshold: Double { pow(10, log10Threshold) }

    /// F at log10 concentration x.
    public func sigmoid(log10Concentration x: Double) -> Double {
        standardSigmoid(form, (x - log10Threshold) / width)
    }

    /// ψ: the chance of finding the target at this concentration.
    public func probabilityFound(concentration c: Double) -> Double {
        guessRate + (1 - guessRate - lapseRate) * sigmoid(log10Concentration: log10(c))
    }
}

/// 2 ln 9: the logistic's 0.1-to-0.9 span in units of its scale.
let logisticSpan = 2 * log(9.0)
/// ln ln 10 − ln(−ln 0.9): the Gumbel's 0.1-to-0.9 span.
let gumbelSpan = log(log(10.0)) - log(-log(0.9))
/// ln ln 2: the Gumbel's argument where F = ½.
let gumbelMid = log(log(2.0))

/// F at z = (x − m) / w.
@inline(__always)
func standardSigmoid(_ form: PsychometricForm, _ z: Double) -> Double {
    switch form {
    case .logistic: 1 / (1 + exp(-logisticSpan * z))
    case .weibull: -expm1(-exp(gumbelSpan * z + gumbelMid))
    }
}

/// The data as the likelihood reads it: log10 concentrations, trials, finds.
struct FitData: Sendable {
    var x: [Double]
    var n: [Double]
    var k: [Double]

    init(_ tallies: [ConcentrationTally]) {
        x = tallies.map { log10($0.concentration) }
        n = tallies.map { Double($0.trials) }
        k = tallies.map { Double($0.found) }
    }

    /// −log L (the binomial coefficients left out: they do not depend on the curve).
    func negativeLogLikelihood(
        form: PsychometricForm, m: Double, w: Double, guess: Double, lapse: Double
    ) -> Double {
        var sum = 0.0
        let scale = 1 - guess - lapse
        for i in x.indices {
            // ψ kept off 0 and 1 so a fit that says "never" or "always" stays finite.
            let p = min(1 - 1e-12, max(1e-12, guess + scale * standardSigmoid(form, (x[i] - m) / w)))
            sum -= k[i] * log(p) + (n[i] - k[i]) * log1p(-p)
        }
        return sum
    }
}
