import Foundation
import Testing
import Thresholds

/// docs/figures.md, "How little the dog can smell": the worked example's numbers, as printed there.
@Suite struct ThresholdWorkedExampleTests {
    func rounded(_ x: Double, _ digits: Int) -> Double {
        let scale = pow(10, Double(digits))
        return (x * scale).rounded() / scale
    }

    @Test func theReversalEstimate() throws {
        // StaircaseTests' 2-down-1-up: reversals at rungs 3, 5, 3, 4 of the half-log ladder from 1e-9.
        let ladder = try DilutionLadder(weakest: 1e-9, rungs: 8, stepsPerDecade: 2)
        let reversals = [3, 5, 3, 4].map { ladder.concentrations[$0] }
        #expect(rounded(log10(try reversalEstimate(reversals, last: 3)), 6) == -7)
        #expect(rounded(log10(try reversalEstimate(reversals, last: 4)), 6) == -7.125)
    }

    @Test func theFit() throws {
        let fit = try PsychometricFit(ScipyFitTests.table, settings: FitSettings(form: .logistic, choices: 3))
        #expect(rounded(fit.curve.log10Threshold, 3) == -6.086)
        #expect(rounded(fit.threshold * 1e7, 1) == 8.2)
        #expect(rounded(fit.curve.width, 2) == 3.38)
        #expect(rounded(fit.curve.lapseRate, 3) == 0)
        #expect(rounded(fit.negativeLogLikelihood, 2) == 39.31)
        let ci = try fit.profileInterval()
        #expect(rounded(ci.log10Lower, 2) == -7.06)
        #expect(rounded(ci.log10Upper, 2) == -5.30)
        #expect(rounded(ci.lower * 1e8, 1) == 8.7)
        #expect(rounded(ci.upper * 1e6, 1) == 5.0)
        // ψ at the threshold: 1/3 + (2/3)/2 = 2/3.
        #expect(rounded(fit.curve.probabilityFound(concentration: fit.threshold), 4) == 0.6667)
        // The Weibull's maximum on the same table.
        let weibull = try PsychometricFit(ScipyFitTests.table, settings: FitSettings(form: .weibull, choices: 3))
        #expect(rounded(weibull.threshold * 1e6, 2) == 1.13)
    }
}
