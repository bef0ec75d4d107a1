import Foundation
import Testing
import Thresholds
import TrainingEngine
import VirtualDog

/// The simulation study of issue 38's "done when": 200 virtual dogs with known thresholds
/// spread over a half-log ladder, each through a 2-down-1-up and a 3-down-1-up staircase and
/// the method of constant stimuli; the fitted threshold's median error within half a ladder
/// step, and the 95 % interval holding the true threshold for 90 % to 99 % of the dogs.
/// `LINEUP_THRESHOLD_DOGS` runs more or fewer dogs, `LINEUP_THRESHOLD_SEED` another seed.
@Suite struct ThresholdStudyTests {
    static let settings: ThresholdStudy.Settings = {
        let environment = ProcessInfo.processInfo.environment
        var s = ThresholdStudy.Settings()
        s.dogs = environment["LINEUP_THRESHOLD_DOGS"].flatMap { Int($0) } ?? 200
        s.seed = environment["LINEUP_THRESHOLD_SEED"].flatMap { UInt64($0) } ?? 38
        return s
    }()

    @Test(arguments: [ThresholdStudy.Procedure.staircase(down: 2), .staircase(down: 3), .constantStimuli])
    func theFitFindsTheThresholdAndItsIntervalCoversIt(_ procedure: ThresholdStudy.Procedure) throws {
        let study = ThresholdStudy(settings: Self.settings)
        let clock = ContinuousClock()
        let started = clock.now
        let results = try study.results(procedure)
        let summary = ThresholdStudySummary(procedure: "\(procedure)", results: results, stepLog10: 0.5)
        print(
            "threshold study, \(procedure): \(summary.dogs) dogs in \(clock.now - started); median trials "
                + "\(summary.medianTrials), median error \(summary.medianError), median |error| "
                + "\(summary.medianAbsoluteError) (\(summary.medianAbsoluteErrorSteps) steps), coverage "
                + "\(summary.coverage), open intervals \(summary.openIntervals), reversal estimate median error "
                + "\(summary.reversalMedianError.map { "\($0)" } ?? "none"), its t interval's coverage "
                + "\(summary.reversalCoverage.map { "\($0)" } ?? "none"), within half a step "
                + "\(summary.reversalWithinHalfStep.map { "\($0)" } ?? "none")")
        if case .staircase = procedure {
            // Every staircase reaches the study's 16 reversals or its 150 trials; each estimate
            // that exists has its interval.
            #expect(summary.reversalEstimates >= summary.dogs * 9 / 10, "\(summary)")
            #expect(summary.reversalCoverage != nil && summary.reversalWithinHalfStep != nil)
        } else {
            #expect(summary.reversalEstimates == 0 && summary.reversalCoverage == nil)
        }
        #expect(summary.medianAbsoluteErrorSteps <= 0.5, "\(summary)")
        #expect(abs(summary.medianError) <= 0.25, "\(summary)")
        #expect(summary.coverage >= 0.90 && summary.coverage <= 0.99, "\(summary)")
    }

    /// The same seed gives the same dogs, answers and fits; the procedures meet the same dogs.
    @Test func theStudyIsDeterministic() throws {
        var s = Self.settings
        s.dogs = 3
        let a = try ThresholdStudy(settings: s).results(.staircase(down: 2))
        let b = try ThresholdStudy(settings: s).results(.staircase(down: 2))
        #expect(a.map(\.run.trials) == b.map(\.run.trials))
        #expect(a.map(\.fit) == b.map(\.fit))
        let c = try ThresholdStudy(settings: s).results(.constantStimuli)
        #expect(a.map(\.run.truth) == c.map(\.run.truth))
        #expect(a.map(\.run.trials) != c.map(\.run.trials))
    }

    /// The virtual dog finds at the rate its curve says (guess rate at the weakest, 1 − λ at the strongest).
    @Test func thePsychometricDogFindsAtItsCurvesRate() {
        let curve = PsychometricCurve(form: .weibull, log10Threshold: -6, width: 1, guessRate: 1.0 / 3, lapseRate: 0.05)
        var dog = PsychometricDog(curve: curve, seed: 9)
        for (x, expected) in [(-10.0, 1.0 / 3), (-6.0, 1.0 / 3 + (1 - 1.0 / 3 - 0.05) / 2), (-2.0, 0.95)] {
            let n = 20_000
            let found = (0..<n).count { _ in dog.finds(concentration: pow(10, x)) }
            let sd = (expected * (1 - expected) / Double(n)).squareRoot()
            #expect(abs(Double(found) / Double(n) - expected) < 4 * sd, "\(x): \(found)")
        }
    }
}
