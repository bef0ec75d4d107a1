import Foundation
import Testing
import Thresholds

/// The fit against an independent implementation (issue 38): a maximum-likelihood fit written
/// here in Python with scipy (L-BFGS-B on the bounded parameters themselves, brentq on the
/// profile), sharing no code with Thresholds, on a fixed table in the style of the published
/// ones (trials and finds per dilution; the numbers are ours). The threshold and the profile
/// interval's ends agree to 1 %. Skips, saying why, where python3 or scipy cannot be imported.
@Suite struct ScipyFitTests {
    /// Three choices, 12 trials a dilution, tenfold dilutions of the stock.
    static let table = [
        ConcentrationTally(concentration: 1e-3, trials: 12, found: 12),
        ConcentrationTally(concentration: 1e-4, trials: 12, found: 11),
        ConcentrationTally(concentration: 1e-5, trials: 12, found: 11),
        ConcentrationTally(concentration: 1e-6, trials: 12, found: 8),
        ConcentrationTally(concentration: 1e-7, trials: 12, found: 6),
        ConcentrationTally(concentration: 1e-8, trials: 12, found: 4),
        ConcentrationTally(concentration: 1e-9, trials: 12, found: 5),
    ]

    static let script = #"""
        import json, sys
        import numpy as np
        from scipy.optimize import minimize, brentq
        from scipy.stats import chi2

        np.seterr(over="ignore")  # exp overflows to inf far from the threshold, as it should

        def solve(case):
            x = np.log10(np.array(case["concentrations"], dtype=float))
            n = np.array(case["trials"], dtype=float)
            k = np.array(case["found"], dtype=float)
            guess = 1.0 / case["choices"]
            form = case["form"]
            lapse_max = case["lapseMax"]      # None: the lapse is fixed
            lapse_fixed = case["lapseFixed"]

            def F(z):
                if form == "logistic":
                    return 1.0 / (1.0 + np.exp(-2.0 * np.log(9.0) * z))
                span = np.log(np.log(10.0)) - np.log(-np.log(0.9))
                return -np.expm1(-np.exp(span * z + np.log(np.log(2.0))))

            def nll(m, w, lam):
                p = np.clip(guess + (1.0 - guess - lam) * F((x - m) / w), 1e-12, 1 - 1e-12)
                return -np.sum(k * np.log(p) + (n - k) * np.log1p(-p))

            lo, hi = x.min(), x.max()
            span = hi - lo
            m_bounds = (lo - span, hi + span)
            lw_bounds = (np.log(span / 100), np.log(3 * span))
            lam_bounds = (0.0, lapse_max) if lapse_max is not None else None

            def fit(fixed_m=None):
                best = None
                ms = [fixed_m] if fixed_m is not None else list(np.linspace(lo, hi, 5))
                for m0 in ms:
                    for w0 in (0.25 * span, span):
                        for lam0 in ((0.0, 0.05) if lam_bounds else (None,)):
                            start, bounds = [], []
                            if fixed_m is None:
                                start.append(m0); bounds.append(m_bounds)
                            start.append(np.log(w0)); bounds.append(lw_bounds)
                            if lam_bounds:
                                start.append(lam0); bounds.append(lam_bounds)
                            def f(v):
                                i = 0
                                m = fixed_m
                                if m is None:
                                    m = v[0]; i = 1
                                lam = v[i + 1] if lam_bounds else lapse_fixed
                                return nll(m, np.exp(v[i]), lam)
                            r = minimize(f, start, method="L-BFGS-B", bounds=bounds,
                                         options={"ftol": 1e-14, "gtol": 1e-9, "maxiter": 5000})
                            if best is None or r.fun < best.fun:
                                best = r
                return best

