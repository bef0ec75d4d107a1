// The threshold simulation study (issue 38): virtual dogs with known thresholds spread over a
// ladder run a staircase or the method of constant stimuli; each dog's trials are fitted and
// the fitted threshold and its interval set against the truth. The test
// (Tests/ThresholdsTests/ThresholdStudyTests.swift) and `lineup-bench threshold` run it.

import Figures
import Thresholds
import TrainingEngine

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

public struct ThresholdStudy: Sendable {
    public enum Procedure: Sendable, Hashable, CustomStringConvertible {
        /// n-down-1-up.
        case staircase(down: Int)
        case constantStimuli

        /// A number of its own, so each procedure's draws differ (hashValue is seeded per process).
        var code: UInt64 {
            switch self {
            case .staircase(let n): UInt64(n)
            case .constantStimuli: 1000
            }
        }

        public var description: String {
            switch self {
            case .staircase(let n): "\(n)-down-1-up"
            case .constantStimuli: "constant-stimuli"
            }
        }
    }

    /// The study's set-up. The dogs' settings are the simulation's, not figures from a study;
    /// the stop rule and the 3 stations follow DeChant & Hall 2021's three-choice task.
    public struct Settings: Sendable, Hashable {
        public var dogs = 200
        public var seed: UInt64 = 38
        /// A half-log ladder of 16 dilutions, 1e-10 up to 10^-2.5.
        public var ladder = DilutionLadder.halfLog16From1e10
        public var stations = 3
        public var form = PsychometricForm.logistic
        /// The dogs' true log10 thresholds: uniform over this range (inside the ladder).
        public var log10Thresholds = -8.0...(-4.5)
        /// The dogs' widths (log10 units from F 0.1 to 0.9) and lapse rates: uniform.
        public var widths = 0.8...1.6
        public var lapseRates = 0.0...0.04
        /// Staircases start at the strongest rung, step one rung, stop at so many reversals
        /// (or trials), with catch trials at this rate.
        public var stopAfterReversals = 16
        public var stopAfterTrials = 150
        public var catchTrialRate = 0.1
        /// Constant stimuli: every other rung from rung 2, this many blocks.
        public var constantRungs = Array(stride(from: 2, through: 14, by: 2))
        public var constantBlocks = 12
        /// The reversal estimate's k (the 2024 PLoS One study's last 6).
        public var reversalsAveraged = 6
        public var interval = IntervalMethod.profileLikelihood

        public init() {}
    }

    public enum IntervalMethod: Sendable, Hashable {
        case profileLikelihood
        case bootstrap(resamples: Int)
    }

    /// One dog's run: its truth and its answers.
    public struct Run: Sendable {
        public var dog: Int
        public var truth: PsychometricCurve
        public var trials: [ThresholdTrial]
        public var tallies: [ConcentrationTally]
        /// The reversal estimate in log10 concentration (staircases with enough reversals).
        public var log10ReversalEstimate: Double?
        /// Its 95 % t interval (`reversalInterval`), log10 ends.
        public var log10ReversalInterval: (lower: Double, upper: Double)? = nil
    }

    /// One dog's result: the fit against the truth.
    public struct Result: Sendable {
        public var run: Run
        public var fit: PsychometricFit
        public var interval: ThresholdInterval

        public init(run: Run, fit: PsychometricFit, interval: ThresholdInterval) {
            self.run = run
            self.fit = fit
            self.interval = interval
        }

        /// Fitted minus true log10 threshold.
        public var error: Double { fit.curve.log10Threshold - run.truth.log10Threshold }
        public var covered: Bool { interval.contains(log10Concentration: run.truth.log10Threshold) }
    }

    public let settings: Settings

    public init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// Dog `index`'s true curve: the same for every procedure, so they are compared on the same dogs.
    public func truth(dog index: Int) -> PsychometricCurve {
        var random = SeededGenerator(seed: settings.seed &+ UInt64(index) &* 0x9E37_79B9)
        return PsychometricCurve(
            form: settings.form, log10Threshold: random.double(in: settings.log10Thresholds),
            width: random.double(in: settings.widths), guessRate: 1 / Double(settings.stations),
            lapseRate: random.double(in: settings.lapseRates))
    }

