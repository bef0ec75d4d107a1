import Foundation
import ReadingRows
import SessionLog
import StationControl
import Testing

@testable import StationIO
@testable import StationRuntime

/// Between two hot loops (a session ending, the next starting) no loop reads the lineup: an
/// edge that reaches it then is read by the next loop. That loop goes on from the levels the
/// last one acted on (which the log holds), so the edge is judged and logged as the change it
/// is. Taken from the line's level instead, the next loop knew the nose had left while the
/// log's last level said it was still there (the edge was logged as chatter), and
/// `verify-scoring` put the nose at that station when the next session's first trial started:
/// an indication at the start + the hold that the station never saw (VerifyScoringTests,
/// twice under load).
@Suite(.serialized) struct SegmentSwitchTests {
    @Test func anEdgeThatCameBetweenTwoLoopsIsLoggedAsTheChangeItIs() throws {
        let (service, lineup, directory) = try InputLevelsTests.station()
        var stopped = false
        defer { if !stopped { service.shutdown() } }
        // Stamped 1 s ago: its debounce window has closed, so the leaving is a change, not chatter.
        #expect(lineup.inject(line: 0, active: true, at: MonotonicClock.now() - 1_000_000_000))
        #expect(InputLevelsTests.eventually { InputLevelsTests.level(service.status(), "A")?.active == true })

        // The loop stops with nothing unread; the nose leaves; the next loop starts.
        service.switching.lock()
        service.stopSegment(aborting: false)
        let left = MonotonicClock.now()
        #expect(lineup.inject(line: 0, active: false, at: left))
        try service.startSegment(session: nil, configuration: service.idleConfiguration, layouts: [], seed: 0)
        service.switching.unlock()
        #expect(InputLevelsTests.eventually { service.status().edges >= 1 })
        #expect(InputLevelsTests.level(service.status(), "A")?.active == false)
        #expect(service.inputLevels.read().changedAt[0] == left)
        service.shutdown()
        stopped = true

        // The log's last level of station 1 (A) is the leaving, a level the station took.
        let reader = try SessionLog.openReader(path: directory + "/lineup.db")
        let edges = try reader.events(LogFilter(eventKind: .edge)).filter { $0.station == 1 }
        let last = try #require(edges.last, "no edge of station 1 logged")
        #expect(last.value == 0 && last.kernelNs == Int64(left), "\(edges)")
        #expect(last.detail?.contains("chatter") != true, "\(edges)")
    }
}
