/// The researcher's filter words (`--dog Rex`, `--session 3f2a`, `--program study`, `--handler
/// H1`, `--step phase-3/1`) resolved on any source, a station's log, a merged one or the lab
/// store, by one definition: the same word finds the same row everywhere, and a word a source
/// has nothing for is refused in the same words, naming the source (`RowScanner.place`).
public struct FilterWords<Source: RowSource> {
    public let source: Source

    public init(_ source: Source) { self.source = source }

    /// A dog by full id, unique id prefix or name (any case of ASCII letters). Two dogs of one
    /// name (two stations' "Rex" in the store) are two dogs: the name is refused, naming both.
    public func dog(_ text: String) throws -> String {
        try source.readRows { rows in
            if let id = try Self.id(&rows, text, table: "dog", kind: "dog") { return id }
            // SQLite's lower() folds ASCII only, PostgreSQL's every letter: `sameDogName` keeps
            // the names NOCASE would, on both.
            var matches: [String] = []
            try rows.scan("SELECT id, name FROM \(table: "dog") WHERE lower(name) = lower(\(text: 1))", [.text(text)]) {
                row in
                if FilterRules.sameDogName(try row.text(1) ?? "", text) { matches.append(try row.text(0) ?? "") }
            }
            return try FilterRules.chooseDogByName(text, matches: matches, in: rows.place)
        }
    }

    /// A session by full id or unique id prefix. One the source withholds (a running
    /// double-blind session on a log) is refused as withheld, not as unknown: it is there, and
    /// readable once it ends.
    public func session(_ text: String) throws -> String {
        try source.readRows { rows in
            guard let id = try Self.id(&rows, text, table: "session", kind: "session", everyRow: true) else {
                throw FilterWordError.unknown(kind: "session", text: text, place: rows.place)
            }
            try rows.refuseWithheld(session: id)
            return id
        }
    }

    /// A program by the name sessions recorded; an unknown name names those the source has.
    public func program(_ name: String) throws -> String {
        try source.readRows { rows in
            var known: [String] = []
            try rows.scan(
                """
                SELECT DISTINCT p.name FROM \(table: "session") s JOIN \(table: "program") p ON p.id = s.program_id
                """, []
            ) { row in known.append(try row.text(0) ?? "") }
            return try FilterRules.checkProgram(name, known: known.sorted(by: Self.byBytes), in: rows.place)
        }
    }

    /// A handler by the pseudonymous code sessions were recorded with (one code on two stations
    /// is one handler to the filter, in the store as in a merged log).
    public func handler(_ code: String) throws -> String {
        try source.readRows { rows in
            var known: [String] = []
            try rows.scan("SELECT DISTINCT code FROM \(table: "handler")", []) { row in
                known.append(try row.text(0) ?? "")
            }
            return try FilterRules.checkHandler(code, known: known.sorted(by: Self.byBytes), in: rows.place)
        }
    }

    /// `PHASE/STEP` (as `session start --step` takes it) or a whole `PHASE`, checked against the
    /// steps sessions were recorded with.
    public func step(_ text: String) throws -> (phase: String, step: String?) {
        _ = try FilterRules.stepWords(text)
        return try source.readRows { rows in
            var known: [(phase: String, step: String?)] = []
            try rows.scan("SELECT DISTINCT phase, step FROM \(table: "session") WHERE phase IS NOT NULL", []) { row in
                known.append((try row.text(0) ?? "", try row.text(1)))
            }
            // By phase, then step, each by its bytes, a phase's missing step first.
            known.sort { a, b in
                if a.phase != b.phase { return Self.byBytes(a.phase, b.phase) }
                guard let right = b.step else { return false }
                guard let left = a.step else { return true }
                return Self.byBytes(left, right)
            }
            return try FilterRules.checkStep(text, known: known, in: rows.place)
        }
    }

    /// Text in SQLite's default order, by its UTF-8 bytes, whatever the store's collation.
    static func byBytes(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    /// The whole id `text` is, or the one id it is a prefix of (`FilterRules.idWords`); nil when
    /// none. `everyRow`: among the rows the source withholds too.
    static func id<Scanner: RowScanner>(
        _ rows: inout Scanner, _ text: String, table: String, kind: String, everyRow: Bool = false
    ) throws -> String? {
        let words = FilterRules.idWords(text)
        let from: ReadingSQL = everyRow ? "\(everyRow: table)" : "\(table: table)"
        var exact = false
        try rows.scan("SELECT id FROM \(from) WHERE id = \(text: 1)", [.text(words.whole)]) { _ in exact = true }
        if exact { return words.whole }
        guard let prefix = words.prefix else { return nil }
        // An id is lowercase hex digits and dashes, all before "~": the range is the prefix's.
        var matches: [String] = []
        try rows.scan(
            "SELECT id FROM \(from) WHERE \(byBytes: "id") >= \(text: 1) AND \(byBytes: "id") < \(text: 2) LIMIT 2",
            [.text(prefix), .text(prefix + "~")]
        ) { row in matches.append(try row.text(0) ?? "") }
        return try FilterRules.chooseByPrefix(text, matches: matches, kind: kind)
    }
}
