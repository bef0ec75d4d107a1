import Foundation
import GRDB
import TrainingEngine

// The registry's tables, each written through its GRDB record: dog, handler, sample,
// sample_note, dog_note, program.

/// A dog, the subject of training. Personal data of people stays out of the log.
public struct DogRecord: Sendable, Hashable, Codable {
    public var id: UUID
    public var name: String
    /// Date of birth as `YYYY-MM-DD`, if known.
    public var born: String?
    public var notes: String?
    public var time: LogTime

    public init(
        id: UUID = UUID(), name: String, born: String? = nil, notes: String? = nil,
        time: LogTime = .now()
    ) {
        self.id = id
        self.name = name
        self.born = born
        self.notes = notes
        self.time = time
    }
}

/// A handler, by a pseudonymous code only.
public struct HandlerRecord: Sendable, Hashable, Codable {
    public var id: UUID
    public var code: String
    public var time: LogTime

    public init(id: UUID = UUID(), code: String, time: LogTime = .now()) {
        self.id = id
        self.code = code
        self.time = time
    }
}

/// A physical scent sample and its research details.
public struct SampleRecord: Sendable, Hashable {
    public var id: UUID
    /// The unique id written on the sample, as the researcher searches for it.
    public var label: String
    public var kind: SampleKind
    /// Its research facts (diagnosis, source, collection, processing, collection date).
    public var facts: SampleFacts
    /// At most this many presentations in all; nil: the program's limit, if any.
    public var maxUses: Int?
    /// At most this many presentations to any one dog; nil: the program's limit, if any.
    public var maxUsesPerDog: Int?
    /// What it was diluted from and how, when it is a dilution of another sample.
    public var dilution: SampleDilution? = nil
    public var time: LogTime

    public init(
        id: UUID = UUID(), label: String, kind: SampleKind, facts: SampleFacts = SampleFacts(),
        maxUses: Int? = nil, maxUsesPerDog: Int? = nil, time: LogTime = .now()
    ) {
        self.maxUses = maxUses
        self.maxUsesPerDog = maxUsesPerDog
        self.id = id
        self.label = label
        self.kind = kind
        self.facts = facts
        self.time = time
    }
}

/// A comment on a sample; notes are appended, never edited.
public struct SampleNote: Sendable, Hashable, Codable {
    public var id: UUID
    public var sampleId: UUID
    public var text: String
    public var time: LogTime

    public init(id: UUID = UUID(), sampleId: UUID, text: String, time: LogTime = .now()) {
        self.id = id
        self.sampleId = sampleId
        self.text = text
        self.time = time
    }
}

/// A dog's notes as they stand from now on: a new row, never an edit, so the earlier notes
/// (and those the dog was added with) stay in the log.
public struct DogNote: Sendable, Hashable, Codable {
    public var id: UUID
    public var dogId: UUID
    public var text: String
    public var time: LogTime

    public init(id: UUID = UUID(), dogId: UUID, text: String, time: LogTime = .now()) {
        self.id = id
        self.dogId = dogId
        self.text = text
        self.time = time
    }
}

/// A training program as it was run: its full text and the SHA-256 of that text, so a
/// session can be tied to the exact program even after the file changes.
public struct ProgramRecord: Sendable, Hashable, Codable {
    public var id: UUID
    public var name: String
    public var content: String
    public var sha256: String
    public var time: LogTime

    public init(id: UUID = UUID(), name: String, content: String, time: LogTime = .now()) {
        self.id = id
        self.name = name
        self.content = content
        self.sha256 = SHA256Digest.hex(of: Array(content.utf8))
        self.time = time
    }
}

/// A row of `dog`.
struct DogRow: Encodable, PersistableRecord {
    static let databaseTableName = "dog"
    var id: String
    var name: String
    var born: String?
    var notes: String?
    var monoNs: Int64
    var wallNs: Int64

    enum CodingKeys: String, CodingKey {
        case id, name, born, notes
        case monoNs = "mono_ns"
        case wallNs = "wall_ns"
    }
}

extension DogRecord: AppendableRecord {
    public func append(to db: Database) throws {
        try DogRow(
            id: id.logText, name: name, born: born, notes: notes, monoNs: time.monoNs, wallNs: time.wallNs
        ).insert(db)
    }
}

