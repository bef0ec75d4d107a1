import Foundation

/// Times and durations as the messages give them, and the ISO 8601 times `status` carries.
public enum AlertText {
    /// UTC, to the second: `2026-11-27 10:42:07 UTC`. A message read on a phone in another time
    /// zone still says one time.
    public static func time(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ n: Int?) -> String { String(format: "%02d", n ?? 0) }
        return "\(c.year ?? 0)-\(two(c.month))-\(two(c.day)) \(two(c.hour)):\(two(c.minute)):\(two(c.second)) UTC"
    }

    /// `45 s`, `12 min`, `3 h 5 min`, `2 days 4 h`.
    public static func duration(_ seconds: Double) -> String {
        let s = Int(max(0, seconds).rounded())
        if s < 120 { return "\(s) s" }
        if s < 7200 { return "\(s / 60) min" }
        if s < 172_800 { return "\(s / 3600) h" + (s % 3600 >= 60 ? " \(s % 3600 / 60) min" : "") }
        return "\(s / 86400) days" + (s % 86400 >= 3600 ? " \(s % 86400 / 3600) h" : "")
    }

    /// An ISO 8601 time with or without fractional seconds, as lineupd writes them.
    public static func parse(_ text: String) -> Date? {
        let plain = ISO8601DateFormatter()
        if let date = plain.date(from: text) { return date }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text)
    }

    /// ISO 8601 for the machines' formats (JSON), to the second.
    public static func iso(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }
}
