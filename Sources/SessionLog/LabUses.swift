import Figures
import Foundation
import GRDB

// The lab's counts of samples' uses on its other stations (Schema+LabUses.swift): written by
// lineupd when lineup-sync pulls them, read where the station checks a sample's limits.

/// A sample's uses on the lab's other stations, as the latest row of the log says them.
public struct LabUsesElsewhere: Sendable, Hashable, Codable {
    public var uses: Int
    /// When the lab store counted them (its clock), ns since 1970.
    public var asOfWallNs: Int64

    public init(uses: Int, asOfWallNs: Int64) {
        self.uses = uses
        self.asOfWallNs = asOfWallNs
    }
}

/// A sample's uses on the lab's other stations for `samples show`: in all, and with each
/// dog of this log (by name) that met it there, each as of the pull that last changed it.
public struct SampleLabUses: Sendable, Hashable, Codable {
    public var usesElsewhere: Int
    public var asOf: String
    public var dogs: [SampleLabDogUses]

    public init(usesElsewhere: Int, asOf: String, dogs: [SampleLabDogUses]) {
        self.usesElsewhere = usesElsewhere
        self.asOf = asOf
        self.dogs = dogs
    }
}

public struct SampleLabDogUses: Sendable, Hashable, Codable {
    public var dog: String
    public var usesElsewhere: Int
    public var asOf: String

    public init(dog: String, usesElsewhere: Int, asOf: String) {
        self.dog = dog
        self.usesElsewhere = usesElsewhere
        self.asOf = asOf
    }
}

/// What one pull says of one sample: its uses elsewhere in all, and the trials there with
/// each of this station's dogs (by id) that met it; a dog left out met it nowhere else.
public struct LabSampleUsesPulled: Sendable, Hashable {
    public var sampleId: String
    public var uses: Int
    public var dogs: [String: Int]

    public init(sampleId: String, uses: Int, dogs: [String: Int] = [:]) {
        self.sampleId = sampleId
        self.uses = uses
        self.dogs = dogs
    }
}

/// One row of `lab_sample_uses`.
struct LabSampleUsesRow: Encodable, PersistableRecord {
    static let databaseTableName = "lab_sample_uses"
    var id: String
    var sampleId: String
    var dogId: String?
    var uses: Int
    var asOfWallNs: Int64
    var monoNs: Int64
    var wallNs: Int64

    enum CodingKeys: String, CodingKey {
        case id, uses
        case sampleId = "sample_id"
        case dogId = "dog_id"
        case asOfWallNs = "as_of_wall_ns"
        case monoNs = "mono_ns"
        case wallNs = "wall_ns"
    }
}

extension SessionLog {
    /// Logs what a pull says, in one transaction, where it differs from the latest row of
    /// that sample (and dog); a count with no row yet stands at 0, so a 0 writes nothing.
    /// Returns the rows written and the counts the log said already. A sample or dog the log
    /// does not hold is refused before anything is written.
    public func logLabUses(_ pulled: [LabSampleUsesPulled], asOfWallNs: Int64, time: LogTime = .now()) throws -> (
        written: Int, unchanged: Int
    ) {
        var written = 0
        var unchanged = 0
        try writeChecked { db in
            for sample in pulled {
                guard
                    try Bool.fetchOne(
                        db, sql: "SELECT EXISTS (SELECT 1 FROM sample WHERE id = ?)", arguments: [sample.sampleId])
                        == true
                else {
                    throw SessionLogError.unknownSample(sample.sampleId)
                }
                for dog in sample.dogs.keys {
                    guard
                        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM dog WHERE id = ?)", arguments: [dog])
                            == true
                    else {
                        throw SessionLogError.unknownDog(dog)
                    }
                }
            }
            for sample in pulled {
                var latest: [String?: Int] = [:]
                for row in try Row.fetchAll(
                    db, sql: LogReader.latestLabUsesSQL(where: "l.sample_id = ?"), arguments: [sample.sampleId])
                {
                    latest[row["dog_id"] as String?] = row["uses"]
                }
                var said: [String?: Int] = [nil: sample.uses]
                for (dog, trials) in sample.dogs { said[dog] = trials }
                // Every count the log or the pull names; sorted, so rows go in in one order.
                let keys = Set(latest.keys).union(said.keys).sorted { ($0 ?? "") < ($1 ?? "") }
                for key in keys {
                    let now = said[key] ?? 0
                    if now == latest[key] ?? 0 {
                        unchanged += 1
                        continue
                    }
                    try LabSampleUsesRow(
                        id: UUID.timeOrdered(wallNs: time.wallNs).logText, sampleId: sample.sampleId, dogId: key,
                        uses: now, asOfWallNs: asOfWallNs, monoNs: time.monoNs, wallNs: time.wallNs
                    ).insert(db)
                    written += 1
                }
            }
        }
        return (written, unchanged)
    }
}

