import Foundation
import StationConfig
import TOMLKit

/// One table of the alerts file with its key path, so each refusal names the whole key
/// (`webhook[1].format`) and what was found.
struct Keys {
    let table: TOMLTable
    let path: String
    let source: String
    /// The file's directory: a relative path is read from there (systemd hands every credential
    /// into one directory, so `connection = "lab-alerts.conf"` finds its neighbour).
    var base = "."

    func keyPath(_ key: String) -> String { path.isEmpty ? key : path + "." + key }

    func error(_ code: StationConfigError.Code, _ key: String?, _ message: String) -> StationConfigError {
        StationConfigError(code: code, file: source, keyPath: key.map(keyPath) ?? path, message: message)
    }

    func has(_ key: String) -> Bool { table[key] != nil }

    func only(_ known: [String]) throws(StationConfigError) {
        for key in table.keys.sorted() where !known.contains(key) {
            throw error(.unknownKey, key, "unknown key; expected one of: " + known.joined(separator: ", "))
        }
    }

    func wrongType(_ key: String, _ expected: String, _ found: TOMLValueConvertible) -> StationConfigError {
        let kind =
            switch found.type {
            case .string: "a string"
            case .int: "an integer"
            case .double: "a floating-point number"
            case .bool: "a boolean"
            case .table: "a table"
            case .array: "an array"
            default: "a date or time"
            }
        return error(.wrongType, key, "expected \(expected), found \(kind)")
    }

    func string(_ key: String) throws(StationConfigError) -> String? {
        guard let value = table[key] else { return nil }
        guard let text = value.string else { throw wrongType(key, "a string", value) }
        return text
    }

    /// A string that is not empty and holds no control character (it goes into mail headers).
    func text(_ key: String) throws(StationConfigError) -> String? {
        guard let text = try string(key) else { return nil }
        if text.trimmingCharacters(in: .whitespaces).isEmpty { throw error(.invalidValue, key, "must not be empty") }
        if text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw error(.invalidValue, key, "contains a control character")
        }
        return text
    }

    func path(_ key: String) throws(StationConfigError) -> String? {
        guard let text = try text(key) else { return nil }
        return text.hasPrefix("/") ? text : (base.hasSuffix("/") ? base : base + "/") + text
    }

    func bool(_ key: String) throws(StationConfigError) -> Bool? {
        guard let value = table[key] else { return nil }
        guard let flag = value.bool else { throw wrongType(key, "true or false", value) }
        return flag
    }

    func int(_ key: String, in range: ClosedRange<Int>) throws(StationConfigError) -> Int? {
        guard let value = table[key] else { return nil }
        guard let number = value.int else { throw wrongType(key, "an integer", value) }
        guard range.contains(number) else {
            throw error(
                .outOfRange, key, "\(number) is out of range; expected \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    func strings(_ key: String) throws(StationConfigError) -> [String] {
        guard let value = table[key] else { return [] }
        guard let array = value.array else { throw wrongType(key, "a string or an array of strings", value) }
        var out: [String] = []
        for index in 0..<array.count {
            guard let text = array[index].string else {
                throw error(.wrongType, "\(key)[\(index)]", "expected a string")
            }
            out.append(text)
        }
        return out
    }

    /// An address for SMTP's envelope and headers: `name@host`, nothing that could end a line or
    /// a command.
    func address(_ text: String, key: String) throws(StationConfigError) {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        let bad = text.unicodeScalars.contains { $0.value <= 0x20 || "<>(),;:\"[]\\".unicodeScalars.contains($0) }
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !bad else {
            throw error(.invalidValue, key, "\"\(text)\" is not an e-mail address (name@example.org)")
        }
    }

    /// An http or https URL with a host.
    func url(_ key: String) throws(StationConfigError) -> String? {
        guard let text = try text(key) else { return nil }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
            let host = url.host, !host.isEmpty
        else { throw error(.invalidValue, key, "\"\(text)\" is not an http:// or https:// URL") }
        return text
    }

    func table(_ key: String) throws(StationConfigError) -> Keys? {
        guard let value = table[key] else { return nil }
        guard let inner = value.table else { throw wrongType(key, "a table ([\(key)])", value) }
        return Keys(table: inner, path: keyPath(key), source: source, base: base)
    }

    /// `[[key]]`: each table with its index in the path.
    func tables(_ key: String) throws(StationConfigError) -> [Keys] {
        guard let value = table[key] else { return [] }
        guard let array = value.array else { throw wrongType(key, "tables ([[\(key)]])", value) }
        var out: [Keys] = []
        for index in 0..<array.count {
            guard let inner = array[index].table else {
                throw error(.wrongType, "\(key)[\(index)]", "expected a table ([[\(key)]])")
            }
            out.append(Keys(table: inner, path: "\(keyPath(key))[\(index)]", source: source, base: base))
        }
        return out
    }

    /// A duration as people write it: `"30s"`, `"10m"`, `"6h"`, `"2d"`; `"off"` (where `off`)
    /// turns the rule off (nil).
    func duration(_ key: String, min: Double, max: Double = 30 * 86400, off: Bool = false)
        throws(StationConfigError) -> Double?
    {
        guard let value = table[key] else { return nil }
        let form = "a duration such as \"30s\", \"10m\", \"6h\" or \"2d\"" + (off ? ", or \"off\"" : "")
        guard let text = value.string else { throw wrongType(key, form, value) }
        if off, text == "off" { return nil }
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        guard let unit = text.last, let factor = units[unit], let number = Double(text.dropLast()), number.isFinite,
            number >= 0
        else { throw error(.invalidValue, key, "\"\(text)\" is not \(form)") }
        let seconds = number * factor
        guard seconds >= min, seconds <= max else {
            throw error(
                .outOfRange, key,
                "\(text) is out of range; expected \(AlertText.duration(min)) to \(AlertText.duration(max))")
        }
        return seconds
    }
}
