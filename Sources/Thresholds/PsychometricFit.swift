// The psychometric fit by maximum likelihood (docs/figures.md, "A threshold"): threshold m,
// width w and (unless fixed) the lapse rate λ that make the observed finds most likely, the
// guess rate fixed at 1 / choices. Each parameter is kept in its bounds by a sine map onto an
// unbounded one (m = lo + (hi − lo)(1 + sin u) / 2), searched by Nelder–Mead from the best
// point of a fixed grid and restarted once where it stopped. Deterministic: no random draws.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The lapse rate: fitted within 0...max, or fixed.
public enum LapseRule: Sendable, Hashable {
    case fitted(max: Double)
    case fixed(Double)
}

public struct FitSettings: Sendable, Hashable {
    public var form: PsychometricForm
    /// Stations in the lineup with one target: the guess rate is 1 / choices.
    public var choices: Int
    public var lapse: LapseRule

    /// The project's default: the lapse fitted within 0 to 0.06 (Wichmann & Hill 2001's range).
    public init(form: PsychometricForm = .logistic, choices: Int, lapse: LapseRule = .fitted(max: 0.06)) {
        self.form = form
        self.choices = choices
        self.lapse = lapse
    }

    func validate() throws(ThresholdError) {
        guard choices >= 2 else {
            throw .data("a fit needs at least 2 choices (the guess rate 1/choices), not \(choices)")
        }
        switch lapse {
        case .fitted(let max) where !(max > 0 && max < 0.5):
            throw .data("the lapse rate's upper bound must be above 0 and below 0.5, not \(max)")
        case .fixed(let l) where !(l >= 0 && l < 1 - 1 / Double(choices)):
            throw .data("a fixed lapse rate must be at least 0 and below 1 − 1/choices, not \(l)")
        default: break
        }
    }
}

/// The search's bounds, from the data: the threshold within the tested range widened by its
/// span S on each side, the width from S/100 to 3S (the project's choice: a curve steeper or
/// flatter than that is not told apart by the data a session holds).
struct FitBounds: Sendable {
    var mLow, mHigh, logWLow, logWHigh: Double

    init(_ data: FitData) {
        let lo = data.x.min()!
        let hi = data.x.max()!
        let span = max(hi - lo, 1e-6)
        mLow = lo - span
        mHigh = hi + span
        logWLow = log(span / 100)
        logWHigh = log(3 * span)
    }
}

@inline(__always) func fromUnbounded(_ u: Double, _ lo: Double, _ hi: Double) -> Double {
    lo + (hi - lo) * (1 + sin(u)) / 2
}

@inline(__always) func toUnbounded(_ v: Double, _ lo: Double, _ hi: Double) -> Double {
    asin(min(1, max(-1, 2 * (v - lo) / (hi - lo) - 1)))
}

public struct PsychometricFit: Sendable, Hashable {
    public let curve: PsychometricCurve
    /// −log L at the fit (binomial coefficients left out).
    public let negativeLogLikelihood: Double
    public let data: [ConcentrationTally]
    public let settings: FitSettings

    /// The fitted threshold as a concentration.
    public var threshold: Double { curve.threshold }

    /// Fits `data` (at least 2 different concentrations, each with trials).
    public init(_ data: [ConcentrationTally], settings: FitSettings) throws(ThresholdError) {
        try settings.validate()
        for (i, t) in data.enumerated() {
            guard t.concentration.isFinite, t.concentration > 0 else {
                throw .data("row \(i + 1): the concentration \(t.concentration) is not a positive number")
            }
            guard t.trials >= 1, (0...t.trials).contains(t.found) else {
                throw .data(
                    "row \(i + 1): \(t.found) found of \(t.trials) trials; trials must be 1 or more, found 0 to trials")
            }
        }
        guard Set(data.map(\.concentration)).count >= 2 else {
            throw .data(
                "a curve needs trials at 2 or more different concentrations, the data have \(Set(data.map(\.concentration)).count)"
            )
        }
        let prepared = FitData(data)
        let (m, w, lapse, value) = Self.maximise(prepared, settings: settings, fixedThreshold: nil)
        curve = PsychometricCurve(
            form: settings.form, log10Threshold: m, width: w, guessRate: 1 / Double(settings.choices), lapseRate: lapse)
        negativeLogLikelihood = value
        self.data = data
        self.settings = settings
    }

