import Foundation
import Glibc
import StationIO
import Synchronization
import Testing

/// When the hot loop is late (a loaded machine, no realtime), an edge is read together with a
/// timer that fell before it. The timer is judged first, as it would have been on time: a
/// nose's hold complete at t is complete when a press stamped t + 100 ms comes (LivePageTests
/// once saw the page's error press judged before the hold it followed, and a false alert
/// scored a miss).
@Suite struct HotLoopLateTests {
    /// Holds a timer 50 ms after the nose's edge and writes down what it was given, in order.
    final class HoldTimer: HotPathHandler, @unchecked Sendable {
        private let timer = Atomic<UInt64>(.max)
        private let log = Mutex<[String]>([])
        let nose: UInt32
        let hold: UInt64
        init(nose: UInt32, hold: UInt64 = 50_000_000) {
            self.nose = nose
            self.hold = hold
        }
        var nextDeadline: UInt64 { timer.load(ordering: .acquiring) }
        var calls: [String] { log.withLock { $0 } }
        func handle(_ edge: SensorEdge) -> HotPathDecision {
            if edge.line == nose && edge.isActive { timer.store(edge.timestamp + hold, ordering: .releasing) }
            log.withLock { $0.append("edge \(edge.line) \(edge.isActive ? "down" : "up") at \(edge.timestamp)") }
            return .none
        }
        func deadline(now: UInt64) -> HotPathDecision {
            log.withLock { $0.append("hold complete at \(now)") }
            timer.store(.max, ordering: .releasing)
            return .none
        }
    }

