import Foundation

/// Wall-clock times as the researcher reads them: ISO 8601 in the station's time zone,
/// with its offset, so a time is unambiguous and still reads as local time.
///
/// Formatting is done by hand because exports format a million times: Foundation's
/// formatters would dominate the export.
public struct ISOTimeFormatter {
    private let zone: TimeZone
    // The offset found last and the span of seconds it holds for.
    private var offsetSeconds = 0
    private var validFrom = Int64.max
    private var validUntil = Int64.min

    public init(timeZone: TimeZone = .current) { zone = timeZone }

    /// `2025-05-01T14:30:00.123456+02:00` for `wallNs` nanoseconds since 1970 (UTC).
    public mutating func string(wallNs: Int64) -> String {
        var bytes = [UInt8]()
        bytes.reserveCapacity(32)
        append(wallNs: wallNs, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the formatted time to `bytes` (32 bytes).
    public mutating func append(wallNs: Int64, to bytes: inout [UInt8]) {
        let (secondsUTC, nanos) = wallNs.floorDivided(by: 1_000_000_000)
        let offset = offset(at: secondsUTC)
        let local = secondsUTC + Int64(offset)
        let (days, secondOfDay) = local.floorDivided(by: 86_400)
        let (year, month, day) = Self.civil(fromDays: days)
        Self.digits(year, 4, &bytes)
        bytes.append(UInt8(ascii: "-"))
        Self.digits(month, 2, &bytes)
        bytes.append(UInt8(ascii: "-"))
        Self.digits(day, 2, &bytes)
        bytes.append(UInt8(ascii: "T"))
        Self.digits(secondOfDay / 3600, 2, &bytes)
        bytes.append(UInt8(ascii: ":"))
        Self.digits(secondOfDay / 60 % 60, 2, &bytes)
        bytes.append(UInt8(ascii: ":"))
        Self.digits(secondOfDay % 60, 2, &bytes)
        bytes.append(UInt8(ascii: "."))
        Self.digits(nanos / 1_000, 6, &bytes)
        bytes.append(UInt8(ascii: offset < 0 ? "-" : "+"))
        let magnitude = Int64(abs(offset))
        Self.digits(magnitude / 3600, 2, &bytes)
        bytes.append(UInt8(ascii: ":"))
        Self.digits(magnitude / 60 % 60, 2, &bytes)
    }

    /// `2025-05-01T12:30:00.123Z`: ISO 8601 in UTC to the nearest millisecond, the text
    /// Foundation's `ISO8601DateFormatter` gives with `.withInternetDateTime` and
    /// `.withFractionalSeconds` (`InternetTimeTests` compares them), written by hand: that
    /// formatter opens an ICU locale and calendar at each use, which kept 4.9 MB of ICU's data
    /// resident in lineupd (and locked, `mlockall`) from the first `status` on. Release build, a
    /// 60 s simulated block at 30x with `status` asked twice a second, as the station page does:
    /// lib_FoundationICU.so 6.0 MB resident before, 1.1 MB after; VmHWM 43.2 MB before, 38.2 MB.
    /// With `fractionalSeconds` false, `2025-05-01T12:30:00Z`: the formatter's default text
    /// (`.withInternetDateTime` alone), the same second as the fractional text's.
    public static func internetTime(_ date: Date, fractionalSeconds: Bool = true) -> String {
        // As CoreFoundation hands the time to ICU: milliseconds since 1970 as a Double, rounded.
        let milliseconds = Int64(((date.timeIntervalSinceReferenceDate + 978_307_200) * 1000).rounded())
        let (seconds, millisecond) = milliseconds.floorDivided(by: 1000)
        let (days, secondOfDay) = seconds.floorDivided(by: 86_400)
        let (year, month, day) = civil(fromDays: days)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        digits(year, 4, &bytes)
        bytes.append(UInt8(ascii: "-"))
        digits(month, 2, &bytes)
        bytes.append(UInt8(ascii: "-"))
        digits(day, 2, &bytes)
        bytes.append(UInt8(ascii: "T"))
        digits(secondOfDay / 3600, 2, &bytes)
        bytes.append(UInt8(ascii: ":"))
        digits(secondOfDay / 60 % 60, 2, &bytes)
        bytes.append(UInt8(ascii: ":"))
        digits(secondOfDay % 60, 2, &bytes)
        if fractionalSeconds {
            bytes.append(UInt8(ascii: "."))
            digits(millisecond, 3, &bytes)
        }
        bytes.append(UInt8(ascii: "Z"))
        return String(decoding: bytes, as: UTF8.self)
    }

    private mutating func offset(at seconds: Int64) -> Int {
        if seconds >= validFrom && seconds < validUntil { return offsetSeconds }
        let date = Date(timeIntervalSince1970: TimeInterval(seconds))
        offsetSeconds = zone.secondsFromGMT(for: date)
        validFrom = seconds
        if let next = zone.nextDaylightSavingTimeTransition(after: date) {
            validUntil = Int64(next.timeIntervalSince1970.rounded(.down))
        } else {
            validUntil = Int64.max
        }
        return offsetSeconds
    }

    /// Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's algorithm).
    static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func digits(_ value: Int64, _ count: Int, _ bytes: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<count { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(truncatingIfNeeded: 48 + rest / divisor % 10))
            rest %= divisor
            divisor /= 10
        }
    }
}

extension Int64 {
    /// Quotient and remainder rounded towards minus infinity (times before 1970).
    fileprivate func floorDivided(by divisor: Int64) -> (Int64, Int64) {
        let q = self / divisor
        let r = self % divisor
        return r < 0 ? (q - 1, r + divisor) : (q, r)
    }
}
