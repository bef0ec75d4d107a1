import Foundation
import Testing

@testable import StationRuntime

/// `status`'s lab sync times (the oldest row not yet sent, the report's and the last success's)
/// are written by hand, not by `ISO8601DateFormatter` (whose ICU data stayed resident in lineupd),
/// and must read byte for byte as the formatter wrote them from the same wall nanoseconds:
/// lineupctl, the station page and lineup-alerts read them.
@Suite struct SyncReportTimeTests {
    static func foundationText(_ wallNs: Int64) -> String {
        ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(wallNs) / 1e9))
    }

    @Test func syncTimesReadAsTheFormatterWroteThem() {
        let fixed: [Int64] = [
            0, 999_999_999, 1_000_000_000, 59_999_600_000,
            1_795_514_400 * 1_000_000_000,  // 2026-11-24T10:00:00Z, as SyncReportStatusTests sends
            1_795_514_400 * 1_000_000_000 - 1, 1_795_514_400 * 1_000_000_000 - 400_000,
            1_735_689_599_999_600_000,  // rounds into 2025, as the formatter does
        ]
        for wallNs in fixed { #expect(StationService.isoTime(wallNs) == Self.foundationText(wallNs), "\(wallNs)") }
        #expect(StationService.isoTime(1_795_514_400 * 1_000_000_000) == "2026-11-24T10:00:00Z")

        var state: UInt64 = 0x5_1AC_5EED
        func next() -> UInt64 {
            // SplitMix64: the same draw on every run.
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        var differing: [String] = []
        for k in 0..<20_000 {
            // 1970 to 2106, to the nanosecond; every fourth within a millisecond of a whole second.
            var wallNs = Int64(next() % 4_300_000_000) * 1_000_000_000 + Int64(next() % 1_000_000_000)
            if k % 4 == 0 { wallNs = wallNs / 1_000_000_000 * 1_000_000_000 + 999_000_000 + Int64(next() % 1_000_000) }
            let ours = StationService.isoTime(wallNs)
            let theirs = Self.foundationText(wallNs)
            if ours != theirs && differing.count < 5 { differing.append("\(wallNs): \(ours) against \(theirs)") }
        }
        #expect(differing.isEmpty, "\(differing)")
    }
}
