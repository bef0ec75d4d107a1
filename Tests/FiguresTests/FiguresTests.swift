import PropertyBased
import Testing

@testable import Figures
@testable import TrainingEngine

/// The one definition of every figure (Figures.swift), checked against hand-computed values and
/// against a plain re-derivation of README's formulas.
@Suite struct FiguresTests {
    func seen(_ visited: Bool, _ indicated: Bool, first: Int64? = nil) -> StationSeen {
        StationSeen(visited: visited || indicated, indicated: indicated, firstIndicationNs: first)
    }

    /// Ehmann et al. 2012: 71 of 100 cancer samples found, 372 of 400 controls correctly passed.
    /// Values from scipy (norm.ppf) and the Wilson formula, computed by hand outside the project.
    @Test func ehmann2012() {
        var tally = Tally()
        var falseAlerts = 28
        for trial in 0..<100 {
            var stations = [
                StationObservation(station: 1, kind: .target, seen: seen(true, trial < 71, first: 3_000_000_000))
            ]
            for station in 2...5 {
                let alert = falseAlerts > 0 && station == 2 + trial % 4
                if alert { falseAlerts -= 1 }
                stations.append(StationObservation(station: station, kind: .control, seen: seen(true, alert)))
            }
            tally.add(ScoredTrial(outcome: trial < 71 ? .hit : .miss, latencyNs: 3_000_000_000, stations: stations))
        }
        let f = tally.figures
        #expect(f.sensitivity.successes == 71 && f.sensitivity.trials == 100)
        #expect(abs(f.sensitivity.lower! - 0.614611) < 1e-6 && abs(f.sensitivity.upper! - 0.789852) < 1e-6)
        #expect(f.specificity.successes == 372 && f.specificity.trials == 400)
        #expect(abs(f.specificity.lower! - 0.900691) < 1e-6 && abs(f.specificity.upper! - 0.951128) < 1e-6)
        // Log-linear: H = 71.5/101, F = 28.5/401.
        #expect(abs(f.dPrime! - 2.015172) < 1e-6)
        #expect(abs(f.criterion! - 0.460265) < 1e-6)
        // PPV: 71 of the 99 stations indicated held the target.
        #expect(f.positivePredictiveValue.successes == 71 && f.positivePredictiveValue.trials == 99)
        #expect(f.falseAlertsPerTrial == 0.28)
        #expect(f.trialAccuracy.successes == 71)
    }

    @Test func inverseNormalMatchesKnownQuantiles() {
        // scipy.stats.norm.ppf
        for (p, z) in [(0.975, 1.959963984540054), (0.5, 0.0), (0.3, -0.5244005127080409), (1e-10, -6.361340902404056)]
        {
            #expect(abs(inverseNormal(p) - z) < 1e-9, "\(p)")
        }
        #expect(abs(inverseNormal(0.025) + inverseNormal(0.975)) < 1e-12)
    }

    @Test func quantilesAreTypeSeven() {
        // R: quantile(c(1, 2, 4, 8, 16), c(.25, .5, .75)) gives 2, 4, 8.
        let s = Spread(milliseconds: [16, 1, 8, 2, 4])!
        #expect(s.q1 == 2 && s.median == 4 && s.q3 == 8 && s.n == 5)
        // R: quantile(c(10, 20, 30, 40)) gives 17.5, 25, 32.5.
        let e = Spread(milliseconds: [40, 10, 30, 20])!
        #expect(e.q1 == 17.5 && e.median == 25 && e.q3 == 32.5)
        #expect(Spread(milliseconds: []) == nil)
    }

    @Test func theOneQuantileByHand() {
        // Type 7, h = (n - 1) p: docs/figures.md's worked example.
        let four: [Double] = [10, 20, 30, 40]
        #expect(quantile(four, 0) == 10)
        #expect(quantile(four, 0.5) == 25)  // h = 1.5: 20 + 0.5 × 10
        #expect(abs(quantile(four, 0.99) - 39.7) < 1e-9)  // h = 2.97: 30 + 0.97 × 10
        #expect(quantile(four, 1) == 40)
        #expect(quantile([7], 0.99) == 7)
        // numpy.percentile(range(1, 101), 99) gives 99.01.
        #expect(abs(quantile((1...100).map(Double.init), 0.99) - 99.01) < 1e-9)
    }

