/// A filter word the source cannot resolve, in one line naming the word and the source.
public enum FilterWordError: Error, Hashable, CustomStringConvertible {
    /// No dog or session so named (`kind`) in `place` (`RowScanner.place`).
    case unknown(kind: String, text: String, place: String)
    /// An id prefix that matches more than one.
    case ambiguousId(String, kind: String)
    /// A dog's name that two dogs bear (two stations' "Rex"), with their ids.
    case ambiguousDogName(String, ids: [String])
    /// A program, handler or step the source has no session of, or a step that is not one, said
    /// in full with the option, the word and what the source has.
    case notFound(String)

    public var description: String {
        switch self {
        case .unknown(let kind, let text, let place): "no \(kind) \"\(text)\" in \(place)"
        case .ambiguousId(let text, let kind): "\"\(text)\" matches more than one \(kind); give more of the id"
        case .ambiguousDogName(let name, let ids):
            "\"\(name)\" names \(ids.count) dogs (ids \(ids.joined(separator: ", "))): give the one meant by its id or an id prefix"
        case .notFound(let text): text
        }
    }
}

/// The meaning of each filter word, decided from the candidates a source found.
public enum FilterRules {
    /// What `text` can be as an id: the lowercased text as a whole id, and as a prefix when it
    /// could be one (4 or more hex digits and dashes; anything else is not an id).
    public static func idWords(_ text: String) -> (whole: String, prefix: String?) {
        let lowered = text.lowercased()
        let prefix = lowered.count >= 4 && lowered.allSatisfy({ $0.isHexDigit || $0 == "-" }) ? lowered : nil
        return (lowered, prefix)
    }

    /// The one id a prefix found (the source looks up at most two), nil when none.
    public static func chooseByPrefix(_ text: String, matches: [String], kind: String) throws -> String? {
        if matches.count > 1 { throw FilterWordError.ambiguousId(text, kind: kind) }
        return matches.first
    }

    /// SQLite's NOCASE: equal but for the case of ASCII letters (`Åsa` and `åsa` are two names).
    public static func sameDogName(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        func folded(_ c: UInt8) -> UInt8 { c >= 65 && c <= 90 ? c + 32 : c }
        return zip(x, y).allSatisfy { folded($0) == folded($1) }
    }

    /// A dog by name, from the dogs whose names `sameDogName` matches: two dogs so named are
    /// two dogs (two stations' "Rex"), and the name is refused, naming both.
    public static func chooseDogByName(_ text: String, matches: [String], in place: String) throws -> String {
        if matches.count == 1 { return matches[0] }
        if matches.count > 1 { throw FilterWordError.ambiguousDogName(text, ids: matches.sorted()) }
        throw FilterWordError.unknown(kind: "dog", text: text, place: place)
    }

    /// A program's name as sessions recorded it; `known` the names the source has, sorted.
    public static func checkProgram(_ name: String, known: [String], in place: String) throws -> String {
        guard known.contains(name) else {
            throw FilterWordError.notFound(
                "--program \(name): no session of a program so named in \(place) (\(listing(known)))")
        }
        return name
    }

    /// A handler's pseudonymous code; `known` the codes the source has, sorted.
    public static func checkHandler(_ code: String, known: [String], in place: String) throws -> String {
        guard known.contains(code) else {
            throw FilterWordError.notFound("--handler \(code): no handler so coded in \(place) (\(listing(known)))")
        }
        return code
    }

    /// `PHASE/STEP` or a whole `PHASE`, split; refused when it is neither.
    public static func stepWords(_ text: String) throws -> [String] {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard !parts[0].isEmpty, parts.count == 1 || !parts[1].isEmpty else {
            throw FilterWordError.notFound("--step \(text): give PHASE/STEP (discrimination/1) or a whole PHASE")
        }
        return parts
    }

    /// A step or phase checked against the distinct (phase, step) pairs sessions were logged
    /// with, sorted by phase then step.
    public static func checkStep(
        _ text: String, known: [(phase: String, step: String?)], in place: String
    ) throws -> (phase: String, step: String?) {
        let parts = try stepWords(text)
        let found = known.contains { $0.phase == parts[0] && (parts.count == 1 || $0.step == parts[1]) }
        guard found else {
            let names = known.map { pair in pair.step.map { "\(pair.phase)/\($0)" } ?? pair.phase }
            throw FilterWordError.notFound(
                "--step \(text): no session of that \(parts.count == 1 ? "phase" : "step") in \(place) (\(listing(names)))"
            )
        }
        return (parts[0], parts.count == 2 ? parts[1] : nil)
    }

    /// `known: a, b, c` (at most 12 named), or `it has none`.
    public static func listing(_ known: [String]) -> String {
        guard !known.isEmpty else { return "it has none" }
        let shown = known.prefix(12).joined(separator: ", ")
        return "known: " + shown + (known.count > 12 ? ", and \(known.count - 12) more" : "")
    }
}
