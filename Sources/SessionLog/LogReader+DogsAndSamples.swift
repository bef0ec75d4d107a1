import Figures
import Foundation
import GRDB
import TrainingEngine

extension LogReader {
    // MARK: Dogs and samples

    public func dogs() throws -> [DogSummary] {
        try read { db in
            var iso = ISOTimeFormatter()
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT d.id, d.name, d.born, \(Self.currentDogNotes) AS notes, d.wall_ns,
                        (SELECT count(*) FROM session s WHERE s.dog_id = d.id) AS sessions,
                        (SELECT count(*) FROM trial_current t JOIN session s ON s.id = t.session_id
                         WHERE s.dog_id = d.id) AS trials,
                        (SELECT max(s.wall_ns) FROM session s WHERE s.dog_id = d.id) AS last
                    FROM dog d ORDER BY d.name COLLATE NOCASE, d.wall_ns
                    """
            ).map { row in
                DogSummary(
                    id: row["id"], name: row["name"], born: row["born"], notes: row["notes"],
                    added: iso.string(wallNs: row["wall_ns"]), sessions: row["sessions"],
                    trials: row["trials"],
                    lastSession: (row["last"] as Int64?).map { iso.string(wallNs: $0) })
            }
        }
    }

    /// A dog's notes as they stand: the latest `dog_note`, else those it was added with.
    static let currentDogNotes = """
        coalesce((SELECT n.text FROM dog_note n WHERE n.dog_id = d.id ORDER BY n.wall_ns DESC, n.mono_ns DESC LIMIT 1),
            d.notes)
        """

    /// A dog's notes, oldest first: those it was added with (dated when it was added), then each
    /// later one. The last is its current notes.
    public func dogNotes(dogId: String) throws -> [NoteLine] {
        try read { db in
            var iso = ISOTimeFormatter()
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT notes AS text, wall_ns, mono_ns FROM dog WHERE id = ?1 AND notes IS NOT NULL
                    UNION ALL SELECT text, wall_ns, mono_ns FROM dog_note WHERE dog_id = ?1
                    ORDER BY wall_ns, mono_ns
                    """, arguments: [dogId]
            ).map { NoteLine(time: iso.string(wallNs: $0["wall_ns"]), text: $0["text"]) }
        }
    }

    public func samples(kind: SampleKind? = nil) throws -> [SampleSummary] {
        try read { db in
            var iso = ISOTimeFormatter()
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT s.*, u.uses, \(Self.stockLabel) AS stock_label,
                        (SELECT count(*) FROM sample_note n WHERE n.sample_id = s.id) AS notes
                    FROM sample s JOIN sample_usage u ON u.sample_id = s.id
                    WHERE ?1 IS NULL OR s.kind = ?1
                    ORDER BY s.label
                    """, arguments: [kind?.rawValue]
            ).map { try Self.sampleSummary($0, &iso) }
        }
    }

    static func sampleSummary(_ row: Row, _ iso: inout ISOTimeFormatter) throws -> SampleSummary {
        SampleSummary(
            id: row["id"], label: row["label"], kind: try row.word("kind", of: "sample", row: row["id"]),
            facts: SampleFacts(row), added: iso.string(wallNs: row["wall_ns"]),
            uses: row["uses"],
            notes: row["notes"], maxUses: row["max_uses"], maxUsesPerDog: row["max_uses_per_dog"],
            dilution: (row["stock_id"] as String?).map { stockId in
                DilutionSummary(
                    stock: row["stock_label"] ?? stockId, stockId: stockId, factor: row["dilution_factor"],
                    concentration: row["concentration"], concentrationUnit: row["concentration_unit"],
                    diluent: row["diluent"], madeOn: row["made_on"], madeBy: row["made_by"])
            })
    }

    /// The label of the stock a sample `s` was diluted from (NULL: not a dilution).
    static let stockLabel = "(SELECT st.label FROM sample st WHERE st.id = s.stock_id)"

    public func sample(id: String) throws -> SampleDetails {
        try read { db in
            var iso = ISOTimeFormatter()
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT s.*, u.uses, \(Self.stockLabel) AS stock_label,
                            (SELECT count(*) FROM sample_note n WHERE n.sample_id = s.id) AS notes
                        FROM sample s JOIN sample_usage u ON u.sample_id = s.id WHERE s.id = ?
                        """, arguments: [id])
            else { throw SessionLogError.unknownSample(id) }
            let notes = try Row.fetchAll(
                db,
                sql: "SELECT text, wall_ns FROM sample_note WHERE sample_id = ? ORDER BY wall_ns, mono_ns",
                arguments: [id]
            ).map { NoteLine(time: iso.string(wallNs: $0["wall_ns"]), text: $0["text"]) }
            // Uses per dog are the dog's exposure (LogReader+Exposure.swift), the one count.
            let dogs = try Row.fetchAll(
                db,
                sql: """
                    SELECT d.name, e.exposure AS uses, e.last_wall_ns AS last
                    FROM (\(Self.exposureSQL(where: "ts.sample_id = ?"))) e
                    JOIN dog d ON d.id = e.dog_id ORDER BY d.name
                    """, arguments: [id]
            ).map {
                SampleUse(dog: $0["name"], uses: $0["uses"], lastUsed: iso.string(wallNs: $0["last"]))
            }
            return SampleDetails(sample: try Self.sampleSummary(row, &iso), notes: notes, usedBy: dogs)
        }
    }
}
