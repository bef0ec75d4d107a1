// Two small numeric helpers of the threshold module: a uniform draw from the caller's seeded
// generator, and the project's quantile.

extension RandomNumberGenerator {
    /// A uniform double in 0..<1 from 53 random bits: the same draw as TrainingEngine's
    /// SeededGenerator.unit(), so a procedure given that generator draws what it would.
    mutating func unitInterval() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// A uniform integer in 0..<bound (Lemire's method, unbiased), as SeededGenerator.below.
    mutating func below(_ bound: Int) -> Int {
        guard bound > 1 else { return 0 }
        let b = UInt64(bound)
        var m = next().multipliedFullWidth(by: b)
        if m.low < b {
            let threshold = (0 &- b) % b
            while m.low < threshold { m = next().multipliedFullWidth(by: b) }
        }
        return Int(m.high)
    }

    /// Fisher–Yates through `below`, so an order is the same on every platform.
    mutating func shuffleInPlace<T>(_ array: inout [T]) {
        guard array.count > 1 else { return }
        var i = array.count - 1
        while i > 0 {
            array.swapAt(i, below(i + 1))
            i -= 1
        }
    }
}

/// The project's quantile (docs/figures.md, "Quantiles": R's type 7), here because this module
/// sits below TrainingEngine, whose `quantile` is the definition; ThresholdsTests checks that
/// the two agree. `sorted` ascending and not empty.
func quantileType7(_ sorted: [Double], _ p: Double) -> Double {
    precondition(!sorted.isEmpty, "quantile of no values")
    let h = Double(sorted.count - 1) * min(1, max(0, p))
    let lower = Int(h.rounded(.down))
    let upper = min(sorted.count - 1, lower + 1)
    return sorted[lower] + (h - Double(lower)) * (sorted[upper] - sorted[lower])
}
