import Foundation
import Synchronization
import Testing

@testable import StationIO

/// A buzzer line that remembers when it was switched.
final class RecordingBuzzer: BuzzerLine, @unchecked Sendable {
    let switches = Mutex<[(Bool, UInt64)]>([])
    func set(active: Bool) -> Bool {
        switches.withLock { $0.append((active, MonotonicClock.now())) }
        return true
    }
}

/// Clicks on station 1's nose-in edges.
final class FirstStationRule: HotPathHandler {
    var nextDeadline: UInt64 { .max }
    func handle(_ edge: SensorEdge) -> HotPathDecision { edge.line == 0 && edge.isActive ? .click : .none }
    func deadline(now: UInt64) -> HotPathDecision { .none }
}

@Suite struct HotLoopTests {
    @Test func theBuzzerClicksWithoutAudioAndSwitchesOffAfterItsPulse() throws {
        let lineup = try SimulatedLineup(lineCount: 2)
        let buzzer = RecordingBuzzer()
        let ring = EventRing<StationRecord>(capacity: 64)
        let loop = try HotLoop(
            source: lineup, debouncer: Debouncer(lineCount: 2, windowNanoseconds: 5_000_000),
            handler: FirstStationRule(), player: nil, buzzer: buzzer, buzzerPulseNanoseconds: 10_000_000, records: ring)
        let thread = Thread { loop.run() }
        thread.start()
        lineup.inject(line: 1, active: true)  // another station: no click
        lineup.inject(line: 0, active: true)
        #expect(eventually { buzzer.switches.withLock { $0.count } == 2 })
        loop.stop()
        #expect(eventually { thread.isFinished })
        let switches = buzzer.switches.withLock { $0 }
        try #require(switches.count == 2)
        #expect(switches[0].0 == true && switches[1].0 == false)
        #expect(switches[1].1 - switches[0].1 >= 10_000_000)
        #expect(loop.clickCount == 1)
        var buzzed = 0
        ring.drain { if case .buzzer = $0 { buzzed += 1 } }
        #expect(buzzed == 1)
    }

    @Test func chatterSettlesThroughTheLoopsOwnDeadline() throws {
        let lineup = try SimulatedLineup(lineCount: 1)
        let ring = EventRing<StationRecord>(capacity: 64)
        let loop = try HotLoop(
            source: lineup, debouncer: Debouncer(lineCount: 1, windowNanoseconds: 5_000_000),
            handler: FirstStationRule(), player: nil, records: ring)
        let thread = Thread { loop.run() }
        thread.start()
        let t = MonotonicClock.now()
        lineup.inject(line: 0, active: true, at: t)
        lineup.inject(line: 0, active: false, at: t + 1_000_000)  // left within the window
        var settled: [SensorEdge] = []
        #expect(
            eventually {
                ring.drain { if case .settled(let e) = $0 { settled.append(e) } }
                return !settled.isEmpty
            })
        loop.stop()
        #expect(eventually { thread.isFinished })
        #expect(settled == [SensorEdge(timestamp: t + 1_000_000, line: 0, isActive: false)])
    }
}
