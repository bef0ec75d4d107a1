import Figures
import ReadingRows
import TrainingEngine

/// `stats --sources`: per dog (by name) and sample detail (source, collection, processing), the
/// figures by the detail's values and the confound flag over the trials a filter selects,
/// counted by `ConfoundCounter`; a detail no sample of the dog's trials records is left out.
public struct SourcesReading: Reading {
    public static let name = ReadingName.sources
    public var filter: LogFilter

    public init(_ filter: LogFilter = LogFilter()) { self.filter = filter }

    public func read<Source: RowSource>(from source: Source) throws -> [ConfoundRow] {
        try source.readRows { rows in
            var counter = ConfoundCounter()
            try TrialScan.scan(&rows, filter, samples: true) { trial, context in
                counter.add(trial, dogId: context.dogId, dog: context.dog)
            }
            var details: [String: SampleRegistryDetails] = [:]
            try rows.scan("SELECT id, kind, source, collection, processing FROM \(table: "sample")", []) { row in
                // A kind lineup does not know is a blank.
                details[try row.text(0) ?? ""] = SampleRegistryDetails(
                    kind: SampleKind(rawValue: try row.text(1) ?? "") ?? .blank,
                    facts: SampleFacts(
                        source: try row.text(2), collection: try row.text(3), processing: try row.text(4)))
            }
            return counter.rows(details: details)
        }
    }
}

extension RowSource {
    /// `stats --sources` on this log or store: `SourcesReading`.
    public func confoundStats(_ filter: LogFilter = LogFilter()) throws -> [ConfoundRow] {
        try SourcesReading(filter).read(from: self)
    }
}
