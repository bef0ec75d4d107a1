import Figures
import Foundation
import GRDB
import ReadingRows
import TrainingEngine

extension LogReader {
    // MARK: Resolving what the researcher typed (a filter's words: `FilterWords`, ReadingRows)

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
        // Its refusal leaves the read as `SessionLogError` (`SessionLogError.from`).
        return try FilterRules.chooseByPrefix(text, matches: matches, kind: kind)
    }
}
