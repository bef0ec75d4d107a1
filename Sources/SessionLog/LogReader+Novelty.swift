import GRDB
import GRDBSQLite
import TrainingEngine

/// What the registry says of a sample, as the confound figures group it.
public struct SampleRegistryDetails: Sendable {
    var kind: SampleKind
    var source: String?
    var collection: String?
    var processing: String?

    public init(kind: SampleKind, source: String?, collection: String?, processing: String?) {
        self.kind = kind
        self.source = source
        self.collection = collection
        self.processing = processing
    }
}

extension LogReader {
    /// Every sample of the registry by id.
    static func sampleRegistryDetails(_ db: Database) throws -> [String: SampleRegistryDetails] {
        var details: [String: SampleRegistryDetails] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT id, kind, source, collection, processing FROM sample") {
            details[row[0]] = SampleRegistryDetails(
                kind: SampleKind(rawValue: row[1]) ?? .blank, source: row[2], collection: row[3], processing: row[4])
        }
        return details
    }
}
