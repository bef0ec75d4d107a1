import Foundation
import Testing

@testable import Thresholds

/// The simulation study's yardstick for the reversal estimate: the t interval of the last k
/// reversals' log10 concentrations. Student's t quantiles from scipy.stats.t.ppf(0.975, ν),
/// computed outside the project.
@Suite struct ReversalIntervalTests {
    @Test(arguments: [
        (1, 12.706204736174694), (2, 4.302652729749462), (3, 3.1824463052837078), (5, 2.5705818356363146),
        (6, 2.4469118511449786), (11, 2.200985160091639), (35, 2.030107928250343),
    ])
    func studentsTMatchesScipy(_ nu: Int, _ expected: Double) {
        #expect(abs(studentTQuantile(twoSided: 0.95, degreesOfFreedom: nu) - expected) < 1e-9)
    }

    /// Last 6 of 10^-1, 10^-6, 10^-3, 10^-5, 10^-3, 10^-5, 10^-4, 10^-4: mean −4, sample SD
    /// √(4/5), so −4 ± 2.5705818 × √(4/5) / √6 = −4 ± 0.938795.
    @Test func theIntervalOfTheLastSix() throws {
        let reversals = [-1.0, -6, -3, -5, -3, -5, -4, -4].map { pow(10, $0) }
        let i = try reversalInterval(reversals, last: 6)
        let half = 2.5705818356363146 * (0.8).squareRoot() / (6.0).squareRoot()
        #expect(abs(i.log10Lower - (-4 - half)) < 1e-9 && abs(i.log10Upper - (-4 + half)) < 1e-9)
        #expect(throws: ThresholdError.self) { try reversalInterval(reversals, last: 9) }
    }
}
