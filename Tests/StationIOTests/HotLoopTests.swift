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
                ring.drain { if case .settled(let e, _) = $0 { settled.append(e) } }
                return !settled.isEmpty
            })
        loop.stop()
        #expect(eventually { thread.isFinished })
        #expect(settled == [SensorEdge(timestamp: t + 1_000_000, line: 0, isActive: false)])
    }
}

@Suite struct StationRecordSizeTests {
    /// The engine's notes share the ring's slots: they must not make every slot of the 8192
    /// larger than a click's record already made it (resident memory on the board).
    @Test func aHandlersRecordFitsTheSlotAClickRecordNeeds() {
        #expect(MemoryLayout<HandlerRecord>.size <= MemoryLayout<ClickRecord>.size)
        #expect(MemoryLayout<StationRecord>.stride == MemoryLayout<ClickRecord>.stride)
        #expect(MemoryLayout<StationRecord>.stride == 40)
    }
}

/// Clicks on station 1's nose-in edges and records each click it asked in the loop's ring, as
/// the engine handler does: in `afterDecision`, on the hot thread.
final class RecordingRule: HotPathHandler {
    let ring: EventRing<StationRecord>
    private var asked: UInt64 = 0
    init(ring: EventRing<StationRecord>) { self.ring = ring }
    var nextDeadline: UInt64 { .max }
    func handle(_ edge: SensorEdge) -> HotPathDecision {
        guard edge.line == 0 && edge.isActive else { return .none }
        asked = edge.timestamp
        return .click
    }
    func deadline(now: UInt64) -> HotPathDecision { .none }
    func afterDecision() {
        guard asked != 0 else { return }
        ring.push(.handler(HandlerRecord(kind: 7, asked)))
        asked = 0
    }
}

@Suite struct StationRecordOrderTests {
    /// The log's consumer attributes by order: for one input, the click's record, then the raw
    /// edge, then the handler's records it caused.
    @Test func theClicksRecordThenTheEdgeThenTheHandlersInOneRing() throws {
        let lineup = try SimulatedLineup(lineCount: 2)
        let ring = EventRing<StationRecord>(capacity: 64)
        let loop = try HotLoop(
            source: lineup, debouncer: Debouncer(lineCount: 2, windowNanoseconds: 5_000_000),
            handler: RecordingRule(ring: ring), player: nil, buzzer: RecordingBuzzer(),
            buzzerPulseNanoseconds: 1_000_000, records: ring)
        let thread = Thread { loop.run() }
        thread.start()
        let t = MonotonicClock.now()
        lineup.inject(line: 0, active: true, at: t)
        #expect(eventually { ring.count == 3 })
        loop.stop()
        #expect(eventually { thread.isFinished })
        var order: [String] = []
        ring.drain { record in
            switch record {
            case .buzzer(let edge, _): order.append(edge == t ? "click" : "click?")
            case .handler(let r): order.append(r.kind == 7 && r.a == t ? "handler" : "handler?")
            case .edge(let e, let acted, _): order.append(e.timestamp == t && acted ? "edge" : "edge?")
            default: order.append("other")
            }
        }
        #expect(order == ["click", "edge", "handler"])
    }
}
