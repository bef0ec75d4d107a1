import Foundation
import Glibc
import StationIO
import Synchronization
import Testing

/// The page's buttons reach the hot loop as the board's button line's edges, beside the
/// board's own inputs, through the debouncer like a thumb on the button.
@Suite struct PageButtonsTests {
    final class Recorder: HotPathHandler, @unchecked Sendable {
        let nextDeadline: UInt64 = .max
        let downs = Atomic<Int>(0)
        let ups = Atomic<Int>(0)
        let stationEdges = Atomic<Int>(0)
        let button: UInt32
        init(button: UInt32) { self.button = button }
        func handle(_ edge: SensorEdge) -> HotPathDecision {
            if edge.line == button {
                if edge.isActive { downs.add(1, ordering: .relaxed) } else { ups.add(1, ordering: .relaxed) }
            } else {
                stationEdges.add(1, ordering: .relaxed)
            }
            return .none
        }
        func deadline(now: UInt64) -> HotPathDecision { .none }
    }

    @Test func aPressIsTheButtonLinesDownAndUpBesideTheBoardsInputs() throws {
        let board = try SimulatedLineup(lineCount: 3)
        let buttons = try PageButtons(lines: [2])
        let source = CombinedEdgeSource(board, buttons)
        #expect(source.pollDescriptors.count == 2)
        #expect(source.lines(ofDescriptor: 1) == [2])
        let recorder = Recorder(button: 2)
        let loop = try HotLoop(
            source: source, debouncer: Debouncer(lineCount: 3, windowNanoseconds: 5_000_000), handler: recorder,
            player: nil, records: EventRing<StationRecord>(capacity: 1024))
        let thread = Thread { loop.run() }
        thread.start()
        defer {
            loop.stop()
            while !thread.isFinished { usleep(1000) }
        }
        // Only the lines it was given: a station cannot be pressed from the page.
        #expect(!buttons.press(line: 0))
        #expect(buttons.press(line: 2))
        // The down edge acts at once; the up edge, within the debounce window, when it closes.
        #expect(
            waitUntil { recorder.downs.load(ordering: .relaxed) == 1 && recorder.ups.load(ordering: .relaxed) == 1 })
        // The board's inputs still arrive beside it.
        board.inject(line: 0, active: true)
        #expect(waitUntil { recorder.stationEdges.load(ordering: .relaxed) == 1 })
        // Presses apart by more than the window are each a press.
        usleep(20_000)
        #expect(buttons.press(line: 2))
        #expect(
            waitUntil { recorder.downs.load(ordering: .relaxed) == 2 && recorder.ups.load(ordering: .relaxed) == 2 })
        #expect(buttons.droppedEdges == 0)
    }

    func waitUntil(_ condition: () -> Bool) -> Bool {
        for _ in 0..<200 {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }
}