    @Test func aTimerDueBeforeAnEdgeReadLateIsJudgedBeforeIt() throws {
        let board = try SimulatedLineup(lineCount: 3)
        let buttons = try PageButtons(lines: [2])
        let handler = HoldTimer(nose: 0)
        // Both edges wait in their pipes before the loop first reads: it is a second late.
        let t0 = MonotonicClock.now() - 1_000_000_000
        #expect(board.inject(line: 0, active: true, at: t0))
        #expect(buttons.press(line: 2, at: t0 + 100_000_000))
        let loop = try HotLoop(
            source: CombinedEdgeSource(board, buttons),
            debouncer: Debouncer(lineCount: 3, windowNanoseconds: 5_000_000),
            handler: handler, player: nil, records: EventRing<StationRecord>(capacity: 1024))
        let thread = Thread { loop.run() }
        thread.start()
        defer {
            loop.stop()
            while !thread.isFinished { usleep(1000) }
        }
        // Waits (bounded, 5 s) for the loop to read; the order is the check, not the time.
        for _ in 0..<500 where handler.calls.count < 3 { usleep(10_000) }
        #expect(
            Array(handler.calls.prefix(3)) == [
                "edge 0 down at \(t0)", "hold complete at \(t0 + 50_000_000)", "edge 2 down at \(t0 + 100_000_000)",
            ], "\(handler.calls)")
    }

    /// Woken late with nothing more to read, the loop still decides as an early one would: a
    /// hold due before the debounce window closes is complete before the level the line settled
    /// at (CI's verify-scoring once found an indication the re-scorer did not: the loop had
    /// settled the level first and then run the timer, stamped with its late wake-up).
    @Test func aTimerDueBeforeAWindowClosesIsJudgedBeforeTheSettledLevelWhenLate() throws {
        let board = try SimulatedLineup(lineCount: 1)
        let handler = HoldTimer(nose: 0, hold: 3_000_000)
        let t0 = MonotonicClock.now() - 1_000_000_000
        // A nose for 2 ms, inside the 5 ms window: its leaving is known when the window closes.
        #expect(board.inject(line: 0, active: true, at: t0))
        #expect(board.inject(line: 0, active: false, at: t0 + 2_000_000))
        let loop = try HotLoop(
            source: board, debouncer: Debouncer(lineCount: 1, windowNanoseconds: 5_000_000),
            handler: handler, player: nil, records: EventRing<StationRecord>(capacity: 1024))
        let thread = Thread { loop.run() }
        thread.start()
        defer {
            loop.stop()
            while !thread.isFinished { usleep(1000) }
        }
        for _ in 0..<500 where handler.calls.count < 3 { usleep(10_000) }
        #expect(
            Array(handler.calls.prefix(3)) == [
                "edge 0 down at \(t0)", "hold complete at \(t0 + 3_000_000)", "edge 0 up at \(t0 + 2_000_000)",
            ], "\(handler.calls)")
    }

    /// An edge that reaches its descriptor after the loop decided a timer past its stamp (the
    /// simulated dog's writer descheduled between stamping and writing, under load 20; on a
    /// board, an IRQ thread behind the hot loop) cannot change what was decided: its record says
    /// when the station learnt it, so the re-scorer decides as the station could (CI's
    /// verify-scoring named such a hold: trial 1, station 5, leaving stamped 5.6 ms before it).
    @Test func anEdgeReadAfterATimerPastItsStampSaysWhenItWasKnown() throws {
        let board = try SimulatedLineup(lineCount: 1)
        let handler = HoldTimer(nose: 0, hold: 3_000_000)
        let ring = EventRing<StationRecord>(capacity: 1024)
        let t0 = MonotonicClock.now() - 1_000_000_000
        #expect(board.inject(line: 0, active: true, at: t0))
        let loop = try HotLoop(
            source: board, debouncer: Debouncer(lineCount: 1, windowNanoseconds: 500_000),
            handler: handler, player: nil, records: ring)
        let thread = Thread { loop.run() }
        thread.start()
        defer {
            loop.stop()
            while !thread.isFinished { usleep(1000) }
        }
        for _ in 0..<500 where handler.calls.count < 2 { usleep(10_000) }
        #expect(handler.calls == ["edge 0 down at \(t0)", "hold complete at \(t0 + 3_000_000)"])
        // The leaving, stamped 2 ms after the arrival, arrives now.
        #expect(board.inject(line: 0, active: false, at: t0 + 2_000_000))
        for _ in 0..<500 where handler.calls.count < 3 { usleep(10_000) }
        var edges: [(UInt64, UInt64)] = []
        _ = ring.drain { record in
            if case .edge(let e, true, let knownAt) = record { edges.append((e.timestamp, knownAt)) }
        }
        #expect(edges.map(\.0) == [t0, t0 + 2_000_000])
        #expect(edges.map(\.1) == [0, t0 + 3_000_000])
    }

    /// Chatter read after the loop decided a timer past the window it fell in (the virtual dog's
    /// writer held up between stamping a nose's first toggle and writing it): the level it
    /// settles at is settled late, and its record says when the station learnt it (the
    /// emulated tier's power-cut run logged a hold at A that the re-scorer, taking the settled
    /// level at its window's close, did not see). A settle in its time says nothing more.
    @Test func aLevelSettledAfterATimerPastItsWindowSaysWhenItWasKnown() throws {
        let board = try SimulatedLineup(lineCount: 2)
        let handler = HoldTimer(nose: 0, hold: 50_000_000)
        let ring = EventRing<StationRecord>(capacity: 1024)
        let t0 = MonotonicClock.now() - 1_000_000_000
        #expect(board.inject(line: 0, active: true, at: t0))
        // Line 1 chatters in its time: settled when its window closes, read with nothing late.
        #expect(board.inject(line: 1, active: true, at: t0 + 10_000_000))
        #expect(board.inject(line: 1, active: false, at: t0 + 11_000_000))
        let loop = try HotLoop(
            source: board, debouncer: Debouncer(lineCount: 2, windowNanoseconds: 5_000_000),
            handler: handler, player: nil, records: ring)
        let thread = Thread { loop.run() }
        thread.start()
        defer {
            loop.stop()
            while !thread.isFinished { usleep(1000) }
        }
        for _ in 0..<500 where !handler.calls.contains("hold complete at \(t0 + 50_000_000)") { usleep(10_000) }
        // The nose's first toggle, stamped 1 ms after its arrival, inside the 5 ms window.
        #expect(board.inject(line: 0, active: false, at: t0 + 1_000_000))
        var settled: [(UInt32, UInt64, UInt64)] = []
        for _ in 0..<500 where settled.count < 2 {
            usleep(10_000)
            _ = ring.drain { record in
                if case .settled(let e, let knownAt) = record { settled.append((e.line, e.timestamp, knownAt)) }
            }
        }
        #expect(settled.map(\.0) == [1, 0])
        #expect(settled.map(\.1) == [t0 + 11_000_000, t0 + 1_000_000])
        #expect(settled.map(\.2) == [0, t0 + 50_000_000])
    }
}
