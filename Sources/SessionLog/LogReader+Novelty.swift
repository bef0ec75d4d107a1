import Figures
import GRDB
import GRDBSQLite
import TrainingEngine

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

extension LogReader {
    /// Per dog (by name), sensitivity and specificity on familiar and on novel samples of the
    /// trials `filter` chooses; novelty counts every trial of the log before them.
    public func familiarNovelStats(_ filter: LogFilter = LogFilter()) throws -> [FamiliarNovelRow] {
        try read { db in
            // The report's ordered pass (the same query, order and decoder): every trial of the
            // chosen dog, or of every dog, counts toward exposure; the filter's are counted.
            var counter = FamiliarNovelCounter()
            try Self.scanReportTrials(db, filter) { trial, dogId, dog, _, inScope, _ in
                counter.add(trial, dogId: dogId, dog: dog, inScope: inScope)
            }
            return counter.rows
        }
    }
}

extension LogReader {
    /// Per dog (by name) and detail (source, collection, processing), the figures by the
    /// detail's values and the confound flag, over the trials `filter` chooses. A detail no
    /// sample of the dog's trials records is left out.
    public func confoundStats(_ filter: LogFilter = LogFilter()) throws -> [ConfoundRow] {
        try read { db in try Self.confoundStats(db, filter) }
    }

    static func confoundStats(_ db: Database, _ filter: LogFilter) throws -> [ConfoundRow] {
        var counter = ConfoundCounter()
        try Self.scanTrials(db, filter, samples: true) { trial, context in
            counter.add(trial, dogId: context.dogId, dog: context.dog)
        }
        return try counter.rows(db)
    }
}

extension ConfoundCounter {
    /// Per dog (by name) and detail, sorted; a detail no sample of the dog's trials records is
    /// left out.
    func rows(_ db: Database) throws -> [ConfoundRow] {
        rows(details: try LogReader.sampleRegistryDetails(db))
    }
}