    @Test func percentileOfNanosecondsIsTheSameQuantile() {
        // In any order, in percent, rounded to the nanosecond. The definitions this replaced
        // gave 2000 (nearest rank) or 3000 (floor) for the p50, 4000 for the p99.
        let ns: [UInt64] = [4_000, 1_000, 3_000, 2_000]
        #expect(percentile(ns, 50) == 2_500)
        #expect(percentile(ns, 99) == 3_970)
        #expect(percentile(ns, 100) == 4_000)
        #expect(percentile([], 99) == 0)
        let spread = Spread(milliseconds: [4, 1, 3, 2])!
        #expect(spread.median == quantile([1, 2, 3, 4], 0.5) && spread.q3 == 3.25)
    }

    @Test func verdictPerKind() {
        #expect(StationVerdict(kind: .target, seen: seen(false, false)) == .miss)
        #expect(StationVerdict(kind: .target, seen: seen(true, true)) == .hit)
        #expect(StationVerdict(kind: .control, seen: seen(false, false)) == .notExamined)
        #expect(StationVerdict(kind: .distractor, seen: seen(true, false)) == .correctRejection)
        #expect(StationVerdict(kind: .control, seen: seen(true, true)) == .falseAlert)
        #expect(StationVerdict(kind: .blank, seen: seen(true, true)) == .blankIndicated)
        #expect(StationVerdict(kind: .blank, seen: seen(true, false)) == .blankPassed)
        #expect(StationVerdict(kind: .blank, seen: seen(false, false)) == .blankNotExamined)
    }

    @Test func abortedTrialsAreNotScored() {
        var tally = Tally()
        tally.add(
            ScoredTrial(
                outcome: .aborted, latencyNs: 5,
                stations: [StationObservation(station: 1, kind: .target, seen: seen(true, true, first: 5))]))
        let f = tally.figures
        #expect(f.results.aborted == 1 && f.results.scored == 0)
        #expect(f.presentations == PresentationCounts())
        #expect(f.trialAccuracy.trials == 0 && f.latency == nil && f.falseAlertsPerTrial == nil && f.dPrime == nil)
    }

    /// A trial logged before the log kept what each station saw counts as a trial and in no
    /// station-level figure: never by another rule.
    @Test func trialsWithoutStationDataAreCountedApart() {
        var tally = Tally()
        tally.add(
            ScoredTrial(
                outcome: .hit, latencyNs: 2_000_000_000,
                stations: [
                    StationObservation(station: 1, kind: .target, seen: nil),
                    StationObservation(station: 2, kind: .control, seen: nil),
                ]))
        let f = tally.figures
        #expect(f.results.hits == 1 && f.trialAccuracy.successes == 1)
        #expect(f.trialsWithoutStationData == 1)
        #expect(f.sensitivity.trials == 0 && f.specificity.trials == 0 && f.falseAlertsPerTrial == nil)
        #expect(f.latency?.median == 2_000)
    }

    @Test func aCorrectionReplacesTheIndications() {
        let trial = ScoredTrial(
            outcome: .hit, latencyNs: 4,
            stations: [
                StationObservation(station: 1, kind: .control, seen: seen(true, false)),
                StationObservation(station: 2, kind: .target, seen: seen(true, true, first: 4)),
            ])
        let miss = trial.corrected(outcome: .miss, indicatedStation: nil)
        #expect(miss.stations.map { $0.seen!.indicated } == [false, false])
        #expect(miss.stations.map { $0.seen!.visited } == [true, true])
        #expect(miss.latencyNs == nil)
        let alert = trial.corrected(outcome: .falseAlert, indicatedStation: 1)
        #expect(alert.stations.map { $0.seen!.indicated } == [true, false])
        #expect(alert.latencyNs == nil)  // the sensor never completed a hold there
    }

