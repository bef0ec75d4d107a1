// TOMLKit's parser (toml++) assumes more than it checks: a table header's name starting with a
// key's character (`[/phases]`, `[\u{FFFD}phases]`) and a digit after a date's `T`
// (`1979-05-27T-inf:32:00Z`), both found by ProgramLoaderFuzzTests. On anything else a debug
// build aborts on its assertion and a release build has undefined behaviour. This refuses
// such a file in one line first, so no program or board file can bring down lineupd or
// lineupctl: a header must start with a key's character, neither kind of file has dates or
// times (so none reach the parser), and characters beyond ASCII go only where TOML 1.0 allows
// them, in quotes and comments.

/// What in a TOML text must not reach the parser, found before it does.
public struct TOMLPrecheck: Equatable, Sendable {
    public var line: Int
    public var column: Int
    public var scalar: Unicode.Scalar
    public var kind: Kind

    public enum Kind: Sendable { case header, dateOrTime, beyondASCII }

    /// The one line that says what is wrong and where; `document` names the kind of file
    /// ("a program file", "a board file").
    public func problem(in document: String) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        let shown = scalar.value > 0x20 && scalar.value < 0x7F ? "'\(Character(scalar))'" : code
        switch kind {
        case .header:
            return
                "line \(line), column \(column): a table's name cannot start with \(shown) (a name is letters, digits, - and _, or in quotes)"
        case .dateOrTime:
            return
                "line \(line), column \(column): \(shown) outside quotes makes a date or a time, which \(document) has none of (a text goes in quotes)"
        case .beyondASCII:
            return "line \(line), column \(column): the character \(code) may only be in quotes or a comment"
        }
    }

    public static func first(in text: String) -> TOMLPrecheck? {
        enum State { case plain, comment, basic, literal, multiBasic, multiLiteral }
        var state = State.plain
        let scalars = Array(text.unicodeScalars)
        var line = 1
        var column = 0
        var i = 0
        // Open brackets and braces of a value: a `[` at a line's start outside them is a header.
        var depth = 0
        var lineStart = true
        func isDigit(_ c: Unicode.Scalar) -> Bool { ("0"..."9").contains(c) }
        func starts(_ quote: Unicode.Scalar, times: Int) -> Bool {
            i + times <= scalars.count && scalars[i..<(i + times)].allSatisfy { $0 == quote }
        }
        while i < scalars.count {
            let c = scalars[i]
            column += 1
            if c == "\n" {
                line += 1
                column = 0
                lineStart = true
                if state != .multiBasic && state != .multiLiteral { state = .plain }
                i += 1
                continue
            }
            let atLineStart = lineStart
            if c != " " && c != "\t" { lineStart = false }
            switch state {
            case .plain:
                if c == "[" && atLineStart && depth == 0 {
                    // A header: `[` or `[[`, blanks, then a key's first character, a quote or `]`.
                    var j = i + 1
                    if j < scalars.count && scalars[j] == "[" { j += 1 }
                    while j < scalars.count && (scalars[j] == " " || scalars[j] == "\t") { j += 1 }
                    if j < scalars.count {
                        let k = scalars[j]
                        let keyStart =
                            ("a"..."z").contains(k) || ("A"..."Z").contains(k) || ("0"..."9").contains(k)
                            || k == "-" || k == "_" || k == "\"" || k == "'" || k == "]"
                        if !keyStart {
                            return TOMLPrecheck(line: line, column: column + j - i, scalar: k, kind: .header)
                        }
                    }
                    column += j - 1 - i
                    i = j - 1
                } else if c == "[" || c == "{" {
                    depth += 1
                } else if c == "]" || c == "}" {
                    depth = max(0, depth - 1)
                } else if c == "#" {
                    state = .comment
                } else if starts("\"", times: 3) {
                    state = .multiBasic
                    i += 2
                    column += 2
                } else if c == "\"" {
                    state = .basic
                } else if starts("'", times: 3) {
                    state = .multiLiteral
                    i += 2
                    column += 2
                } else if c == "'" {
                    state = .literal
                } else if c.value > 0x7F {
                    return TOMLPrecheck(line: line, column: column, scalar: c, kind: .beyondASCII)
                } else if c == ":"
                    || (c == "-" && i > 0 && isDigit(scalars[i - 1]) && i + 1 < scalars.count
                        && isDigit(scalars[i + 1]))
                {
                    // `07:32` or `1979-05`: no number of a program has either.
                    return TOMLPrecheck(line: line, column: column, scalar: c, kind: .dateOrTime)
                }
            case .comment: break
            case .basic, .multiBasic:
                if c == "\\" {
                    // The escaped character is the string's, whatever it is.
                    if i + 1 < scalars.count && scalars[i + 1] != "\n" {
                        i += 1
                        column += 1
                    }
                } else if state == .multiBasic && starts("\"", times: 3) {
                    state = .plain
                    i += 2
                    column += 2
                } else if state == .basic && c == "\"" {
                    state = .plain
                }
            case .literal: if c == "'" { state = .plain }
            case .multiLiteral:
                if starts("'", times: 3) {
                    state = .plain
                    i += 2
                    column += 2
                }
            }
            i += 1
        }
        return nil
    }
}
