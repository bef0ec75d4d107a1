// The threshold's confidence interval (docs/figures.md, "A threshold"), two ways:
// - profile likelihood: every threshold m whose best likelihood, the width and lapse refitted
//   at that m, is within χ²₁(level) / 2 of the maximum's log-likelihood (Wilks). It reads only
//   the likelihood, so it holds for a staircase's adaptive trials as for constant stimuli.
// - parametric bootstrap: finds redrawn at each concentration's trials from the fitted curve,
//   each set refitted, the percentile interval of their thresholds (quantile type 7). It keeps
//   the trials per concentration fixed, which is the design of constant stimuli, not of a
//   staircase (whose trials follow the answers).

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

public struct ThresholdInterval: Sendable, Hashable {
    public enum Method: String, Sendable, Hashable {
        case profileLikelihood = "profile-likelihood"
        case bootstrapPercentile = "bootstrap-percentile"
    }

    public var method: Method
    public var level: Double
    /// The ends in log10 concentration.
    public var log10Lower: Double
    public var log10Upper: Double
    /// True where the end is the search's bound, not a crossing: the data do not close the
    /// interval on that side (the dog found, or missed, nearly everything).
    public var lowerIsBound: Bool
    public var upperIsBound: Bool

    public var lower: Double { pow(10, log10Lower) }
    public var upper: Double { pow(10, log10Upper) }

    public func contains(log10Concentration x: Double) -> Bool { log10Lower <= x && x <= log10Upper }
}

/// The standard normal's quantile (Acklam's rational approximation, relative error below
/// 1.2e-9, then one Newton step on erfc).
func normalQuantile(_ p: Double) -> Double {
    let a = [
        -3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02,
        -3.066479806614716e+01, 2.506628277459239e+00,
    ]
    let b = [
        -5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01,
        -1.328068155288572e+01,
    ]
    let c = [
        -7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00,
        4.374664141464968e+00, 2.938163982698783e+00,
    ]
    let d = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00]
    var x: Double
    if p < 0.02425 {
        let q = sqrt(-2 * log(p))
        x =
            (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
            / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    } else if p > 1 - 0.02425 {
        let q = sqrt(-2 * log(1 - p))
        x =
            -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
            / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    } else {
        let q = p - 0.5
        let r = q * q
        x =
            (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q
            / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
    }
    let e = 0.5 * erfc(-x / 2.0.squareRoot()) - p
    let u = e * (2 * Double.pi).squareRoot() * exp(x * x / 2)
    x -= u / (1 + x * u / 2)
    return x
}

extension PsychometricFit {
    /// The profile-likelihood interval at `level` (0.95 by default).
    public func profileInterval(level: Double = 0.95) throws(ThresholdError) -> ThresholdInterval {
        guard level > 0, level < 1 else { throw .data("the interval's level must be between 0 and 1, not \(level)") }
        let z = normalQuantile((1 + level) / 2)
        let cut = negativeLogLikelihood + z * z / 2
        let prepared = FitData(data)
        let bounds = FitBounds(prepared)
        let mHat = curve.log10Threshold
        var warm = (w: curve.width, lapse: curve.lapseRate)
        func profile(_ m: Double) -> Double {
            let best = Self.maximise(prepared, settings: settings, fixedThreshold: m, warmStart: warm)
            warm = (best.w, best.lapse)
            return best.value
        }
        // Walks out from the fit in steps of a tenth of the tested span until the profile
        // crosses the cut (or the bound), then closes in on the crossing by regula falsi
        // (Illinois) to 1e-4 log10 units: the profile is nearly a parabola, so a few steps do.
        func end(toward limit: Double) -> (Double, Bool) {
            let span = (bounds.mHigh - bounds.mLow) / 3
            let step = max(span / 10, 0.02) * (limit > mHat ? 1 : -1)
            warm = (curve.width, curve.lapseRate)
            var inside = (m: mHat, d: negativeLogLikelihood - cut)
            while true {
                let m = limit > mHat ? min(limit, inside.m + step) : max(limit, inside.m + step)
                let d = profile(m) - cut
                if d > 0 {
                    var (a, b) = (inside, (m: m, d: d))
                    var side = 0
                    for _ in 0..<100 where abs(b.m - a.m) > 1e-4 {
                        let c = b.m - b.d * (b.m - a.m) / (b.d - a.d)
                        let dc = profile(c) - cut
                        if dc > 0 {
                            b = (c, dc)
                            if side == 1 { a.d /= 2 }
                            side = 1
                        } else {
                            a = (c, dc)
                            if side == -1 { b.d /= 2 }
                            side = -1
                        }
                        if abs(dc) < 1e-6 { return (c, false) }
                    }
                    return ((a.m + b.m) / 2, false)
                }
                if m == limit { return (limit, true) }
                inside = (m, d)
            }
        }
        let (low, lowIsBound) = end(toward: bounds.mLow)
        let (high, highIsBound) = end(toward: bounds.mHigh)
        return ThresholdInterval(
            method: .profileLikelihood, level: level, log10Lower: low, log10Upper: high, lowerIsBound: lowIsBound,
            upperIsBound: highIsBound)
    }

    /// The parametric-bootstrap percentile interval from `resamples` refits, drawn from `random`.
    public func bootstrapInterval(
        resamples: Int = 1000, level: Double = 0.95, using random: inout some RandomNumberGenerator
    ) throws(ThresholdError) -> ThresholdInterval {
        guard level > 0, level < 1 else { throw .data("the interval's level must be between 0 and 1, not \(level)") }
        guard resamples >= 20 else { throw .data("a bootstrap needs at least 20 resamples, not \(resamples)") }
        let chances = data.map { curve.probabilityFound(concentration: $0.concentration) }
        let bounds = FitBounds(FitData(data))
        var thresholds: [Double] = []
        thresholds.reserveCapacity(resamples)
        var redrawn = FitData(data)
        for _ in 0..<resamples {
            for (i, row) in data.enumerated() {
                var found = 0
                for _ in 0..<row.trials where random.unitInterval() < chances[i] { found += 1 }
                redrawn.k[i] = Double(found)
            }
            thresholds.append(Self.maximise(redrawn, settings: settings, fixedThreshold: nil).m)
        }
        thresholds.sort()
        let low = quantileType7(thresholds, (1 - level) / 2)
        let high = quantileType7(thresholds, (1 + level) / 2)
        let slack = 1e-6 * (bounds.mHigh - bounds.mLow)
        return ThresholdInterval(
            method: .bootstrapPercentile, level: level, log10Lower: low, log10Upper: high,
            lowerIsBound: low <= bounds.mLow + slack, upperIsBound: high >= bounds.mHigh - slack)
    }
}
