import Figures
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
            return try FilterRules.chooseDogByName(text, matches: byName)
        }
    }

    /// A session by full id or unique id prefix. A double-blind session still running is
    /// refused as withheld (`LiveDoubleBlind`), not as unknown: it is there, and readable once it ends.
    public func resolveSession(_ text: String) throws -> String {
        try read { db in
            guard let id = try Self.resolve(db, table: "main.session", text: text, kind: "session") else {
                throw SessionLogError.unknownSession(text)
            }
            try LiveDoubleBlind.refuse(db, session: id)
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
            return try FilterRules.checkProgram(name, known: known, in: "the log")
        }
    }

    /// A handler by the pseudonymous code sessions were logged with.
    public func resolveHandler(_ code: String) throws -> String {
        try read { db in
            let known = try String.fetchAll(db, sql: "SELECT code FROM handler ORDER BY code")
            return try FilterRules.checkHandler(code, known: known, in: "the log")
        }
    }

    /// `PHASE/STEP` (as `session start --step` takes it) or a whole `PHASE`, checked against the
    /// steps sessions were logged with.
    public func resolveStep(_ text: String) throws -> (phase: String, step: String?) {
        _ = try FilterRules.stepWords(text)
        return try read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT DISTINCT phase, step FROM session WHERE phase IS NOT NULL ORDER BY phase, step
                    """)
            let known = rows.map { row in (phase: row["phase"] as String, step: row["step"] as String?) }
            return try FilterRules.checkStep(text, known: known, in: "the log")
        }
    }

    /// The stations of a trial's lineup, by their names (`StationNames`: the board's as the
    /// session logged them, else the default) and the numbers the log keeps (the board's
    /// station, from 1), in the order of the trial's layout.
    public func stationNames(trial text: String) throws -> [StationName] {
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
            let numbers = layout.split(separator: ";").compactMap { Int($0.prefix { $0 != ":" }) }
            let names = StationNames(settings: row["settings"], numbers: numbers)
            return numbers.map { StationName(name: names.name($0), number: $0) }
        }
    }

    static func resolve(_ db: Database, table: String, text: String, kind: String) throws -> String? {
        let words = FilterRules.idWords(text)
        if try String.fetchOne(db, sql: "SELECT id FROM \(table) WHERE id = ?", arguments: [words.whole])
            != nil
        {
            return words.whole
        }
        guard let prefix = words.prefix else { return nil }
        let matches = try String.fetchAll(
            db, sql: "SELECT id FROM \(table) WHERE id >= ? AND id < ? LIMIT 2",
            arguments: [prefix, prefix + "~"])
        return try FilterRules.chooseByPrefix(text, matches: matches, kind: kind)
    }
}
