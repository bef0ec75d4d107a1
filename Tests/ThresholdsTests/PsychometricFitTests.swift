import Figures
import Foundation
import Testing
import Figures
import TrainingEngine

@testable import Thresholds

/// The psychometric function, its maximum-likelihood fit and the threshold's intervals, on
/// hand-built data.
@Suite struct PsychometricFitTests {
    @Test func bothFormsAreHalfAtTheThresholdAndSpanTheWidth() {
        for form in PsychometricForm.allCases {
            let c = PsychometricCurve(form: form, log10Threshold: -6, width: 1.5, guessRate: 1.0 / 3, lapseRate: 0.03)
            #expect(abs(c.sigmoid(log10Concentration: -6) - 0.5) < 1e-12, "\(form)")
            let low = c.sigmoid(log10Concentration: form == .logistic ? -6.75 : -6 - 1.5 * 0.5)
            #expect(low < 0.5)
            // F(0.1) and F(0.9) are w apart.
            func at(_ f: Double) -> Double {
                var (a, b) = (-20.0, 10.0)
                for _ in 0..<200 {
                    let mid = (a + b) / 2
                    if c.sigmoid(log10Concentration: mid) < f { a = mid } else { b = mid }
                }
                return a
            }
            #expect(abs(at(0.9) - at(0.1) - 1.5) < 1e-9, "\(form)")
            // ψ runs from the guess rate to 1 − λ.
            #expect(abs(c.probabilityFound(concentration: 1e-20) - 1.0 / 3) < 1e-9)
            #expect(abs(c.probabilityFound(concentration: 1e3) - 0.97) < 1e-9)
        }
    }

    /// The Weibull form is the textbook Weibull in concentration, 1 − exp(−(c/α)^β).
    @Test func theWeibullFormIsTheWeibullInConcentration() {
        let (m, w) = (-6.0, 1.5)
        let curve = PsychometricCurve(form: .weibull, log10Threshold: m, width: w, guessRate: 0.5, lapseRate: 0)
        let beta = gumbelSpan / (w * log(10))
        let alpha = pow(10, m - w * gumbelMid / gumbelSpan)
        for x in stride(from: -8.0, through: -4.0, by: 0.25) {
            let c = pow(10, x)
            let textbook = 1 - exp(-pow(c / alpha, beta))
            #expect(abs(curve.sigmoid(log10Concentration: x) - textbook) < 1e-12, "\(x)")
        }
    }

    /// Data that are the curve itself (10,000 trials a concentration, finds rounded from ψ):
    /// the fit gives the curve back.
    @Test func theFitRecoversACurveFromItsOwnData() throws {
        for form in PsychometricForm.allCases {
            let truth = PsychometricCurve(
                form: form, log10Threshold: -6.3, width: 1.2, guessRate: 1.0 / 3, lapseRate: 0.04)
            let data = stride(from: -8.0, through: -4.0, by: 0.5).map { x in
                let c = pow(10, x)
                return ConcentrationTally(
                    concentration: c, trials: 10_000,
                    found: Int((10_000 * truth.probabilityFound(concentration: c)).rounded()))
            }
            let fit = try PsychometricFit(data, settings: FitSettings(form: form, choices: 3))
            #expect(abs(fit.curve.log10Threshold - -6.3) < 0.005, "\(form): \(fit.curve)")
            #expect(abs(fit.curve.width - 1.2) < 0.01, "\(form): \(fit.curve)")
            #expect(abs(fit.curve.lapseRate - 0.04) < 0.002, "\(form): \(fit.curve)")
            #expect(fit.curve.guessRate == 1.0 / 3)
            // A maximum: no better than the truth's likelihood by more than rounding can give.
            let atTruth = FitData(data).negativeLogLikelihood(form: form, m: -6.3, w: 1.2, guess: 1.0 / 3, lapse: 0.04)
            #expect(fit.negativeLogLikelihood <= atTruth + 1e-9)
        }
    }

    /// A small set by hand (3 choices, 10 trials at each of five half-log dilutions): the fit is
    /// a maximum of the likelihood, every nearby curve less likely; a fixed lapse is kept.
    @Test func aSmallFitIsALocalMaximum() throws {
        let data = Self.smallSet
        let fit = try PsychometricFit(data, settings: FitSettings(form: .logistic, choices: 3))
        let d = FitData(data)
        let c = fit.curve
        for (dm, dw, dl) in [(0.01, 0, 0), (-0.01, 0, 0), (0, 0.01, 0), (0, -0.01, 0), (0, 0, 0.001)]
            as [(Double, Double, Double)]
        {
            let lapse = min(0.06, max(0, c.lapseRate + dl))
            let near = d.negativeLogLikelihood(
                form: .logistic, m: c.log10Threshold + dm, w: c.width + dw, guess: 1.0 / 3, lapse: lapse)
            #expect(near >= fit.negativeLogLikelihood - 1e-9, "\(dm) \(dw) \(dl)")
        }
        let fixed = try PsychometricFit(data, settings: FitSettings(form: .logistic, choices: 3, lapse: .fixed(0.02)))
        #expect(fixed.curve.lapseRate == 0.02)
        #expect(fixed.negativeLogLikelihood >= fit.negativeLogLikelihood - 1e-9)
    }

    /// The Weibull on ScipyFitTests' table has two maxima, one with a lapse of 0.040 (−log L
    /// 39.543) and the higher one without a lapse (39.532, scipy's): the fit finds the higher.
    @Test func aFitWithTwoMaximaFindsTheHigher() throws {
        let fit = try PsychometricFit(ScipyFitTests.table, settings: FitSettings(form: .weibull, choices: 3))
        #expect(fit.negativeLogLikelihood < 39.5318, "\(fit.curve), \(fit.negativeLogLikelihood)")
        #expect(fit.curve.lapseRate < 0.001, "\(fit.curve)")
    }

