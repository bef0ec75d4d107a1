import Testing

@testable import TrainingEngine

/// Edges of different lines can arrive out of their timestamps' order (one descriptor per
/// line with libgpiod v1, read one after another). An edge stamped before the current visit
/// began must never read as a hold reached, a departure or a stuck beam.
@Suite struct OutOfOrderEdgesTests {
    let ms: Nanoseconds = 1_000_000

    @Test func aLeaveStampedBeforeTheArrivalIsNoIndication() {
        var detector = HoldDetector(hold: 2_000 * ms, tolerance: 150 * ms)
        #expect(detector.arrive(station: 0, at: 1_000 * ms) == .none)
        // The same station's departure stamped 1 ms earlier, read late.
        #expect(detector.leave(station: 0, at: 999 * ms) == .none)
    }

    @Test func anExpiryBeforeTheArrivalIsNothing() {
        var detector = HoldDetector(hold: 2_000 * ms, tolerance: 150 * ms)
        _ = detector.arrive(station: 1, at: 1_000 * ms)
        #expect(detector.expire(at: 990 * ms) == .none)
        _ = detector.leave(station: 1, at: 1_500 * ms)
        #expect(detector.expire(at: 1_400 * ms) == .none, "a break is not a departure before it began")
        #expect(detector.stationPresent == nil && detector.station == 1)
    }

    @Test func anEarlierEdgeOfAnotherStationDoesNotMakeAStuckBeam() {
        var d = Driver(automated(stations: 3))  // hold 2 s: stuck after 20 s
        startTrial(&d, kinds: [.target, .blank, .blank])
        d.edge(2, true, at: 5 * sec)
        d.edge(1, true, at: 5 * sec - 1_000)  // stamped 1 µs earlier, read after
        #expect(d.machine.stuckMask == 0)
        #expect(!d.records.contains { if case .sensorFault(.stuck, _, _) = $0 { return true } else { return false } })
    }
}
