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
            if let summary = d.machine.lastTrial { board.add(summary, layout: layout, dog: "replay") }
            t += 50 * sec
        }
        #expect(falseAlertsLeft == 0)
        #expect(board.trials == 100)
        #expect(board.overall.hits == 71 && board.overall.misses == 29)
        #expect(board.overall.correctRejections == 372 && board.overall.falseAlerts == 28)
        #expect(board.overall.sensitivity.value == 0.71)
        #expect(board.overall.specificity.value == 0.93)
        #expect(d.clicks.count == 71)
    }
}