    static let smallSet = [
        ConcentrationTally(concentration: 1e-8, trials: 10, found: 3),
        ConcentrationTally(concentration: pow(10, -7.5), trials: 10, found: 4),
        ConcentrationTally(concentration: 1e-7, trials: 10, found: 6),
        ConcentrationTally(concentration: pow(10, -6.5), trials: 10, found: 9),
        ConcentrationTally(concentration: 1e-6, trials: 10, found: 10),
    ]

    @Test func badDataAreNamed() {
        let cases: [([ConcentrationTally], FitSettings, String)] = [
            (
                [ConcentrationTally(concentration: 1e-6, trials: 5, found: 2)], FitSettings(choices: 3),
                "threshold data: a curve needs trials at 2 or more different concentrations, the data have 1"
            ),
            (
                [
                    ConcentrationTally(concentration: 1e-6, trials: 5, found: 6),
                    ConcentrationTally(concentration: 1e-5, trials: 5, found: 5),
                ],
                FitSettings(choices: 3),
                "threshold data: row 1: 6 found of 5 trials; trials must be 1 or more, found 0 to trials"
            ),
            (
                [ConcentrationTally(concentration: -1, trials: 5, found: 1)], FitSettings(choices: 3),
                "threshold data: row 1: the concentration -1.0 is not a positive number"
            ),
            (
                Self.smallSet, FitSettings(choices: 1),
                "threshold data: a fit needs at least 2 choices (the guess rate 1/choices), not 1"
            ),
            (
                Self.smallSet, FitSettings(choices: 3, lapse: .fitted(max: 0)),
                "threshold data: the lapse rate's upper bound must be above 0 and below 0.5, not 0.0"
            ),
        ]
        for (data, settings, message) in cases {
            do {
                _ = try PsychometricFit(data, settings: settings)
                Issue.record("accepted: \(message)")
            } catch {
                #expect("\(error)" == message)
            }
        }
    }

    @Test func theNormalQuantileIsRight() {
        #expect(abs(normalQuantile(0.975) - 1.959963984540054) < 1e-12)
        #expect(abs(normalQuantile(0.5)) < 1e-12)
        #expect(abs(normalQuantile(0.001) - -3.090232306167813) < 1e-11)
    }

    @Test func theQuantileIsTheEnginesQuantile() {
        var random = SeededGenerator(seed: 3)
        for n in 1...30 {
            let values = (0..<n).map { _ in random.unit() * 10 }.sorted()
            for p in [0, 0.025, 0.25, 0.5, 0.975, 0.99, 1] {
                #expect(quantileType7(values, p) == quantile(values, p))
            }
        }
    }

    /// The profile interval holds the estimate, its ends are where the profile crosses the
    /// cut, and four times the trials make it about half as wide.
    @Test func theProfileIntervalCrossesTheCutAndNarrowsWithData() throws {
        let fit = try PsychometricFit(Self.smallSet, settings: FitSettings(choices: 3))
        let ci = try fit.profileInterval()
        #expect(ci.contains(log10Concentration: fit.curve.log10Threshold))
        #expect(!ci.lowerIsBound && !ci.upperIsBound)
        let cut = fit.negativeLogLikelihood + 3.841458820694124 / 2
        for end in [ci.log10Lower, ci.log10Upper] {
            let at = PsychometricFit.maximise(FitData(Self.smallSet), settings: fit.settings, fixedThreshold: end).value
            #expect(abs(at - cut) < 0.01, "\(end): \(at) against \(cut)")
        }
        let four = Self.smallSet.map {
            ConcentrationTally(concentration: $0.concentration, trials: 40, found: 4 * $0.found)
        }
        let ci4 = try PsychometricFit(four, settings: FitSettings(choices: 3)).profileInterval()
        let ratio = (ci4.log10Upper - ci4.log10Lower) / (ci.log10Upper - ci.log10Lower)
        #expect(ratio > 0.35 && ratio < 0.65, "\(ratio)")
    }

    /// A dog that found everything: the data cannot say how weak it could go, and the interval
    /// says so (its lower end is the search's bound).
    @Test func anOpenEndIsMarked() throws {
        let all = Self.smallSet.map { ConcentrationTally(concentration: $0.concentration, trials: 10, found: 10) }
        let ci = try PsychometricFit(all, settings: FitSettings(choices: 3)).profileInterval()
        #expect(ci.lowerIsBound)
    }

    @Test func theBootstrapIntervalIsSeededAndNearTheProfileOnPlentifulData() throws {
        let truth = PsychometricCurve(
            form: .logistic, log10Threshold: -7, width: 1, guessRate: 1.0 / 3, lapseRate: 0.02)
        let data = stride(from: -8.0, through: -6.0, by: 0.5).map { x in
            ConcentrationTally(
                concentration: pow(10, x), trials: 200,
                found: Int((200 * truth.probabilityFound(concentration: pow(10, x))).rounded()))
        }
        let fit = try PsychometricFit(data, settings: FitSettings(choices: 3))
        var a = SeededGenerator(seed: 11)
        var b = SeededGenerator(seed: 11)
        let boot = try fit.bootstrapInterval(resamples: 200, using: &a)
        let again = try fit.bootstrapInterval(resamples: 200, using: &b)
        #expect(boot == again)
        let profile = try fit.profileInterval()
        #expect(abs(boot.log10Lower - profile.log10Lower) < 0.05, "\(boot) \(profile)")
        #expect(abs(boot.log10Upper - profile.log10Upper) < 0.05, "\(boot) \(profile)")
    }
}
