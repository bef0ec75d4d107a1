import Testing

@testable import StationIO

@Suite struct DebouncerTests {
    let ms: UInt64 = 1_000_000

    func edge(_ t: UInt64, _ active: Bool, line: UInt32 = 0) -> SensorEdge {
        SensorEdge(timestamp: t, line: line, isActive: active)
    }

    @Test func firstEdgeActsAtOnceWithItsOwnTimestamp() {
        var d = Debouncer(lineCount: 2, windowNanoseconds: 5 * ms)
        let acted = d.accept(edge(100 * ms, true))
        #expect(acted == edge(100 * ms, true))
        #expect(d.level(of: 0))
    }

    @Test func chatterInsideTheWindowIsIgnored() {
        var d = Debouncer(lineCount: 1, windowNanoseconds: 5 * ms)
        _ = d.accept(edge(0, true))
        #expect(d.accept(edge(1 * ms, false)) == nil)
        #expect(d.accept(edge(2 * ms, true)) == nil)
        #expect(d.chatterCount == 2)
        // Settled at the level acted on: nothing owed.
        #expect(d.settle(now: 10 * ms) == nil)
    }

    @Test func anEdgeAtTheWindowsEndActs() {
        var d = Debouncer(lineCount: 1, windowNanoseconds: 5 * ms)
        _ = d.accept(edge(0, true))
        #expect(d.accept(edge(5 * ms - 1, false)) == nil)
        var d2 = Debouncer(lineCount: 1, windowNanoseconds: 5 * ms)
        _ = d2.accept(edge(0, true))
        #expect(d2.accept(edge(5 * ms, false)) == edge(5 * ms, false))
    }

    @Test func aTouchShorterThanTheWindowSettlesBackWithTheRealTime() {
        var d = Debouncer(lineCount: 1, windowNanoseconds: 5 * ms)
        _ = d.accept(edge(0, true))
        _ = d.accept(edge(2 * ms, false))  // the nose left after 2 ms
        #expect(d.nextDeadline == 5 * ms)
        #expect(d.settle(now: 4 * ms) == nil)
        #expect(d.settle(now: 5 * ms) == edge(2 * ms, false))
        #expect(d.level(of: 0) == false)
        #expect(d.nextDeadline == .max)
    }

    @Test func linesAreIndependent() {
        var d = Debouncer(lineCount: 3, windowNanoseconds: 5 * ms)
        _ = d.accept(edge(0, true, line: 0))
        #expect(d.accept(edge(1 * ms, true, line: 1)) == edge(1 * ms, true, line: 1))
        #expect(d.accept(edge(1 * ms, true, line: 2)) == edge(1 * ms, true, line: 2))
    }

    @Test func repeatedLevelIsNotAnEdge() {
        var d = Debouncer(lineCount: 1, windowNanoseconds: 5 * ms)
        _ = d.accept(edge(0, true))
        #expect(d.accept(edge(50 * ms, true)) == nil)
    }

    @Test func settlesSeveralLinesOneAtATime() {
        var d = Debouncer(lineCount: 2, windowNanoseconds: 5 * ms)
        _ = d.accept(edge(0, true, line: 0))
        _ = d.accept(edge(1 * ms, true, line: 1))
        _ = d.accept(edge(2 * ms, false, line: 0))
        _ = d.accept(edge(3 * ms, false, line: 1))
        var settled: [SensorEdge] = []
        while let s = d.settle(now: 10 * ms) { settled.append(s) }
        #expect(Set(settled) == [edge(2 * ms, false, line: 0), edge(3 * ms, false, line: 1)])
    }

    /// The hot loop orders settles between the engine's timers by their windows' ends (and the
    /// re-scorer does too): the earliest window settles first, whatever its line's number.
    @Test func theEarliestWindowSettlesFirst() {
        var d = Debouncer(lineCount: 2, windowNanoseconds: 5 * ms)
        _ = d.accept(edge(0, true, line: 1))
        _ = d.accept(edge(1 * ms, false, line: 1))
        _ = d.accept(edge(3 * ms, true, line: 0))
        _ = d.accept(edge(4 * ms, false, line: 0))
        var settled: [SensorEdge] = []
        while let s = d.settle(now: 10 * ms) { settled.append(s) }
        #expect(settled == [edge(1 * ms, false, line: 1), edge(4 * ms, false, line: 0)])
    }
}
