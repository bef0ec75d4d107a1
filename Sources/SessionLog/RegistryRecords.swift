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
public struct SampleRecord: Sendable, Hashable, Codable {
    public var id: UUID
    /// The unique id written on the sample, as the researcher searches for it.
    public var label: String
    public var kind: SampleKind
    public var diagnosis: String?
    public var source: String?
    /// How it was collected.
    public var collection: String?
    /// How it was processed and stored.
    public var processing: String?
    /// Collection date as `YYYY-MM-DD`.
    public var collectedOn: String?
    /// At most this many presentations in all; nil: the program's limit, if any.
    public var maxUses: Int?
    /// At most this many presentations to any one dog; nil: the program's limit, if any.
    public var maxUsesPerDog: Int?
    /// What it was diluted from and how, when it is a dilution of another sample.
    public var dilution: SampleDilution? = nil
    public var time: LogTime

    public init(
        id: UUID = UUID(), label: String, kind: SampleKind, diagnosis: String? = nil,
        source: String? = nil, collection: String? = nil, processing: String? = nil,
        collectedOn: String? = nil, maxUses: Int? = nil, maxUsesPerDog: Int? = nil, time: LogTime = .now()
    ) {
        self.maxUses = maxUses
        self.maxUsesPerDog = maxUsesPerDog
        self.id = id
        self.label = label
        self.kind = kind
        self.diagnosis = diagnosis
        self.source = source
        self.collection = collection
        self.processing = processing
        self.collectedOn = collectedOn
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

/// A row of `sample`.
struct SampleRow: Encodable, PersistableRecord {
    static let databaseTableName = "sample"
    var id: String
    var label: String
    var kind: String
    var diagnosis: String?
    var source: String?
    var collection: String?
    var processing: String?
    var collectedOn: String?
    var maxUses: Int?
    var maxUsesPerDog: Int?
    var stockId: String?
    var dilutionFactor: Double?
    var concentration: Double?
    var concentrationUnit: String?
    var diluent: String?
    var madeOn: String?
    var madeBy: String?
    var monoNs: Int64
    var wallNs: Int64

    enum CodingKeys: String, CodingKey {
        case id, label, kind, diagnosis, source, collection, processing, concentration, diluent
        case collectedOn = "collected_on"
        case maxUses = "max_uses"
        case maxUsesPerDog = "max_uses_per_dog"
        case stockId = "stock_id"
        case dilutionFactor = "dilution_factor"
        case concentrationUnit = "concentration_unit"
        case madeOn = "made_on"
        case madeBy = "made_by"
        case monoNs = "mono_ns"
        case wallNs = "wall_ns"
    }
}

extension SampleRecord: AppendableRecord {
    public func append(to db: Database) throws {
        try SampleRow(
            id: id.logText, label: label, kind: kind.rawValue, diagnosis: diagnosis, source: source,
            collection: collection, processing: processing, collectedOn: collectedOn, maxUses: maxUses,
            maxUsesPerDog: maxUsesPerDog, stockId: dilution?.stockId.logText, dilutionFactor: dilution?.factor,
            concentration: dilution?.concentration, concentrationUnit: dilution?.concentrationUnit,
            diluent: dilution?.diluent, madeOn: dilution?.madeOn, madeBy: dilution?.madeBy, monoNs: time.monoNs,
            wallNs: time.wallNs
        ).insert(db)
    }
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
