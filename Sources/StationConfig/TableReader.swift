import TOMLKit

/// Reads one TOML table with its key path, so every error names the full key
/// (`stations[2].active_low`), the expected and the found type.
struct TableReader {
    let table: TOMLTable
    /// The table's own key path: empty for the document, `audio`, `stations[2]`, `buttons.clicker`.
    let path: String
    let source: String

    func keyPath(_ key: String) -> String { KeyPaths.join(path, key) }

    func error(_ code: StationConfigError.Code, _ key: String?, _ message: String)
        -> StationConfigError
    {
        StationConfigError(
            code: code, file: source, keyPath: key.map(keyPath) ?? path, message: message)
    }

    /// Refuses the first key (in sorted order) that is not one of `known`.
    func checkKeys(_ known: [String]) throws(StationConfigError) {
        for key in table.keys.sorted() where !known.contains(key) {
            var message = "unknown key"
            if let guess = KeyPaths.suggestion(for: key, among: known) {
                message += " (did you mean \(guess)?)"
            } else {
                message += "; expected one of: " + known.joined(separator: ", ")
            }
            throw error(.unknownKey, key, message)
        }
    }

    func has(_ key: String) -> Bool { table[key] != nil }

    func value(_ key: String) -> TOMLValueConvertible? { table[key] }

    func wrongType(_ key: String, expected: String, found: TOMLValueConvertible) -> StationConfigError {
        error(.wrongType, key, "expected \(expected), found \(Self.describe(found))")
    }

    func string(_ key: String, expected: String = "a string") throws(StationConfigError) -> String? {
        guard let value = table[key] else { return nil }
        guard let text = value.string else { throw wrongType(key, expected: expected, found: value) }
        return text
    }

    /// A non-empty string without control characters or leading or trailing blanks.
    func text(_ key: String, what: String) throws(StationConfigError) -> String? {
        guard let text = try string(key) else { return nil }
        if text.unicodeScalars.allSatisfy({ $0.properties.isWhitespace }) {
            throw error(.invalidValue, key, "\(what) must not be empty")
        }
        if text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw error(.invalidValue, key, "\(what) \(quoted(text)) contains a control character")
        }
        if let first = text.unicodeScalars.first, let last = text.unicodeScalars.last,
            first.properties.isWhitespace || last.properties.isWhitespace
        {
            throw error(.invalidValue, key, "\(what) \(quoted(text)) has leading or trailing blanks")
        }
        return text
    }

    func bool(_ key: String) throws(StationConfigError) -> Bool? {
        guard let value = table[key] else { return nil }
        guard let flag = value.bool else {
            throw wrongType(key, expected: "a boolean (true or false)", found: value)
        }
        return flag
    }

    func int(_ key: String, in range: ClosedRange<Int>, unit: String = "") throws(StationConfigError)
        -> Int?
    {
        guard let value = table[key] else { return nil }
        guard let number = value.int else { throw wrongType(key, expected: "an integer", found: value) }
        guard range.contains(number) else {
            throw error(
                .outOfRange, key,
                "\(number)\(unit) is out of range; expected \(range.lowerBound) to \(range.upperBound)\(unit)"
            )
        }
        return number
    }

    /// An integer or a floating-point number.
    func number(_ key: String, in range: ClosedRange<Double>, unit: String = "")
        throws(StationConfigError)
        -> Double?
    {
        guard let value = table[key] else { return nil }
        let number: Double
        if let int = value.int {
            number = Double(int)
        } else if let double = value.double {
            number = double
        } else {
            throw wrongType(key, expected: "a number", found: value)
        }
        guard number >= range.lowerBound, number <= range.upperBound else {
            throw error(
                .outOfRange, key,
                "\(Self.format(number))\(unit) is out of range; expected \(Self.format(range.lowerBound))"
                    + " to \(Self.format(range.upperBound))\(unit)")
        }
        return number
    }

    func subtable(_ key: String, expected: String = "a table") throws(StationConfigError)
        -> TableReader?
    {
        guard let value = table[key] else { return nil }
        guard let inner = value.table else { throw wrongType(key, expected: expected, found: value) }
        return TableReader(table: inner, path: keyPath(key), source: source)
    }

    // MARK: - Describing values

    static func describe(_ value: TOMLValueConvertible) -> String {
        switch value.type {
        case .string: return "a string (\(quoted(shorten(value.string ?? ""))))"
        case .int: return "an integer (\(value.int.map(String.init) ?? "?"))"
        case .double: return "a floating-point number (\(value.double.map(format) ?? "?"))"
        case .bool: return "a boolean (\(value.bool.map(String.init) ?? "?"))"
        case .table: return "a table"
        case .array: return "an array"
        case .date: return "a date"
        case .time: return "a time"
        case .dateTime: return "a date-time"
        }
    }

    static func format(_ number: Double) -> String {
        if number.isFinite, number == number.rounded(), abs(number) < 1e15 {
            return String(Int(number))
        }
        return String(number)
    }

    private static func shorten(_ text: String) -> String {
        text.count > 40 ? String(text.prefix(37)) + "..." : text
    }
}

/// Key path formatting and "did you mean" for unknown keys.
enum KeyPaths {
    static func join(_ path: String, _ key: String) -> String {
        let part = isBare(key) ? key : quoted(key)
        return path.isEmpty ? part : path + "." + part
    }

    static func index(_ path: String, _ index: Int) -> String { "\(path)[\(index)]" }

    static func isBare(_ key: String) -> Bool {
        !key.isEmpty
            && key.unicodeScalars.allSatisfy { scalar in
                switch scalar {
                case "a"..."z", "A"..."Z", "0"..."9", "_", "-": return true
                default: return false
                }
            }
    }

    /// The closest known key within an edit distance of 2 (or 1 for short keys).
    static func suggestion(for key: String, among known: [String]) -> String? {
        let lowered = key.lowercased()
        var best: (String, Int)?
        for candidate in known {
            let distance = editDistance(Array(lowered.unicodeScalars), Array(candidate.unicodeScalars))
            let allowed = candidate.count <= 4 ? 1 : 2
            if distance <= allowed, distance < (best?.1 ?? Int.max) { best = (candidate, distance) }
        }
        return best.map { $0.0 }
    }

    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
