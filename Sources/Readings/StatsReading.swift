import Figures
import ReadingRows

/// `stats --by`: the trials a filter selects, grouped by `StatsGrouper`, counted by `Tally`.
public struct StatsReading: Reading {
    public static let name = ReadingName.stats
    public var grouping: StatsGrouping
    public var filter: LogFilter

    public init(by grouping: StatsGrouping, _ filter: LogFilter = LogFilter()) {
        self.grouping = grouping
        self.filter = filter
    }

    public func read<Source: RowSource>(from source: Source) throws -> [StatsRow] {
        try source.readRows { rows in
            var labels: [String: String] = [:]
            if grouping == .sample {
                try rows.scan("SELECT id, label FROM \(table: "sample")", []) { row in
                    labels[try row.text(0) ?? ""] = try row.text(1) ?? ""
                }
            }
            var grouper = StatsGrouper(by: grouping, sampleLabels: labels)
            try TrialScan.scan(&rows, filter, samples: grouper.needsSamples, settings: grouper.needsSettings) {
                trial, context in
                grouper.add(trial, context)
            }
            return grouper.rows()
        }
    }
}

extension RowSource {
    /// `stats --by` on this log or store: `StatsReading`.
    public func stats(by grouping: StatsGrouping, _ filter: LogFilter = LogFilter()) throws -> [StatsRow] {
        try StatsReading(by: grouping, filter).read(from: self)
    }
}
