/// A proportion with its Wilson score interval (95 % unless another z is given).
///
/// Wilson rather than the normal approximation because lineup counts are small and
/// proportions sit near 0 or 1, where the normal interval leaves [0, 1].
public struct Proportion: Sendable, Hashable, Codable {
    public var successes: Int
    public var trials: Int
    public var value: Double?
    public var lower: Double?
    public var upper: Double?

    public init(successes: Int, trials: Int, z: Double = 1.959963984540054) {
        precondition(successes >= 0 && trials >= successes, "successes must be within 0...trials")
        self.successes = successes
        self.trials = trials
        guard trials > 0 else {
            value = nil
            lower = nil
            upper = nil
            return
        }
        let n = Double(trials)
        let p = Double(successes) / n
        let z2 = z * z
        let centre = (p + z2 / (2 * n)) / (1 + z2 / n)
        let half = z / (1 + z2 / n) * (p * (1 - p) / n + z2 / (4 * n * n)).squareRoot()
        value = p
        // Clamped to enclose p: at p = 0 or 1 rounding can otherwise leave a bound a hair past it.
        lower = min(p, max(0, centre - half))
        upper = max(p, min(1, centre + half))
    }
}
