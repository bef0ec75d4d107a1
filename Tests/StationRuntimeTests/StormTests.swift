import Foundation
import SessionLog
import StationControl
import Testing
import TrainingEngine

@testable import StationIO
@testable import StationRuntime

/// A chatter storm through the real debouncer into the engine, in virtual time: why a storm
/// could go unflagged on a loaded machine (`lineupd --simulate --fault chatter:A@2-5` once
/// logged 3 chatter faults for its 4 storms), and the simulated lineup's storm, which cannot.
@Suite struct StormTests {
    static let ms: UInt64 = 1_000_000

    /// A search with the dog's nose at B from 55 ms while station A storms; `stamps` are the
    /// storm's toggles (ns after the search's start). Returns the chatter faults logged.
    private func search(stormAt stamps: [UInt64]) throws -> (faults: [EventSummary], rig: Rig) {
        let rig = try Rig(phase: "phase-1", step: "1", trials: 1)
        #expect(rig.ready().answer == .started)
        var edges = [SensorEdge(timestamp: rig.now + 55 * Self.ms, line: 1, isActive: true)]
        var level = false
        for t in stamps {
            level.toggle()
            edges.append(SensorEdge(timestamp: rig.now + t, line: 0, isActive: level))
        }
        edges.sort { $0.timestamp < $1.timestamp }
        return (try feed(edges, to: rig), rig)
    }

    @Test func aStormOnItsMillisecondsIsFlaggedOnce() throws {
        let (faults, rig) = try search(stormAt: (1...300).map { UInt64($0) * Self.ms })
        #expect(faults.count == 1, "\(faults)")
        #expect(faults.first?.station == 1)
        #expect(rig.flagged().contains(FlaggedStation(station: "A", fault: .chatter)))
    }

    /// The cause of the flaky count: the storm's thread stamped each toggle when it ran. Held
    /// off the CPU for 12 ms every 50 ms (a loaded machine), it put the toggles it missed all
    /// at once on waking: the debounced edges then have a 13 ms gap every 50 ms, never 20 in a
    /// row each within `chatterGap` (10 ms), and the engine rightly saw no storm.
    @Test func aStormStampedWhenItsStalledThreadRanIsNoStormToTheEngine() throws {
        let stamps = (1...300).map { k -> UInt64 in
            let due = UInt64(k) * Self.ms
            let intoStall = due % (50 * Self.ms)
            // Due while the thread was off the CPU: stamped when it came back.
            return intoStall < 12 * Self.ms ? due - intoStall + 12 * Self.ms : due
        }
        #expect(try search(stormAt: stamps).faults.isEmpty)
    }

    /// The simulated lineup's storm with its thread stalled as above: each toggle is stamped at
    /// its own millisecond and put before any later edge, so the engine sees the storm an idle
    /// machine makes.
    @Test func theSimulatedStormIsTheSameWhenItsThreadRunsLate() throws {
        let rig = try Rig(phase: "phase-1", step: "1", trials: 1)
        let lineup = try SimulatedLineup(lineCount: rig.stations + 3)
        let start = rig.now
        lineup.setFault(.chatter, line: 0)
        lineup.startStorm(line: 0, at: start)
        // The storm's thread gets the CPU at 12, 62, 112... ms; the dog's nose reaches B at
        // 55 ms, while the storm's thread is off the CPU.
        for wake in stride(from: 12, through: 262, by: 50) {
            if wake == 62 { lineup.inject(line: 1, active: true, at: start + 55 * Self.ms) }
            lineup.runStorm(upTo: start + UInt64(wake) * Self.ms)
        }
        lineup.stopStorm(line: 0, at: start + 300 * Self.ms)
        #expect(lineup.runStorm(upTo: start + 400 * Self.ms) == nil, "the storm is over")

        let edges = readAll(lineup)
        let storm = edges.filter { $0.line == 0 }
        #expect(storm.map(\.timestamp) == (1...300).map { start + UInt64($0) * Self.ms })
        #expect(storm.map(\.isActive) == (1...300).map { $0 % 2 == 1 }, "a toggle each millisecond")
        #expect(zip(edges, edges.dropFirst()).allSatisfy { $0.timestamp <= $1.timestamp }, "in their stamps' order")
        #expect(edges.firstIndex { $0.line == 1 } == 55, "the nose after the storm's first 55 toggles")

        #expect(rig.ready().answer == .started)
        let faults = try feed(edges, to: rig)
        #expect(faults.count == 1, "\(faults)")
    }

    /// Raw edges as the hot loop takes them (each settle owed first, then the debouncer's
    /// verdict: acted on, or logged as chatter); the engine's deadlines fire on the way.
    /// Returns the chatter faults logged.
    private func feed(_ edges: [SensorEdge], to rig: Rig) throws -> [EventSummary] {
        var debouncer = Debouncer(lineCount: rig.stations + 3, windowNanoseconds: 5 * Self.ms)
        for edge in edges {
            rig.advance(to: max(rig.now, edge.timestamp))
            while let settled = debouncer.settle(now: edge.timestamp) {
                rig.now = settled.timestamp
                rig.edge(line: settled.line, active: settled.isActive)
            }
            rig.now = edge.timestamp
            if let acted = debouncer.accept(edge) {
                rig.edge(line: acted.line, active: acted.isActive)
            } else {
                rig.chatter(line: edge.line, active: edge.isActive)
            }
        }
        try rig.drain()
        return try rig.events(.fault).filter { $0.detail?.contains("chatter") == true }
    }

    private func readAll(_ lineup: SimulatedLineup) -> [SensorEdge] {
        var all: [SensorEdge] = []
        let buffer = UnsafeMutableBufferPointer<SensorEdge>.allocate(capacity: 64)
        defer { buffer.deallocate() }
        while case .edges(let n) = lineup.readEdges(descriptor: 0, into: buffer), n > 0 { all += buffer[0..<n] }
        return all
    }
}
