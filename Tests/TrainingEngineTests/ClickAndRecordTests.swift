import Testing

@testable import TrainingEngine

/// The emulated-hardware tier once printed `trial 6/8 … search: B sniff, C sniff, C sniff
/// indication: none  click 2881 µs  miss`: the scripted dog (hardware/vm/block.dog, trial 6)
/// holds C with a break while the trainer presses the clicker. Replayed here at vm.toml's
/// timings (hold 600 ms, tolerance 100 ms): the engine's clicks and its outcome come from one
/// reading of the edges, and the click in that line was the trainer's, not a hit's.
@Suite struct ClickAndRecordTests {
    /// Trial 6 with the nose off C for `breakMs` in the middle of its hold.
    func trialSix(breakMs: Nanoseconds) -> Driver {
        var d = Driver(
            LineupMachine.Configuration(
                mode: .doubleBlind, stationCount: 5, hold: 600 * ms, holdTolerance: 100 * ms,
                searchTimeout: 10 * sec, interTrialInterval: 1 * sec, endOnFalseAlert: true))
        startTrial(&d, kinds: [.control, .control, .target, .control, .control])
        d.edge(1, true, at: 150 * ms)  // sniff B 200
        d.edge(1, false, at: 350 * ms)
        d.edge(2, true, at: 450 * ms)  // sniff C 350 (after its chatter settled)
        d.edge(2, false, at: 800 * ms)
        d.take(d.machine.clicker(at: 805 * ms))  // the trainer's press, while the nose is off C
        d.edge(2, true, at: 800 * ms + breakMs)  // sniff C 500
        d.edge(2, false, at: 1_300 * ms + breakMs)
        d.advance(to: 12 * sec)
        return d
    }

    func clicks(_ d: Driver) -> [(station: Int?, automatic: Bool)] {
        d.clicks.compactMap { if case .click(let s, _, let a) = $0 { (s, a) } else { nil } }
    }

    @Test func aBreakWithinTheToleranceIsOneHoldClickedAtTheTarget() {
        let d = trialSix(breakMs: 30 * ms)
        #expect(d.outcomes == [.hit])
        #expect(clicks(d).map(\.automatic) == [false, true])
        #expect(clicks(d).last?.station == 2)
    }

    @Test func aBreakBeyondTheToleranceIsTwoSniffsAMissAndOnlyTheTrainersClick() {
        let d = trialSix(breakMs: 130 * ms)
        #expect(d.outcomes == [.miss])
        // The only click is the trainer's (no station: the nose was off every station), so the
        // trial line says "trainer's click at no station", never a click of a miss.
        #expect(clicks(d).count == 1)
        #expect(clicks(d).first?.automatic == false && clicks(d).first?.station == nil)
        let sniffs = d.records.compactMap { r -> Int? in
            if case .visit(let station, _, _, let indicated) = r, !indicated { station } else { nil }
        }
        #expect(sniffs == [1, 2, 2])
    }
}
