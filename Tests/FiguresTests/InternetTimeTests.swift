import Figures
import Foundation
import Testing

/// `status`'s times (the inputs' last changes, to the millisecond; the lab sync's, to the second):
/// written by hand (`ISOTimeFormatter.internetTime`), not by Foundation's ISO8601DateFormatter,
/// whose ICU calendar stayed resident in lineupd. The text must be the formatter's byte for byte
/// (lineupctl, the station page and lineup-alerts read it): compared here over fixed times and a
/// seeded draw of times to the microsecond and below, milliseconds' halves included.
@Suite struct InternetTimeTests {
    static func foundationText(_ date: Date) -> String {
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return format.string(from: date)
    }

    /// The formatter as it comes (`.withInternetDateTime`): to the second, as `status` says the
    /// lab sync's times.
    static func foundationSecondText(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }

    @Test func fixedTimesReadAsFoundationWritesThem() {
        let times: [Double] = [
            0, 0.0004, 0.0005, 0.0015, 0.9995, 59.9996, 86_399.9999,
            951_782_400.25,  // 2000-02-29 00:00:00.250, a leap day
            1_735_689_599.9996,  // the last moment of 2024 rounds into 2025
            1_764_284_124.123, 1_764_284_124.1235, 4_102_444_800.001,  // 2100-01-01
        ]
        for t in times {
            let date = Date(timeIntervalSince1970: t)
            #expect(ISOTimeFormatter.internetTime(date) == Self.foundationText(date), "\(t)")
            #expect(
                ISOTimeFormatter.internetTime(date, fractionalSeconds: false) == Self.foundationSecondText(date), "\(t)"
            )
        }
        #expect(
            ISOTimeFormatter.internetTime(Date(timeIntervalSince1970: 1_764_284_124.123)) == "2025-11-27T22:55:24.123Z")
        #expect(
            ISOTimeFormatter.internetTime(Date(timeIntervalSince1970: 1_764_284_124.9996), fractionalSeconds: false)
                == "2025-11-27T22:55:25Z")
    }

    @Test func drawnTimesReadAsFoundationWritesThem() {
        var state: UInt64 = 0x1D7E_5EED
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
            // 1970 to 2106, to the nanosecond; every fourth a whole millisecond and a half.
            var seconds = Double(next() % 4_300_000_000) + Double(next() % 1_000_000_000) / 1e9
            if k % 4 == 0 { seconds = seconds.rounded(.down) + Double(next() % 1000) / 1000 + 0.0005 }
            // As status makes it: the wall clock now, less how long ago the change was.
            let date = Date(timeIntervalSince1970: seconds + 3).addingTimeInterval(-3)
            let ours = ISOTimeFormatter.internetTime(date)
            let theirs = Self.foundationText(date)
            if ours != theirs && differing.count < 5 { differing.append("\(seconds): \(ours) against \(theirs)") }
            let oursToTheSecond = ISOTimeFormatter.internetTime(date, fractionalSeconds: false)
            let theirsToTheSecond = Self.foundationSecondText(date)
            if oursToTheSecond != theirsToTheSecond && differing.count < 5 {
                differing.append("\(seconds): \(oursToTheSecond) against \(theirsToTheSecond)")
            }
        }
        #expect(differing.isEmpty, "\(differing)")
    }
}
