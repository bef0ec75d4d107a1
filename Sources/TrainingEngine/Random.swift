// Seeded randomness. The standard library's `random(in:using:)` and `shuffle(using:)` are not
// promised to stay the same across Swift versions, so layouts and simulations draw through
// these few functions instead: the same seed gives the same block on every platform, forever.

/// Xoshiro256** seeded through SplitMix64: small, fast, and the same on every platform.
public struct SeededGenerator: RandomNumberGenerator, Sendable, Hashable {
    private var s0: UInt64
    private var s1: UInt64
    private var s2: UInt64
    private var s3: UInt64
    /// The seed this generator started from, kept for the record.
    public let seed: UInt64

    public init(seed: UInt64) {
        self.seed = seed
        var sm = seed
        func splitMix(_ x: inout UInt64) -> UInt64 {
            x &+= 0x9E37_79B9_7F4A_7C15
            var z = x
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s0 = splitMix(&sm)
        s1 = splitMix(&sm)
        s2 = splitMix(&sm)
        s3 = splitMix(&sm)
    }

    public mutating func next() -> UInt64 {
        let result = ((s1 &* 5) << 7 | (s1 &* 5) >> 57) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = (s3 << 45) | (s3 >> 19)
        return result
    }

    /// A uniform integer in `0..<bound` (Lemire's method, unbiased). `bound` must be positive.
    public mutating func below(_ bound: Int) -> Int {
        guard bound > 1 else { return 0 }
        let b = UInt64(bound)
        var m = next().multipliedFullWidth(by: b)
        if m.low < b {
            let threshold = (0 &- b) % b
            while m.low < threshold { m = next().multipliedFullWidth(by: b) }
        }
        return Int(m.high)
    }

    /// A uniform integer in a closed range.
    public mutating func int(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + below(range.upperBound - range.lowerBound + 1)
    }

    /// A uniform double in `0..<1` with 53 random bits.
    public mutating func unit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool {
        unit() < p
    }

    /// A uniform double in a closed range.
    public mutating func double(in range: ClosedRange<Double>) -> Double {
        range.lowerBound + (range.upperBound - range.lowerBound) * unit()
    }

    /// Fisher–Yates, drawn through `below` so the order is the same everywhere.
    public mutating func shuffle<T>(_ array: inout [T]) {
        guard array.count > 1 else { return }
        var i = array.count - 1
        while i > 0 {
            let j = below(i + 1)
            array.swapAt(i, j)
            i -= 1
        }
    }
}
