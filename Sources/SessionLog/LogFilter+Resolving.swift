import Foundation

/// What turns the researcher's words (`--dog Rex`, `--session 3f2a`, `--step phase-3/1`) into a
/// `LogFilter`: a station's or a merged log (`LogReader`), or the lab store. Each source looks
/// the candidates up its own way; what the words mean is `FilterRules`', shared by both.
public protocol FilterResolving {
    func resolveDog(_ text: String) throws -> String
    func resolveSession(_ text: String) throws -> String
    func resolveProgram(_ name: String) throws -> String
    func resolveHandler(_ code: String) throws -> String
    func resolveStep(_ text: String) throws -> (phase: String, step: String?)
}

extension LogReader: FilterResolving {}

/// The meaning of each filter word, decided from the candidates a source found, so a log and
/// the lab store resolve the same words to the same rows and refuse the same words alike.
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
        if matches.count > 1 { throw SessionLogError.ambiguousId(text, kind: kind) }
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
    public static func chooseDogByName(_ text: String, matches: [String]) throws -> String {
        if matches.count == 1 { return matches[0] }
        if matches.count > 1 { throw SessionLogError.ambiguousDogName(text, ids: matches.sorted()) }
        throw SessionLogError.unknownDog(text)
    }

    /// A program's name as sessions recorded it; `known` the names the source has, sorted.
    public static func checkProgram(_ name: String, known: [String], in place: String) throws -> String {
        guard known.contains(name) else {
            throw SessionLogError.invalidInput(
                "--program \(name): no session of a program so named in \(place) (\(listing(known)))")
        }
        return name
    }

    /// A handler's pseudonymous code; `known` the codes the source has, sorted.
    public static func checkHandler(_ code: String, known: [String], in place: String) throws -> String {
        guard known.contains(code) else {
            throw SessionLogError.invalidInput("--handler \(code): no handler so coded in \(place) (\(listing(known)))")
        }
        return code
    }

    /// `PHASE/STEP` or a whole `PHASE`, split; refused when it is neither.
    public static func stepWords(_ text: String) throws -> [String] {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard !parts[0].isEmpty, parts.count == 1 || !parts[1].isEmpty else {
            throw SessionLogError.invalidInput("--step \(text): give PHASE/STEP (discrimination/1) or a whole PHASE")
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
            throw SessionLogError.invalidInput(
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
