// A ladder of dilutions for a threshold procedure (issue 38): the concentrations a staircase
// or the method of constant stimuli may present, weakest first. Pure: the C library's maths only.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What is wrong with a procedure's settings, its answers or a fit's data, in words a
/// researcher can act on.
public enum ThresholdError: Error, Sendable, Hashable, CustomStringConvertible {
    case ladder(String)
    case rules(String)
    case answer(String)
    case data(String)

    public var description: String {
        switch self {
        case .ladder(let why): "dilution ladder: \(why)"
        case .rules(let why): "procedure: \(why)"
        case .answer(let why): "answer: \(why)"
        case .data(let why): "threshold data: \(why)"
        }
    }
}

/// The dilutions a procedure may present, as concentrations (any unit, the same for all: a
/// fraction of the stock, parts per trillion), strictly increasing: rung 0 is the weakest.
/// Stepping "down" a staircase goes to a lower rung, a weaker dilution.
public struct DilutionLadder: Sendable, Hashable {
    public let concentrations: [Double]

    public init(concentrations: [Double]) throws(ThresholdError) {
        guard concentrations.count >= 2 else {
            throw .ladder("needs at least 2 dilutions, has \(concentrations.count)")
        }
        for (i, c) in concentrations.enumerated() where !(c.isFinite && c > 0) {
            throw .ladder("rung \(i) has concentration \(c); each must be a positive number")
        }
        for i in 1..<concentrations.count where concentrations[i] <= concentrations[i - 1] {
            throw .ladder(
                "rung \(i) (\(concentrations[i])) is not stronger than rung \(i - 1) (\(concentrations[i - 1])); "
                    + "list the dilutions weakest first, each stronger than the last")
        }
        self.concentrations = concentrations
    }

    /// A ladder of `rungs` dilutions with a constant factor between neighbours, from `weakest`
    /// up: `stepsPerDecade` 2 is the half-log ladder (factor √10), 1 the tenfold one.
    public init(weakest: Double, rungs: Int, stepsPerDecade: Double) throws(ThresholdError) {
        guard stepsPerDecade > 0, stepsPerDecade.isFinite else {
            throw .ladder("steps per decade must be a positive number, not \(stepsPerDecade)")
        }
        guard rungs >= 2 else { throw .ladder("needs at least 2 dilutions, has \(rungs)") }
        guard weakest.isFinite, weakest > 0 else {
            throw .ladder("the weakest dilution's concentration must be a positive number, not \(weakest)")
        }
        let start = log10(weakest)
        try self.init(concentrations: (0..<rungs).map { pow(10, start + Double($0) / stepsPerDecade) })
    }

    /// The half-log ladder of 16 dilutions from 1e-10 up to 10^-2.5 (the threshold study's).
    /// A constant, so nothing may fail: its rungs are positive, finite and increasing by
    /// construction, and `LadderTests` checks it is the checked initializer's ladder.
    public static let halfLog16From1e10 = DilutionLadder(
        known: (0..<16).map { pow(10, -10 + Double($0) / 2) })

    /// Concentrations known valid (a constant of this module): no check, no error to handle.
    private init(known concentrations: [Double]) { self.concentrations = concentrations }

    public var count: Int { concentrations.count }

    /// log10 of each rung's concentration: where the psychometric fit works.
    public var log10Concentrations: [Double] { concentrations.map { log10($0) } }
}
