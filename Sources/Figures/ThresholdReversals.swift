import Thresholds

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The reversal estimate in `stats --threshold` and the report (docs/figures.md, "How little
// the dog can smell", "In `stats`"): the geometric mean of the last k reversals of each
// staircase in a group, read from the staircase's state as the station logged it per trial
// (`trial_procedure`), on the group's scale. Decided here once; the log and the lab store hand
// over plain rows, or say that they hold none.

/// One trial's procedure state as the reversal estimate reads it (a `trial_procedure` row).
public struct ThresholdProcedureTrial: Sendable, Hashable {
    public var trialNumber: Int
    /// `staircase` or `constant-stimuli`.
    public var procedure: String
    /// The dilution at the target's station (nil on a catch trial).
    public var sampleId: String?
    /// This trial's answer turned the staircase: the trial's dilution is a reversal's.
    public var reversal: Bool

    public init(trialNumber: Int, procedure: String, sampleId: String?, reversal: Bool) {
        self.trialNumber = trialNumber
        self.procedure = procedure
        self.sampleId = sampleId
        self.reversal = reversal
    }
}

/// A group's reversal estimate: the geometric mean of the last `last` reversals' concentrations
/// of each of its staircases that reversed at least that often.
public struct ThresholdReversalFigures: Sendable, Hashable, Codable {
    /// On the group's scale.
    public var estimate: Double
    public var log10Estimate: Double
    /// k: the reversals each staircase contributes, its last.
    public var last: Int
    /// The concentrations averaged (k per staircase), in the order they happened.
    public var concentrations: [Double]
    /// The staircases (sessions) averaged, and those left out for reversing fewer than k times.
    public var staircases: Int
    public var staircasesWithFewer: Int
}

extension ThresholdRow {
    /// The project's k: the 2024 PLoS One study's (e0306817) last 6 of 8 reversals. Not
    /// chosen per step: a step's `stop_after_reversals` below 6 leaves it not computed.
    public static let reversalsAveraged = 6
    public static let procedureWithheldLabStore =
        "not available: the lab store does not hold the staircase's state per trial (lab migration v11 mirrors it); "
        + "stats --threshold on the station's log gives it"
}

extension ThresholdCounter {
    /// The reversal estimate of a group whose sessions are `sessions` (oldest first), with
    /// `concentration` its scale; nil with the reason in `notComputed`.
    func reversals(
        sessions: [String], stock: String, concentration: (String) -> Double?, notComputed: inout String?
    ) -> ThresholdReversalFigures? {
        if let withheld = procedureWithheld {
            notComputed = withheld
            return nil
        }
        let k = reversalsAveraged
        var averaged: [Double] = []
        var staircases = 0
        var fewer: [Int] = []
        var constant = 0
        for session in sessions {
            let rows = procedures[session] ?? []
            guard rows.contains(where: { $0.procedure == "staircase" }) else {
                if rows.contains(where: { $0.procedure == "constant-stimuli" }) { constant += 1 }
                continue
            }
            let turns = rows.sorted { $0.trialNumber < $1.trialNumber }.filter {
                guard $0.reversal, let id = $0.sampleId else { return false }
                return root(id) == stock
            }
            guard turns.count >= k else {
                fewer.append(turns.count)
                continue
            }
            var values: [Double] = []
            for turn in turns.suffix(k) {
                guard let c = concentration(turn.sampleId!) else {
                    notComputed =
                        "not computed: the reversal at trial \(turn.trialNumber) was at a dilution with no place on "
                        + "the group's scale"
                    return nil
                }
                values.append(c)
            }
            averaged += values
            staircases += 1
        }
        guard staircases > 0 else {
            if let most = fewer.max() {
                notComputed =
                    fewer.count == 1
                    ? "not computed: the staircase reversed \(most) time\(most == 1 ? "" : "s"); the estimate takes the "
                        + "last \(k) (the project's k)"
                    : "not computed: none of its \(fewer.count) staircases reversed \(k) times (at most \(most)); the "
                        + "estimate takes the last \(k) of each (the project's k)"
            } else if constant > 0 {
                notComputed = "not computed: constant stimuli has no reversals (the fit is its estimate)"
            } else {
                notComputed =
                    "not computed: no staircase: its sessions logged no staircase state per trial (dilutions "
                    + "presented outside a threshold step)"
            }
            return nil
        }
        // Each staircase's k equally: the geometric mean of all is that of their estimates.
        guard let estimate = try? reversalEstimate(averaged, last: averaged.count) else { return nil }
        return ThresholdReversalFigures(
            estimate: estimate, log10Estimate: log10(estimate), last: k, concentrations: averaged,
            staircases: staircases, staircasesWithFewer: fewer.count)
    }
}
