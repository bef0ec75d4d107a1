import Figures
import Testing

@testable import TrainingEngine

/// Ehmann 2012 reported 71 of 100 cancer samples found and 372 of 400 controls correctly passed.
/// This replays such a record through the engine, edge by edge, and checks the figures.
@Suite struct ReplayTests {
    @Test func ehmannCountsGive71And93Percent() {
        var board = Scoreboard()
        var d = Driver(automated(stations: 5))
        var falseAlertsLeft = 28
        var t: Nanoseconds = 0
        var clicks = 0
        for trial in 0..<100 {
            let target = trial % 5
            var kinds = Array(repeating: SampleKind.control, count: 5)
            kinds[target] = .target
            let layout = TrialLayout(
                trialIndex: trial,
                stations: kinds.enumerated().map {
                    StationContent(kind: $1, sampleID: $1 == .target ? "T\(trial)" : "C\($0)")
                })
            d.advance(to: t)
            d.take(d.machine.load(layout: layout, at: t))
            d.take(d.machine.readyButton(at: t))
            // Controls first, in order, then the target (if this is one of the 71 found).
            var now = t + sec
            for station in 0..<5 where station != target {
                let holds = falseAlertsLeft > 0 && station == (trial + 1) % 5 && trial % 7 != 3
                if holds { falseAlertsLeft -= 1 }
                d.edge(station, true, at: now)
                d.edge(station, false, at: now + (holds ? 2500 * ms : 500 * ms))
                now += 3 * sec
            }
            d.edge(target, true, at: now)
            d.edge(target, false, at: now + (trial < 71 ? 2500 * ms : 500 * ms))
            d.advance(to: t + 40 * sec)
            if let summary = d.machine.lastTrial {
                // What each station saw, as the log feeder builds it from the engine's records.
                var observer = TrialObserver(stationCount: 5)
                for record in d.records { observer.observe(record) }
                board.add(
                    ScoredTrial(
                        outcome: summary.outcome, latencyNs: summary.latency.map { Int64($0) }, layout: layout,
                        seen: observer.stations(visitedMask: summary.visitedMask, indicatedMask: summary.indicatedMask)),
                    dog: "replay")
            }
            clicks += d.clicks.count
            d.log.removeAll()
            t += 50 * sec
        }
        #expect(falseAlertsLeft == 0)
        let f = board.overall.figures
        #expect(f.results.trials == 100)
        #expect(f.presentations.hits == 71 && f.presentations.misses == 29)
        #expect(f.presentations.correctRejections == 372 && f.presentations.falseAlerts == 28)
        #expect(f.sensitivity.value == 0.71)
        #expect(f.specificity.value == 0.93)
        #expect(clicks == 71)
    }
}
