import Foundation
import Testing

@testable import Thresholds

/// The two groups of ThresholdFiguresAgreementTests' log that once differed from scipy by 3 to
/// 5 % (docs/figures.md, "In `stats`"). Five stations (guess rate 0.2), tenfold dilutions
/// 10^-3 to 1. The references were computed outside the project with scipy: each profile point
/// refitted from a 400 × 61 grid of widths and lapses, then L-BFGS-B; an interval's end is where
/// that profile crosses the maximum + 1.92.
@Suite struct FlatProfileTests {
    static func tallies(_ rows: [(Int, Int)]) -> [ConcentrationTally] {
        zip([1e-3, 1e-2, 1e-1, 1], rows).map { ConcentrationTally(concentration: $0, trials: $1.0, found: $1.1) }
    }

    /// Found 3/5, 6/7, 9/9, 9/10: the interval's upper end needs the narrowest curve (w at its
    /// bound, a hundredth of the span); the search once stopped at 0.00947, where scipy's
    /// profile is still 0.092 inside the cut, for an end at 0.00979.
    @Test func theUpperEndReachesTheNarrowestCurve() throws {
        let fit = try PsychometricFit(
            Self.tallies([(5, 3), (7, 6), (9, 9), (10, 9)]), settings: FitSettings(choices: 5))
        let interval = try fit.profileInterval()
        #expect(interval.lowerIsBound && !interval.upperIsBound)
        #expect(abs(interval.upper / 0.009791549841523011 - 1) < 0.01, "\(interval.upper)")
    }

    /// Found 2/10, 3/10, 6/6, 8/9: the threshold lies on a ridge. 3 of 10 at 10^-2 pins the
    /// curve's height there, and every narrower curve whose threshold sits that much above 10^-2
    /// fits the other dilutions as well (found nothing beyond guessing at 10^-3, everything but
    /// the lapse at 10^-1): −log L is the same to 1e-9 for thresholds 0.01097 (scipy's) and
    /// 0.01151. The interval's upper end, 0.0987, once came out at 0.0952 (scipy's profile
    /// there 1.44 inside the cut).
    @Test func aThresholdOnAFlatRidgeAndItsInterval() throws {
        let data = Self.tallies([(10, 2), (10, 3), (6, 6), (9, 8)])
        let fit = try PsychometricFit(data, settings: FitSettings(choices: 5))
        let prepared = FitData(data)
        for m in [log10(0.010967488976202382), log10(0.01151063294915228)] {
            let at = PsychometricFit.maximise(prepared, settings: fit.settings, fixedThreshold: m)
            #expect(abs(at.value - fit.negativeLogLikelihood) < 1e-6, "\(m): \(at.value)")
        }
        let interval = try fit.profileInterval()
        #expect(abs(interval.upper / 0.09870331278972794 - 1) < 0.01, "\(interval.upper)")
        #expect(abs(interval.lower / 0.009095536497706046 - 1) < 0.01, "\(interval.lower)")
    }
}