/// A row of `handler`.
struct HandlerRow: Encodable, PersistableRecord {
    static let databaseTableName = "handler"
    var id: String
    var code: String
    var monoNs: Int64
    var wallNs: Int64

    enum CodingKeys: String, CodingKey {
        case id, code
        case monoNs = "mono_ns"
        case wallNs = "wall_ns"
    }
}

extension HandlerRecord: AppendableRecord {
    public func append(to db: Database) throws {
        try HandlerRow(id: id.logText, code: code, monoNs: time.monoNs, wallNs: time.wallNs).insert(db)
    }
}

/// A row of `sample`: the record's columns, its facts by their own column names.
struct SampleRow: PersistableRecord {
    static let databaseTableName = "sample"
    var sample: SampleRecord

    func encode(to container: inout PersistenceContainer) {
        container["id"] = sample.id.logText
        container["label"] = sample.label
        container["kind"] = sample.kind.rawValue
        for (column, value) in sample.facts.columns { container[column] = value }
        container["max_uses"] = sample.maxUses
        container["max_uses_per_dog"] = sample.maxUsesPerDog
        container["stock_id"] = sample.dilution?.stockId.logText
        container["dilution_factor"] = sample.dilution?.factor
        container["concentration"] = sample.dilution?.concentration
        container["concentration_unit"] = sample.dilution?.concentrationUnit
        container["diluent"] = sample.dilution?.diluent
        container["made_on"] = sample.dilution?.madeOn
        container["made_by"] = sample.dilution?.madeBy
        container["mono_ns"] = sample.time.monoNs
        container["wall_ns"] = sample.time.wallNs
    }
}

extension SampleRecord: AppendableRecord {
    public func append(to db: Database) throws { try SampleRow(sample: self).insert(db) }
}

/// A row of `sample_note`.
struct SampleNoteRow: Encodable, PersistableRecord {
    static let databaseTableName = "sample_note"
    var id: String
    var sampleId: String
    var text: String
    var monoNs: Int64
    var wallNs: Int64

    enum CodingKeys: String, CodingKey {
        case id, text
        case sampleId = "sample_id"
        case monoNs = "mono_ns"
        case wallNs = "wall_ns"
    }
}

extension SampleNote: AppendableRecord {
    public func append(to db: Database) throws {
        try SampleNoteRow(
            id: id.logText, sampleId: sampleId.logText, text: text, monoNs: time.monoNs, wallNs: time.wallNs
        ).insert(db)
    }
}

/// A row of `dog_note`.
struct DogNoteRow: Encodable, PersistableRecord {
    static let databaseTableName = "dog_note"
    var id: String
    var dogId: String
    var text: String
    var monoNs: Int64
    var wallNs: Int64

    enum CodingKeys: String, CodingKey {
        case id, text
        case dogId = "dog_id"
        case monoNs = "mono_ns"
        case wallNs = "wall_ns"
    }
}

extension DogNote: AppendableRecord {
    public func append(to db: Database) throws {
        try DogNoteRow(id: id.logText, dogId: dogId.logText, text: text, monoNs: time.monoNs, wallNs: time.wallNs)
            .insert(db)
    }
}

/// A row of `program`.
struct ProgramRow: Encodable, PersistableRecord {
    static let databaseTableName = "program"
    var id: String
    var name: String
    var content: String
    var sha256: String
    var monoNs: Int64
    var wallNs: Int64

    enum CodingKeys: String, CodingKey {
        case id, name, content, sha256
        case monoNs = "mono_ns"
        case wallNs = "wall_ns"
    }
}

extension ProgramRecord: AppendableRecord {
    /// A program already logged with the same hash is not logged twice. Looked up first rather
    /// than `INSERT OR IGNORE`, which would also swallow a clash of ids (a real error).
    public func append(to db: Database) throws {
        guard try ProgramRow.filter(Column("sha256") == sha256).isEmpty(db) else { return }
        try ProgramRow(
            id: id.logText, name: name, content: content, sha256: sha256, monoNs: time.monoNs, wallNs: time.wallNs
        ).insert(db)
    }
}
