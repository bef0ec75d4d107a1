import Figures
import Foundation
import Testing
import TrainingEngine

@testable import SessionLog

/// The figures with a percentile in them that SessionLog gives (the writer's status, the
/// report's click latency) are the engine's one `quantile` (type 7), by hand-computed values.
@Suite struct QuantileTests {
    @Test func theWritersStatusUsesTheOneQuantile() throws {
        let log = try SessionLog(path: temporaryLogPath())
        let writer = log.makeWriter(batchInterval: .seconds(60))
        defer { writer.close() }
        #expect(writer.status.batchMillisP99 == nil)
        writer.replaceTimings(batchMillis: [4, 1, 3, 2], lagMillis: [10, 40, 30, 20])
        let status = writer.status
        // The old floor rank gave 3 and 4 here, and 40 for the durability p99.
        #expect(status.batchMillisP50 == 2.5)
        #expect(abs(status.batchMillisP99! - 3.97) < 1e-9)
        #expect(status.batchMillisMax == 4)
        #expect(abs(status.durableLagMillisP99! - 39.7) < 1e-9)
    }

    @Test func theReportsClickLatencyUsesTheOneQuantile() throws {
        let clicks = try #require(ClickSpread(onsetNs: [4_000_000, 1_000_000, 3_000_000, 2_000_000]))
        #expect(clicks.n == 4 && clicks.p50 == 2.5 && clicks.worst == 4)
        #expect(abs(clicks.p99 - 3.97) < 1e-9)
        #expect(ClickSpread(onsetNs: []) == nil)
    }
}
