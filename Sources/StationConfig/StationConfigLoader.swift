import TOMLKit

/// Reads and validates the station's configuration file (TOML). The only way to make a
/// `StationConfiguration` from a file: every refusal is a `StationConfigError` naming the file,
/// the key and what is wrong.
public enum StationConfigLoader {
    public static let maximumStations = 16
    /// A configuration file larger than this is refused unread.
    public static let maximumFileBytes = 1 << 20
    /// A click WAV file larger than this is refused unread.
    public static let maximumWAVBytes = 16 << 20
    /// A click WAV file longer than this is refused: it is not a click.
    public static let maximumClickSeconds = 2

    /// Reads `path` and parses it; a relative WAV path in `audio.click` is resolved against
    /// the file's own directory.
    public static func load(path: String) throws(StationConfigError) -> StationConfiguration {
        let bytes: [UInt8]
        switch FileBytes.read(path: path, limit: maximumFileBytes) {
        case .success(let read): bytes = read
        case .failure(let failure):
            throw StationConfigError(
                code: .unreadableFile, file: path, message: "cannot read the file: \(failure.reason)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            // TOML is UTF-8, comments too: name where the first byte that is not.
            let at = firstInvalidUTF8(bytes)
            throw StationConfigError(
                code: .unreadableFile, file: path, message: "cannot read the file: not UTF-8 text (TOML is UTF-8)",
                line: at.line, column: at.column)
        }
        return try parse(text: text, source: path, baseDirectory: directory(of: path))
    }

    /// The 1-based line and column (in bytes) of the first byte of `bytes` that is not part of
    /// well-formed UTF-8; the end of the text when every byte is.
    static func firstInvalidUTF8(_ bytes: [UInt8]) -> (line: Int, column: Int) {
        var line = 1
        var lineStart = 0
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                if encoded.count == 1 && encoded.first == UInt8(ascii: "\n") {
                    line += 1
                    lineStart = offset + 1
                }
                offset += encoded.count
            case .error:
                return (line, offset - lineStart + 1)
            case .emptyInput:
                return (line, offset - lineStart + 1)
            }
        }
    }

    /// Parses a configuration from text. `source` names it in messages; `baseDirectory`
    /// resolves a relative WAV path in `audio.click`.
    public static func parse(text: String, source: String, baseDirectory: String)
        throws(StationConfigError)
        -> StationConfiguration
    {
        let root = try tomlTable(text: text, source: source, kind: "a board file")
        var parser = Parser(source: source, baseDirectory: baseDirectory)
        return try parser.configuration(TableReader(table: root, path: "", source: source))
    }

    /// A TOML file's text as its table, or one `StationConfigError` naming the file, the line
    /// and the column: the one way every configuration file of the station (the board's,
    /// lineup-alerts') is read. `kind` names the file in the message ("a board file").
    public static func tomlTable(text: String, source: String, kind: String) throws(StationConfigError)
        -> TOMLTable
    {
        if let nul = text.utf8.firstIndex(of: 0) {
            let line = text.utf8[..<nul].reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
            throw StationConfigError(
                code: .syntax, file: source, message: "TOML syntax error: the text contains a NUL byte",
                line: line)
        }
        if let found = TOMLPrecheck.first(in: text) {
            // Before the parser, which would abort on it (TOMLPrecheck.swift says which).
            throw StationConfigError(
                code: .syntax, file: source, message: "TOML syntax error: " + found.problem(in: kind),
                line: found.line, column: found.column)
        }
        do {
            return try TOMLTable(string: text)
        } catch let parseError as TOMLParseError {
            throw StationConfigError(
                code: .syntax, file: source, message: "TOML syntax error: \(parseError.description)",
                line: parseError.source.begin.line, column: parseError.source.begin.column)
        } catch {
            throw StationConfigError(code: .syntax, file: source, message: "TOML syntax error: \(error)")
        }
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    static func resolve(_ path: String, against directory: String) -> String {
        if path.hasPrefix("/") || directory.isEmpty { return path }
        return directory.hasSuffix("/") ? directory + path : directory + "/" + path
    }
}
