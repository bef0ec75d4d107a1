import Foundation
import SessionLog
import StationControl
import Testing
import TrainingEngine

@testable import StationIO
@testable import StationRuntime

/// The feeder's pulse in the live session's log, in virtual time: the hot loop's `.feeder`
/// record (pushed when the line goes off, after its delay and width) becomes one `feeder`
/// event with the times the line went on and off, in the trial of the click it followed.
@Suite struct FeederRuntimeTests {
    static let second: UInt64 = 1_000_000_000

    @Test func aPulseIsLoggedWithItsTimesInItsClicksTrialEvenOnceTheNextTrialStarted() throws {
        let rig = try Rig(phase: "phase-1", step: "1", trials: 3)
        let target = try #require(rig.layouts[0].targetStation)
        #expect(rig.ready().answer == .started)
        rig.advance(by: Self.second)
        rig.nose(at: target, true)
        let clickAt = try #require(rig.advance(by: 3 * Self.second).first)
        rig.nose(at: target, false)
        // The next trial starts before the pulse's record reaches the log (a long delay).
        rig.advance(by: 16 * Self.second)
        #expect(rig.ready().answer == .started)
        let onAt = clickAt + 250_000_000
        let offAt = onAt + 40_000_000
        _ = rig.stationRing.push(.feeder(FeederPulse(clickEdge: clickAt, onAt: onAt, offAt: offAt)))
        try rig.drain()

        let trial = try #require(try rig.log.reader.trials().first { $0.number == 1 })
        let fed = try rig.events(.feeder)
        try #require(fed.count == 1)
        #expect(fed[0].trialId == trial.id)
        #expect(fed[0].kernelNs == Int64(onAt))
        #expect(fed[0].durationNs == 40_000_000)
        #expect(fed[0].value == 1)
        #expect(fed[0].station == nil)
        let detail = try EventDetail.decode(FeederDetail.self, from: try #require(fed[0].detail))
        #expect(detail == FeederDetail(clickEdgeNs: Int64(clickAt)))
        // `lineupctl watch` sees it as it sees every event.
        let watched = try rig.watchObjects().filter { $0["kind"] == "feeder" }
        #expect(watched.count == 1)
        #expect(watched.first?["duration_ns"] == "40000000")
    }

    @Test func aLineThatCouldNotBeSetIsLoggedAsUnfed() throws {
        let rig = try Rig(phase: "phase-1", step: "1", trials: 1)
        #expect(rig.ready().answer == .started)
        _ = rig.stationRing.push(
            .feeder(FeederPulse(clickEdge: rig.now, onAt: rig.now + 10, offAt: 0, failed: true)))
        try rig.drain()
        let fed = try #require(try rig.events(.feeder).first)
        #expect(fed.value == 0)
        #expect(fed.durationNs == nil)
        let detail = try EventDetail.decode(FeederDetail.self, from: try #require(fed.detail))
        #expect(detail.failed == true)
    }
}
