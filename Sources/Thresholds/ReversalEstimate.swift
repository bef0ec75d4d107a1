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
