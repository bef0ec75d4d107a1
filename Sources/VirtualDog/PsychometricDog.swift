// A dog with a known psychometric function (issue 38): at a target of concentration c it
// finds the target with the chance ψ(c) of a known curve (its threshold, width, the guess
// rate 1 / stations, a lapse); at a catch trial it indicates a station with a chosen chance.
// Pure and seeded, so a simulated threshold study knows the truth it estimates.

import Thresholds
import TrainingEngine

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

public struct PsychometricDog: Sendable {
    /// The dog's true curve: its threshold is what a study estimates.
    public let curve: PsychometricCurve
    /// The chance of indicating a station when no target is laid out (a false alert).
    public var blankAlertRate: Double
    private var random: SeededGenerator

    public init(curve: PsychometricCurve, blankAlertRate: Double = 0.1, seed: UInt64) {
        self.curve = curve
        self.blankAlertRate = blankAlertRate
        random = SeededGenerator(seed: seed)
    }

    /// A dog in a lineup of `stations` with one target: the guess rate is 1 / stations.
    public init(
        form: PsychometricForm, threshold: Double, width: Double, stations: Int, lapseRate: Double,
        blankAlertRate: Double = 0.1, seed: UInt64
    ) {
        self.init(
            curve: PsychometricCurve(
                form: form, log10Threshold: log10(threshold), width: width, guessRate: 1 / Double(stations),
                lapseRate: lapseRate),
            blankAlertRate: blankAlertRate, seed: seed)
    }

    /// One target trial: true if the dog found (indicated) the target. One draw.
    public mutating func finds(concentration: Double) -> Bool {
        random.chance(curve.probabilityFound(concentration: concentration))
    }

    /// One catch trial: true if the dog indicated a station anyway. One draw.
    public mutating func indicatesBlank() -> Bool {
        random.chance(blankAlertRate)
    }

    /// The dog's answer to what a procedure asked for on `ladder`; nil once it has stopped.
    public mutating func answer(_ trial: NextTrial, on ladder: DilutionLadder) -> ThresholdTrial? {
        switch trial {
        case .target(let rung): .target(rung: rung, found: finds(concentration: ladder.concentrations[rung]))
        case .catchTrial: .catchTrial(indicated: indicatesBlank())
        case .stopped: nil
        }
    }
}
