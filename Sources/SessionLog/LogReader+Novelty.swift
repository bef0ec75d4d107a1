import GRDB
import GRDBSQLite
import TrainingEngine

/// One trial of a dog (after corrections) with each of its samples' exposure before it.
struct ExposedTrial {
    var dogId: String
    var dog: String
    /// Whether the trial is among those the filter chose; every trial counts toward exposure.
    var inScope: Bool
    var trial: ScoredTrial
    /// Each station's sample (nil: a blank): the dog's exposure to it before this trial.
    var exposures: [Int?]
}

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
    /// Every trial of the chosen dog (or of every dog) in time order, with exposures counted
    /// over all of them by `Exposure` and `inScope` saying which the filter keeps: narrowing to
    /// a week must not make the week's first trial of an old sample novel. Streamed, as
    /// `scanTrials`: the report reads every trial of the log.
    static func scanExposedTrials(
        _ db: Database, _ filter: LogFilter, _ body: (ExposedTrial) throws -> Void
    ) throws {
        // The report's ordered pass (the same query, order and decoder), with exposure on top.
        var exposure = Exposure()
        try scanReportTrials(db, filter) { trial, dogId, dog, _, inScope in
            var next = exposure.meet(dogId: dogId, samples: trial.stations.compactMap(\.sample)).makeIterator()
            try body(
                ExposedTrial(
                    dogId: dogId, dog: dog, inScope: inScope, trial: trial,
                    exposures: trial.stations.map { $0.sample == nil ? nil : next.next() }))
        }
    }

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