            best = fit()
            m_hat = best.x[0]
            cut = best.fun + chi2.ppf(0.95, 1) / 2
            def dev(m):
                return fit(m).fun - cut
            lower = brentq(dev, m_bounds[0], m_hat, xtol=1e-6) if dev(m_bounds[0]) > 0 else None
            upper = brentq(dev, m_hat, m_bounds[1], xtol=1e-6) if dev(m_bounds[1]) > 0 else None
            return {"m": m_hat, "w": float(np.exp(best.x[1])),
                    "lapse": float(best.x[2]) if lam_bounds else lapse_fixed,
                    "nll": best.fun, "lower": lower, "upper": upper}

        print(json.dumps([solve(case) for case in json.loads(sys.argv[1])]))
        """#
    /// nil, printed why, where python3 with scipy is not there.
    static func scipyAvailable() -> Bool {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import numpy, scipy.optimize, scipy.stats"]
        probe.standardError = FileHandle(forWritingAtPath: "/dev/null")
        probe.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        guard (try? probe.run()) != nil else {
            print("ScipyFitTests skipped: python3 could not be started")
            return false
        }
        probe.waitUntilExit()
        guard probe.terminationStatus == 0 else {
            print("ScipyFitTests skipped: python3 cannot import scipy (pip install scipy)")
            return false
        }
        return true
    }

    struct Scipy: Decodable {
        var m: Double
        var w: Double
        var lapse: Double
        var nll: Double
        var lower: Double?
        var upper: Double?
    }

    static let cases = [
        FitSettings(form: .logistic, choices: 3), FitSettings(form: .weibull, choices: 3),
        FitSettings(form: .logistic, choices: 3, lapse: .fixed(0.02)),
    ]

    /// scipy's fits of `table` under each of `settings`, in one run of python3.
    static func scipyFits(_ settings: [FitSettings]) throws -> [Scipy] {
        let input: [[String: Any]] = settings.map { settings in
            var lapseMax: Double? = nil
            var lapseFixed: Double? = nil
            switch settings.lapse {
            case .fitted(let max): lapseMax = max
            case .fixed(let l): lapseFixed = l
            }
            return [
                "concentrations": table.map(\.concentration), "trials": table.map(\.trials),
                "found": table.map(\.found), "choices": settings.choices, "form": settings.form.rawValue,
                "lapseMax": lapseMax.map { $0 as Any } ?? NSNull(),
                "lapseFixed": lapseFixed.map { $0 as Any } ?? NSNull(),
            ]
        }
        let json = String(decoding: try JSONSerialization.data(withJSONObject: input), as: UTF8.self)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, json]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "the scipy fit failed")
        return try JSONDecoder().decode([Scipy].self, from: data)
    }

    @Test func theFitEqualsScipys() throws {
        guard Self.scipyAvailable() else { return }
        let fits = try Self.scipyFits(Self.cases)
        try #require(fits.count == Self.cases.count)
        for (settings, scipy) in zip(Self.cases, fits) {
            let fit = try PsychometricFit(Self.table, settings: settings)
            let interval = try fit.profileInterval()
            let what = "\(settings.form) \(settings.lapse)"
            print(
                "\(what): threshold \(fit.threshold) (scipy \(pow(10, scipy.m))), width "
                    + "\(fit.curve.width) (\(scipy.w)), lapse \(fit.curve.lapseRate) (\(scipy.lapse)), interval "
                    + "\(interval.lower)...\(interval.upper) (\(scipy.lower.map { pow(10, $0) } ?? .nan)..."
                    + "\(scipy.upper.map { pow(10, $0) } ?? .nan))")
            // 1 % of the concentration.
            #expect(abs(fit.threshold / pow(10, scipy.m) - 1) < 0.01, "\(what)")
            #expect(fit.negativeLogLikelihood <= scipy.nll + 1e-6, "\(what)")
            let lower = try #require(scipy.lower)
            let upper = try #require(scipy.upper)
            #expect(!interval.lowerIsBound && !interval.upperIsBound, "\(what)")
            #expect(abs(interval.lower / pow(10, lower) - 1) < 0.01, "\(what)")
            #expect(abs(interval.upper / pow(10, upper) - 1) < 0.01, "\(what)")
        }
    }
}
