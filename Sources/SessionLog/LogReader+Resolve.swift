import Foundation
import GRDB
import TrainingEngine

extension LogReader {
    // MARK: Resolving what the researcher typed

    /// A dog by full id, unique id prefix (4+ characters) or name (any case).
    public func resolveDog(_ text: String) throws -> String {
        try read { db in
            if let id = try Self.resolve(db, table: "dog", text: text, kind: "dog") { return id }
            let byName = try String.fetchAll(
                db, sql: "SELECT id FROM dog WHERE name = ? COLLATE NOCASE", arguments: [text])
            if byName.count == 1 { return byName[0] }
            if byName.count > 1 { throw SessionLogError.ambiguousId(text, kind: "dog") }
            throw SessionLogError.unknownDog(text)
        }
    }

    /// A session by full id or unique id prefix.
    public func resolveSession(_ text: String) throws -> String {
        try read { db in
            guard let id = try Self.resolve(db, table: "session", text: text, kind: "session") else {
                throw SessionLogError.unknownSession(text)
            }
            return id
        }
    }

    /// A trial by full id or unique id prefix.
    public func resolveTrial(_ text: String) throws -> String {
        try read { db in
            guard let id = try Self.resolve(db, table: "trial", text: text, kind: "trial") else {
                throw SessionLogError.unknownTrial(text)
            }
            return id
        }
    }

    /// A sample by its label (as written on it), full id or unique id prefix.
    public func resolveSample(_ text: String) throws -> String {
        try read { db in
            if let id = try String.fetchOne(
                db, sql: "SELECT id FROM sample WHERE label = ?", arguments: [text])
            {
                return id
            }
            guard let id = try Self.resolve(db, table: "sample", text: text, kind: "sample") else {
                throw SessionLogError.unknownSample(text)
            }
            return id
        }
    }

    /// A program by its name, as sessions logged it; an unknown name names the ones the log has.
    public func resolveProgram(_ name: String) throws -> String {
        try read { db in
            let known = try String.fetchAll(
                db, sql: "SELECT DISTINCT p.name FROM session s JOIN program p ON p.id = s.program_id ORDER BY p.name")
            guard known.contains(name) else {
                throw SessionLogError.invalidInput(
                    "--program \(name): no session of a program so named in the log (\(Self.listing(known)))")
            }
            return name
        }
    }

    /// A handler by the pseudonymous code sessions were logged with.
    public func resolveHandler(_ code: String) throws -> String {
        try read { db in
            let known = try String.fetchAll(db, sql: "SELECT code FROM handler ORDER BY code")
            guard known.contains(code) else {
                throw SessionLogError.invalidInput(
                    "--handler \(code): no handler so coded in the log (\(Self.listing(known)))")
            }
            return code
        }
    }

    /// `PHASE/STEP` (as `session start --step` takes it) or a whole `PHASE`, checked against the
    /// steps sessions were logged with.
    public func resolveStep(_ text: String) throws -> (phase: String, step: String?) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard !parts[0].isEmpty, parts.count == 1 || !parts[1].isEmpty else {
            throw SessionLogError.invalidInput("--step \(text): give PHASE/STEP (discrimination/1) or a whole PHASE")
        }
        return try read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT DISTINCT phase, step FROM session WHERE phase IS NOT NULL ORDER BY phase, step
                    """)
            let known = rows.map { row -> String in
                let phase: String = row["phase"]
                return (row["step"] as String?).map { "\(phase)/\($0)" } ?? phase
            }
            let found = rows.contains { row in
                row["phase"] == parts[0] && (parts.count == 1 || (row["step"] as String?) == parts[1])
            }
            guard found else {
                throw SessionLogError.invalidInput(
                    "--step \(text): no session of that \(parts.count == 1 ? "phase" : "step") in the log (\(Self.listing(known)))"
                )
            }
            return (parts[0], parts.count == 2 ? parts[1] : nil)
        }
    }

    /// The stations of a trial's lineup, by the board's names for them (as its session logged
    /// them, `settings.stations`, in the order of the trial's layout) and the numbers the log
    /// keeps (the board's station, from 1); nil when the session logged no names (older logs,
    /// simulated blocks).
    public func stationNames(trial text: String) throws -> [StationName]? {
        let id = try resolveTrial(text)
        return try read { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql:
                        "SELECT t.layout, s.settings FROM trial t JOIN session s ON s.id = t.session_id WHERE t.id = ?",
                    arguments: [id])
            else { throw SessionLogError.unknownTrial(text) }
            let layout: String = row["layout"]
            let settings: String = row["settings"]
            guard let data = settings.data(using: .utf8),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let listed = object["stations"] as? String
            else { return nil }
            let names = listed.split(separator: ",").map(String.init)
            let numbers = layout.split(separator: ";").compactMap { Int($0.prefix { $0 != ":" }) }
            guard !names.isEmpty, names.count == numbers.count else { return nil }
            return zip(names, numbers).map { StationName(name: $0, number: $1) }
        }
    }

    /// `known: a, b, c` (at most 12 named), or `it has none`.
    static func listing(_ known: [String]) -> String {
        guard !known.isEmpty else { return "it has none" }
        let shown = known.prefix(12).joined(separator: ", ")
        return "known: " + shown + (known.count > 12 ? ", and \(known.count - 12) more" : "")
    }

    static func resolve(_ db: Database, table: String, text: String, kind: String) throws -> String? {
        let lowered = text.lowercased()
        if try String.fetchOne(db, sql: "SELECT id FROM \(table) WHERE id = ?", arguments: [lowered])
            != nil
        {
            return lowered
        }
        // Only hex digits and dashes can be an id prefix; anything else is not an id.
        guard lowered.count >= 4, lowered.allSatisfy({ $0.isHexDigit || $0 == "-" }) else { return nil }
        let matches = try String.fetchAll(
            db, sql: "SELECT id FROM \(table) WHERE id >= ? AND id < ? LIMIT 2",
            arguments: [lowered, lowered + "~"])
        if matches.count > 1 { throw SessionLogError.ambiguousId(text, kind: kind) }
        return matches.first
    }
}