    @Test func theObserverFollowsTheEnginesRecords() {
        var observer = TrialObserver(stationCount: 3)
        observer.observe(.searchStarted(trial: 0, at: 1_000))
        observer.observe(.visit(station: 0, from: 1_100, to: 1_300, indicated: false))
        observer.observe(.visit(station: 0, from: 1_400, to: 1_500, indicated: false))
        observer.observe(.indication(station: 2, heldFrom: 1_600, at: 3_600, atTarget: true))
        observer.observe(.visit(station: 2, from: 1_600, to: 3_600, indicated: true))
        let s = observer.stations(visitedMask: 0b101, indicatedMask: 0b100)
        #expect(s[0] == StationSeen(visited: true, indicated: false, firstIndicationNs: nil, sniffs: 2, dwellNs: 300))
        #expect(s[1] == StationSeen(visited: false, indicated: false))
        #expect(
            s[2] == StationSeen(visited: true, indicated: true, firstIndicationNs: 2_600, sniffs: 0, dwellNs: 2_000))
        // A lost record does not turn an indication into a pass: the hot loop's masks decide.
        var lossy = TrialObserver(stationCount: 2)
        lossy.searchStarted(at: 0)
        #expect(lossy.stations(visitedMask: 0b10, indicatedMask: 0b10)[1].indicated)
        // A new search forgets the last.
        observer.searchStarted(at: 10_000)
        #expect(observer.stations().allSatisfy { $0 == StationSeen(visited: false, indicated: false) })
    }

    /// Random trials: `Tally` agrees with a plain count by README's formulas, every station is
    /// counted once, and groupings add up to the whole.
    @Test func agreesWithAPlainCountOverRandomTrials() {
        let kinds: [SampleKind] = [.target, .control, .distractor, .blank]
        forAll(
            count: 300,
            zip(Gen.int(in: 1...40), Gen.uint64(in: 0...UInt64.max))
        ) { trialCount, seed in
            var random = SeededGenerator(seed: seed)
            var trials: [ScoredTrial] = []
            for _ in 0..<trialCount {
                let stations = 1 + random.below(6)
                let outcome = TrialOutcome.allCases[random.below(TrialOutcome.allCases.count)]
                trials.append(
                    ScoredTrial(
                        outcome: outcome, latencyNs: random.below(3) == 0 ? nil : Int64(random.below(10_000)),
                        stations: (1...stations).map { station in
                            let indicated = random.below(4) == 0
                            return StationObservation(
                                station: station, kind: kinds[random.below(4)], sample: "S\(random.below(5))",
                                seen: random.below(20) == 0
                                    ? nil
                                    : StationSeen(
                                        visited: indicated || random.below(2) == 0, indicated: indicated,
                                        firstIndicationNs: indicated ? Int64(random.below(10_000)) : nil))
                        }))
            }
            var whole = Tally()
            var board = Scoreboard()
            for t in trials {
                whole.add(t)
                board.add(t, dog: t.stations.count % 2 == 0 ? "even" : "odd")
            }
            let f = whole.figures
            // The plain count.
            var hits = 0
            var targets = 0
            var alerts = 0
            var examined = 0
            var indications = 0
            var blankAlerts = 0
            var scored = 0
            var scoredWithData = 0
            var correct = 0
            for t in trials where t.outcome != .aborted {
                scored += 1
                if t.outcome == .hit || t.outcome == .correctRejection { correct += 1 }
                guard t.stations.allSatisfy({ $0.seen != nil }) else { continue }
                scoredWithData += 1
                for s in t.stations {
                    let seen = s.seen!
                    if seen.indicated { indications += 1 }
                    switch s.kind {
                    case .target:
                        targets += 1
                        if seen.indicated { hits += 1 }
                    case .control, .distractor:
                        if seen.indicated { alerts += 1 }
                        if seen.visited { examined += 1 }
                    case .blank:
                        if seen.indicated { blankAlerts += 1 }
                    }
                }
            }
            #expect(f.sensitivity.successes == hits && f.sensitivity.trials == targets)
            #expect(f.specificity.successes == examined - alerts && f.specificity.trials == examined)
            #expect(f.positivePredictiveValue.successes == hits && f.positivePredictiveValue.trials == indications)
            #expect(f.trialAccuracy.successes == correct && f.trialAccuracy.trials == scored)
            #expect(f.trialsWithoutStationData == scored - scoredWithData)
            if scoredWithData > 0 {
                #expect(f.falseAlertsPerTrial == Double(alerts + blankAlerts) / Double(scoredWithData))
            }
            if targets > 0 && examined > 0 {
                let h = (Double(hits) + 0.5) / Double(targets + 1)
                let fa = (Double(alerts) + 0.5) / Double(examined + 1)
                #expect(abs(f.dPrime! - (inverseNormal(h) - inverseNormal(fa))) < 1e-12)
            } else {
                #expect(f.dPrime == nil)
            }
            // Groupings add up to the whole.
            #expect(board.overall.figures == f)
            let byDog = board.byDog.values.map(\.figures)
            #expect(byDog.map(\.presentations.hits).reduce(0, +) == f.presentations.hits)
            #expect(byDog.map(\.results.trials).reduce(0, +) == trials.count)
            let byStation = board.byStation.values.map(\.figures.presentations)
            #expect(byStation.map(\.falseAlerts).reduce(0, +) == f.presentations.falseAlerts)
            #expect(byStation.map(\.notExamined).reduce(0, +) == f.presentations.notExamined)
            let bySample = board.bySample.values.map(\.figures.presentations)
            #expect(bySample.map(\.correctRejections).reduce(0, +) == f.presentations.correctRejections)
            for p in [f.sensitivity, f.specificity, f.positivePredictiveValue] {
                if let v = p.value, let lo = p.lower, let hi = p.upper {
                    #expect(0 <= lo && lo <= v && v <= hi && hi <= 1)
                }
            }
        }
    }
}
