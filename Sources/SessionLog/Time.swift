import Foundation

/// Reads the dates a researcher types: `2025-05-01` (local midnight),
/// `2025-05-01T14:30`, `2025-05-01 14:30:15`, with an optional `Z` or `+02:00`
/// offset (without one, the station's time zone).
public enum ResearcherDate {
    /// Nanoseconds since 1970 (UTC).
    public static func parse(_ text: String, timeZone: TimeZone = .current) throws -> Int64 {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ count: Int) throws -> Int {
            guard index + count <= bytes.count else { throw SessionLogError.malformedDate(text) }
            var value = 0
            for byte in bytes[index..<index + count] {
                guard byte >= 48 && byte <= 57 else { throw SessionLogError.malformedDate(text) }
                value = value * 10 + Int(byte - 48)
            }
            index += count
            return value
        }
        func expect(_ char: Character) throws {
            guard index < bytes.count, bytes[index] == char.asciiValue else {
                throw SessionLogError.malformedDate(text)
            }
            index += 1
        }
        var parts = DateComponents()
        parts.year = try number(4)
        try expect("-")
        parts.month = try number(2)
        try expect("-")
        parts.day = try number(2)
        var nanos = 0
        var zone = timeZone
        if index < bytes.count {
            guard bytes[index] == UInt8(ascii: "T") || bytes[index] == UInt8(ascii: " ") else {
                throw SessionLogError.malformedDate(text)
            }
            index += 1
            parts.hour = try number(2)
            try expect(":")
            parts.minute = try number(2)
            if index < bytes.count && bytes[index] == UInt8(ascii: ":") {
                index += 1
                parts.second = try number(2)
                if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
                    index += 1
                    var scale = 100_000_000
                    let start = index
                    while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                        nanos += Int(bytes[index] - 48) * scale
                        scale /= 10
                        index += 1
                    }
                    if index == start { throw SessionLogError.malformedDate(text) }
                }
            }
            if index < bytes.count {
                if bytes[index] == UInt8(ascii: "Z") {
                    index += 1
                    zone = TimeZone(secondsFromGMT: 0) ?? zone
                } else if bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                    let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
                    index += 1
                    let hours = try number(2)
                    if index < bytes.count && bytes[index] == UInt8(ascii: ":") { index += 1 }
                    let minutes = try number(2)
                    guard hours <= 14, minutes < 60,
                        let fixed = TimeZone(secondsFromGMT: sign * (hours * 3600 + minutes * 60))
                    else { throw SessionLogError.malformedDate(text) }
                    zone = fixed
                }
            }
        }
        guard index == bytes.count else { throw SessionLogError.malformedDate(text) }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        // Reject 2025-02-30 and 25:00 rather than letting the calendar roll them over.
        guard let month = parts.month, let day = parts.day, (1...12).contains(month), day >= 1,
            (parts.hour ?? 0) < 24, (parts.minute ?? 0) < 60, (parts.second ?? 0) < 61,
            let date = calendar.date(from: parts),
            calendar.component(.day, from: date) == day
        else { throw SessionLogError.malformedDate(text) }
        return Int64((date.timeIntervalSince1970).rounded()) * 1_000_000_000 + Int64(nanos)
    }
}

extension ResearcherDate {
    /// For an upper bound: a bare date (`2025-05-01`) means the end of that day, so
    /// `--until 2025-05-01` includes the whole day; a date with a time is taken as is.
    public static func parseUpperBound(_ text: String, timeZone: TimeZone = .current) throws -> Int64 {
        let start = try parse(text, timeZone: timeZone)
        guard text.utf8.count == 10 else { return start }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let day = Date(timeIntervalSince1970: TimeInterval(start / 1_000_000_000))
        guard let next = calendar.date(byAdding: .day, value: 1, to: day) else { return start }
        return Int64(next.timeIntervalSince1970.rounded()) * 1_000_000_000
    }

    /// A calendar date alone (`YYYY-MM-DD`), checked and returned as typed.
    public static func validateDay(_ text: String) throws -> String {
        guard text.utf8.count == 10 else { throw SessionLogError.malformedDate(text) }
        _ = try parse(text)
        return text
    }
}
