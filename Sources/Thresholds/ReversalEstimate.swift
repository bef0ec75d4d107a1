// The reversal estimate (docs/figures.md, "A threshold"): the geometric mean of the last k
// reversals' concentrations, as the 2024 PLoS One study (e0306817) took the last 6 of 8.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The geometric mean of the last `k` of `reversalConcentrations` (in order of occurrence).
public func reversalEstimate(_ reversalConcentrations: [Double], last k: Int) throws(ThresholdError) -> Double {
    guard k >= 1 else { throw .data("the reversal estimate needs k of at least 1, not \(k)") }
    guard reversalConcentrations.count >= k else {
        throw .data(
            "the reversal estimate over the last \(k) reversals needs \(k), the staircase has "
                + "\(reversalConcentrations.count)")
    }
    let last = reversalConcentrations.suffix(k)
    return exp(last.reduce(0) { $0 + log($1) } / Double(k))
}

/// The simulation study's interval around the reversal estimate (docs/figures.md, "Simulation
/// study"; the project's): the mean of the last `k` reversals' log10 concentrations ± Student's
/// t (k − 1 degrees of freedom) times their standard error, as log10 ends. Reversals of one
/// staircase are not independent, so this is a yardstick, not a claim of 95 %.
public func reversalInterval(_ reversalConcentrations: [Double], last k: Int, level: Double = 0.95)
    throws(ThresholdError) -> (log10Lower: Double, log10Upper: Double)
{
    guard k >= 2 else { throw .data("the reversal interval needs k of at least 2, not \(k)") }
    guard reversalConcentrations.count >= k else {
        throw .data(
            "the reversal interval over the last \(k) reversals needs \(k), the staircase has \(reversalConcentrations.count)"
        )
    }
    let xs = reversalConcentrations.suffix(k).map { log10($0) }
    let mean = xs.reduce(0, +) / Double(k)
    let sd = (xs.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(k - 1)).squareRoot()
    let half = studentTQuantile(twoSided: level, degreesOfFreedom: k - 1) * sd / Double(k).squareRoot()
    return (mean - half, mean + half)
}

/// P(|T| ≤ t) for Student's t with a whole number of degrees of freedom (Abramowitz & Stegun
/// 26.7.3 and 26.7.4: finite sums in θ = atan(t / √ν)).
func studentTCentral(_ t: Double, degreesOfFreedom nu: Int) -> Double {
    let theta = atan(abs(t) / Double(nu).squareRoot())
    let (s, c2) = (sin(theta), cos(theta) * cos(theta))
    var term = 1.0
    var sum = 1.0
    if nu % 2 == 1 {
        guard nu > 1 else { return 2 * theta / Double.pi }
        for j in stride(from: 2, through: nu - 3, by: 2) {
            term *= Double(j) / Double(j + 1) * c2
            sum += term
        }
        return 2 / Double.pi * (theta + s * cos(theta) * sum)
    }
    for j in stride(from: 1, through: nu - 3, by: 2) {
        term *= Double(j) / Double(j + 1) * c2
        sum += term
    }
    return s * sum
}

/// The t with P(|T| ≤ t) = `level`, by bisection (to 1e-12).
func studentTQuantile(twoSided level: Double, degreesOfFreedom nu: Int) -> Double {
    var (low, high) = (0.0, 1e6)
    while high - low > 1e-12 * max(1, high) {
        let mid = (low + high) / 2
        if studentTCentral(mid, degreesOfFreedom: nu) < level { low = mid } else { high = mid }
    }
    return (low + high) / 2
}