    /// Dog `index` runs `procedure`.
    public func simulate(dog index: Int, _ procedure: Procedure) throws(ThresholdError) -> Run {
        let truth = truth(dog: index)
        let seed = settings.seed &+ UInt64(index) &* 0x2545_F491 &+ procedure.code &* 0x1_0000_0001
        var dog = PsychometricDog(curve: truth, seed: seed)
        var random = SeededGenerator(seed: ~seed)
        let ladder = settings.ladder
        switch procedure {
        case .staircase(let down):
            let rules = StaircaseRules(
                down: down, startRung: ladder.count - 1, stopAfterReversals: settings.stopAfterReversals,
                stopAfterTrials: settings.stopAfterTrials, catchTrialRate: settings.catchTrialRate)
            var staircase = try Staircase(rules: rules, ladder: ladder)
            while let answer = dog.answer(staircase.next(using: &random), on: ladder) {
                try staircase.record(answer)
            }
            let estimate = try? staircase.reversalEstimate(last: settings.reversalsAveraged)
            let turns = staircase.reversals.map { ladder.concentrations[$0.rung] }
            let interval = try? reversalInterval(turns, last: settings.reversalsAveraged)
            return Run(
                dog: index, truth: truth, trials: staircase.trials, tallies: staircase.tallies,
                log10ReversalEstimate: estimate.map { log10($0) },
                log10ReversalInterval: interval.map { ($0.log10Lower, $0.log10Upper) })
        case .constantStimuli:
            let mcs = try ConstantStimuli(
                ladder: ladder, rungs: settings.constantRungs, blocks: settings.constantBlocks)
            let trials = mcs.order(using: &random).compactMap { dog.answer($0, on: ladder) }
            return Run(
                dog: index, truth: truth, trials: trials, tallies: tallies(of: trials, on: ladder),
                log10ReversalEstimate: nil)
        }
    }

    /// The run's fit and interval.
    public func analyse(_ run: Run) throws(ThresholdError) -> Result {
        let fit = try fit(run)
        return Result(run: run, fit: fit, interval: try interval(fit, dog: run.dog))
    }

    public func fit(_ run: Run) throws(ThresholdError) -> PsychometricFit {
        try PsychometricFit(run.tallies, settings: FitSettings(form: settings.form, choices: settings.stations))
    }

    /// The fit's interval by the study's method (the bootstrap's draws seeded by the dog).
    public func interval(_ fit: PsychometricFit, dog: Int) throws(ThresholdError) -> ThresholdInterval {
        switch settings.interval {
        case .profileLikelihood:
            return try fit.profileInterval()
        case .bootstrap(let resamples):
            var random = SeededGenerator(seed: settings.seed ^ UInt64(dog) &* 0xBF58_476D)
            return try fit.bootstrapInterval(resamples: resamples, using: &random)
        }
    }

    /// Every dog through `procedure`.
    public func results(_ procedure: Procedure) throws(ThresholdError) -> [Result] {
        var all: [Result] = []
        for i in 0..<settings.dogs { all.append(try analyse(try simulate(dog: i, procedure))) }
        return all
    }
}

/// What the study measured over its dogs, for one procedure.
public struct ThresholdStudySummary: Sendable, Hashable, Codable {
    public var procedure: String
    public var dogs: Int
    public var medianTrials: Double
    /// Median of fitted − true log10 threshold (the bias), and of its absolute value.
    public var medianError: Double
    public var medianAbsoluteError: Double
    /// The median absolute error in ladder steps.
    public var medianAbsoluteErrorSteps: Double
    /// Dogs whose interval held the true threshold, as a share.
    public var coverage: Double
    /// Intervals with an end at the search's bound (open on that side).
    public var openIntervals: Int
    public var medianIntervalWidth: Double
    /// The reversal estimate's median error against the true threshold (staircases only).
    public var reversalMedianError: Double?
    public var reversalMedianAbsoluteError: Double?
    public var reversalEstimates: Int
    /// Of the dogs with a reversal estimate: the share whose 95 % t interval of the last k
    /// reversals held the true threshold, and the share within half a ladder step of it.
    public var reversalCoverage: Double?
    public var reversalWithinHalfStep: Double?

    public init(procedure: String, results: [ThresholdStudy.Result], stepLog10: Double) {
        self.procedure = procedure
        dogs = results.count
        func median(_ v: [Double]) -> Double { quantile(v.sorted(), 0.5) }
        medianTrials = median(results.map { Double($0.run.trials.count) })
        medianError = median(results.map(\.error))
        medianAbsoluteError = median(results.map { abs($0.error) })
        medianAbsoluteErrorSteps = medianAbsoluteError / stepLog10
        coverage = Double(results.count { $0.covered }) / Double(results.count)
        openIntervals = results.count { $0.interval.lowerIsBound || $0.interval.upperIsBound }
        medianIntervalWidth = median(results.map { $0.interval.log10Upper - $0.interval.log10Lower })
        let reversal = results.compactMap { r in r.run.log10ReversalEstimate.map { $0 - r.run.truth.log10Threshold } }
        reversalEstimates = reversal.count
        reversalMedianError = reversal.isEmpty ? nil : median(reversal)
        reversalMedianAbsoluteError = reversal.isEmpty ? nil : median(reversal.map(abs))
        let truths = results.compactMap { r in
            r.run.log10ReversalInterval.map { ($0, r.run.truth.log10Threshold) }
        }
        reversalCoverage =
            truths.isEmpty
            ? nil : Double(truths.count { $0.0.lower <= $0.1 && $0.1 <= $0.0.upper }) / Double(truths.count)
        reversalWithinHalfStep =
            reversal.isEmpty ? nil : Double(reversal.count { abs($0) <= stepLog10 / 2 }) / Double(reversal.count)
    }
}
