/// Why a configuration file was refused. One line for the operator: the file, where in it
/// (a key path such as `stations[2].line`, or a line and column for a TOML syntax error),
/// and what is wrong.
public struct StationConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The file could not be read (missing, permission denied, a directory, not UTF-8, too large).
        case unreadableFile
        /// The text is not valid TOML.
        case syntax
        /// A key the configuration does not know (a typo, or a key in the wrong table).
        case unknownKey
        /// A value of the wrong TOML type (a string where an integer belongs, ...).
        case wrongType
        /// A required key is absent (a station without a line, ...).
        case missingKey
        /// A value of the right type that means nothing here (an unknown bias, an empty name, ...).
        case invalidValue
        /// A number outside its allowed range, or too few or too many stations.
        case outOfRange
        /// The same GPIO line given to two users (stations, outputs, buttons, buzzer, jumper).
        case duplicateLine
        /// Two stations with the same name.
        case duplicateName
        /// The click's WAV file is unreadable or unusable.
        case invalidWAV
    }

    public var code: Code
    /// The configuration file (or the `source` given to `parse`).
    public var file: String
    /// Where in the file: `stations[2].line`, `audio.rate`; empty for the whole file.
    public var keyPath: String
    /// What is wrong, without the file or key path.
    public var message: String
    /// For a syntax error: the 1-based line and column toml++ reported.
    public var line: Int?
    public var column: Int?

    public init(
        code: Code, file: String, keyPath: String = "", message: String, line: Int? = nil,
        column: Int? = nil
    ) {
        self.code = code
        self.file = file
        self.keyPath = keyPath
        self.message = message
        self.line = line
        self.column = column
    }

    /// One line: `file:line:column: message`, `file: key.path: message` or `file: message`.
    public var description: String {
        var text = file
        if let line {
            text += ":\(line)"
            if let column { text += ":\(column)" }
        }
        if !keyPath.isEmpty { text += ": \(keyPath)" }
        text += ": \(message)"
        return Self.oneLine(text)
    }

    static func oneLine(_ text: String) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n", "\r", "\t": out.unicodeScalars.append(" ")
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}

/// `text` in double quotes with `"` and `\` escaped and control characters as `\u{..}`.
/// (TOMLKit redefines `String.debugDescription` as the bare string, so it cannot be used for this.)
func quoted(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\t": out += "\\t"
        case "\r": out += "\\r"
        default:
            if scalar.value < 0x20 || scalar.value == 0x7F {
                out += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out + "\""
}