    /// The maximum of the likelihood over (m, w, λ), or over (w, λ) at a fixed m (the profile).
    static func maximise(
        _ data: FitData, settings: FitSettings, fixedThreshold: Double?, warmStart: (w: Double, lapse: Double)? = nil
    ) -> (m: Double, w: Double, lapse: Double, value: Double) {
        let b = FitBounds(data)
        let guess = 1 / Double(settings.choices)
        var lapseMax = 0.0
        var fixedLapse: Double? = nil
        switch settings.lapse {
        case .fitted(let upper): lapseMax = upper
        case .fixed(let l): (lapseMax, fixedLapse) = (l, l)
        }
        // The unbounded coordinates: [u_m] if m is free, u_w, [u_λ] if λ is fitted.
        func unpack(_ u: [Double]) -> (Double, Double, Double) {
            var i = 0
            let m: Double
            if let fixed = fixedThreshold {
                m = fixed
            } else {
                m = fromUnbounded(u[0], b.mLow, b.mHigh)
                i = 1
            }
            let w = exp(fromUnbounded(u[i], b.logWLow, b.logWHigh))
            let lapse = fixedLapse ?? fromUnbounded(u[i + 1], 0, lapseMax)
            return (m, w, lapse)
        }
        func pack(_ m: Double, _ w: Double, _ lapse: Double) -> [Double] {
            var u: [Double] = []
            if fixedThreshold == nil { u.append(toUnbounded(m, b.mLow, b.mHigh)) }
            u.append(toUnbounded(log(w), b.logWLow, b.logWHigh))
            if fixedLapse == nil { u.append(toUnbounded(lapse, 0, lapseMax)) }
            return u
        }
        func objective(_ u: [Double]) -> Double {
            let (m, w, lapse) = unpack(u)
            return data.negativeLogLikelihood(form: settings.form, m: m, w: w, guess: guess, lapse: lapse)
        }
        // The grid: thresholds over the tested range, widths from the bound (a hundredth of the
        // span: a step between two concentrations) to the span. A profile's point near an
        // interval's end can need the narrowest curve, which a simplex started at a tenth of the
        // span did not reach through the sine map's flat edge (the interval came out 3 % short).
        let lo = data.x.min()!
        let hi = data.x.max()!
        let span = max(hi - lo, 1e-6)
        let ms = fixedThreshold.map { [$0] } ?? (0...8).map { lo + span * Double($0) / 8 }
        let ws = [0.01, 0.03, 0.1, 0.25, 0.5, 1].map { span * $0 }
        // Lapse rates at the bound, inside and at the top: a fit may have a maximum with a lapse
        // and another without, so the search starts from the best grid point of each.
        let lapses: [Double] = fixedLapse.map { [$0] } ?? [0, lapseMax / 2, lapseMax]
        var starts: [(value: Double, u: [Double])] = []
        for l in lapses {
            var best = (value: Double.infinity, u: [Double]())
            for m in ms {
                for w in ws {
                    let u = pack(m, w, l)
                    let v = objective(u)
                    if v < best.value { best = (v, u) }
                }
            }
            starts.append(best)
        }
        if let warm = warmStart, let m = fixedThreshold {
            // A profile's point: from its neighbour's maximum and from the grid's best.
            let u = pack(m, warm.w, warm.lapse)
            starts = [starts.min { $0.value < $1.value }!, (objective(u), u)]
        }
        let minimiser = NelderMead()
        var found = (point: [Double](), value: Double.infinity)
        for start in starts {
            var here = minimiser.minimise(objective, start: start.u, steps: start.u.map { _ in 0.3 })
            // Restarted where it stopped: a simplex can collapse before the minimum.
            here = minimiser.minimise(objective, start: here.point, steps: here.point.map { _ in 0.05 })
            if here.value < found.value { found = here }
        }
        let (m, w, lapse) = unpack(found.point)
        return (m, w, lapse, found.value)
    }
}