extension LogReader {
    /// The latest row of each sample and dog (`dog_id` NULL: all dogs), narrowed by `condition`.
    static func latestLabUsesSQL(where condition: String) -> String {
        """
        SELECT l.sample_id, l.dog_id, l.uses, l.as_of_wall_ns FROM lab_sample_uses l
        WHERE (\(condition)) AND l.rowid = (
            SELECT max(m.rowid) FROM lab_sample_uses m WHERE m.sample_id = l.sample_id AND m.dog_id IS l.dog_id)
        """
    }

    /// Each sample's uses on the lab's other stations in all, by sample id, as last pulled;
    /// a sample never pulled is absent.
    public func labUsesElsewhere() throws -> [String: LabUsesElsewhere] {
        try latestLabUses(where: "l.dog_id IS NULL", arguments: [])
    }

    /// The trials with this dog (its id here) on the lab's other stations, by sample id, as
    /// last pulled; a sample never pulled for the dog is absent.
    public func labUsesElsewhere(dog: String) throws -> [String: LabUsesElsewhere] {
        try latestLabUses(where: "l.dog_id = ?", arguments: [dog.lowercased()])
    }

    /// One sample's uses elsewhere in all (nil: never pulled) and with each dog, by dog id.
    public func labUsesElsewhere(sample: String) throws -> (total: LabUsesElsewhere?, dogs: [String: LabUsesElsewhere])
    {
        try read { db in
            var total: LabUsesElsewhere?
            var dogs: [String: LabUsesElsewhere] = [:]
            for row in try Row.fetchAll(db, sql: Self.latestLabUsesSQL(where: "l.sample_id = ?"), arguments: [sample]) {
                let uses = LabUsesElsewhere(uses: row["uses"], asOfWallNs: row["as_of_wall_ns"])
                if let dog: String = row["dog_id"] { dogs[dog] = uses } else { total = uses }
            }
            return (total, dogs)
        }
    }

    private func latestLabUses(where condition: String, arguments: StatementArguments) throws -> [String:
        LabUsesElsewhere]
    {
        try read { db in
            var out: [String: LabUsesElsewhere] = [:]
            for row in try Row.fetchAll(db, sql: Self.latestLabUsesSQL(where: condition), arguments: arguments) {
                out[row["sample_id"]] = LabUsesElsewhere(uses: row["uses"], asOfWallNs: row["as_of_wall_ns"])
            }
            return out
        }
    }

    /// One sample's uses on the lab's other stations for `samples show`, nil when none was
    /// ever pulled; dogs by name, those with none there left out.
    public func sampleLabUses(sample: String) throws -> SampleLabUses? {
        let (total, byDog) = try labUsesElsewhere(sample: sample)
        guard let total else { return nil }
        var iso = ISOTimeFormatter()
        let names = Dictionary(try dogs().map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        let dogs = byDog.filter { $0.value.uses > 0 }.map {
            SampleLabDogUses(
                dog: names[$0.key] ?? $0.key, usesElsewhere: $0.value.uses,
                asOf: iso.string(wallNs: $0.value.asOfWallNs))
        }.sorted { $0.dog < $1.dog }
        return SampleLabUses(usesElsewhere: total.uses, asOf: iso.string(wallNs: total.asOfWallNs), dogs: dogs)
    }

    /// The log's identity: the station's id in the lab store.
    public func logIdentity() throws -> String? {
        try read { db in try String.fetchOne(db, sql: "SELECT id FROM log_identity") }
    }
}
