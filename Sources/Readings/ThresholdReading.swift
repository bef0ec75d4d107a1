import Figures
import ReadingRows
import TrainingEngine

/// `stats --threshold`: the trials a filter selects whose target is a rung of a dilution ladder,
/// per dog, grouping and stock, counted and fitted by `ThresholdCounter` (docs/figures.md, "How
/// little the dog can smell"), with each staircase's state per trial for the reversal estimate.
public struct ThresholdReading: Reading {
    public static let name = ReadingName.threshold
    public var grouping: ThresholdGrouping
    public var filter: LogFilter

    public init(by grouping: ThresholdGrouping, _ filter: LogFilter = LogFilter()) {
        self.grouping = grouping
        self.filter = filter
    }

    public func read<Source: RowSource>(from source: Source) throws -> [ThresholdRow] {
        try source.readRows { rows in
            var counter = ThresholdCounter(samples: try ThresholdInputs.samples(&rows), grouping: grouping)
            let conditions = try ThresholdInputs.conditions(&rows)
            try ThresholdInputs.addProcedures(&rows, filter, to: &counter)
            try TrialScan.scan(&rows, filter, samples: true) { trial, context in
                counter.add(trial, context: context, conditions: conditions[context.sessionId])
            }
            return counter.rows()
        }
    }
}

extension RowSource {
    /// `stats --threshold` on this log or store: `ThresholdReading`.
    public func thresholdStats(by grouping: ThresholdGrouping, _ filter: LogFilter = LogFilter()) throws
        -> [ThresholdRow]
    {
        try ThresholdReading(by: grouping, filter).read(from: self)
    }
}

/// What `ThresholdCounter` reads besides the trials: every sample with what it was diluted from,
/// each session's conditions in words, each staircase's state per trial. The report's threshold
/// figures read the same.
enum ThresholdInputs {
    /// Every sample by id, with what it was diluted from.
    static func samples<Scanner: RowScanner>(_ rows: inout Scanner) throws -> [String: ThresholdSample] {
        var samples: [String: ThresholdSample] = [:]
        try rows.scan(
            "SELECT id, label, stock_id, dilution_factor, concentration, concentration_unit FROM \(table: "sample")", []
        ) { row in
            samples[try row.text(0) ?? ""] = ThresholdSample(
                label: try row.text(1) ?? "", stockId: try row.text(2), factor: try row.double(3),
                concentration: try row.double(4), unit: try row.text(5))
        }
        return samples
    }

    /// Each session's conditions as `session show` words them, for the sessions that have any.
    static func conditions<Scanner: RowScanner>(_ rows: inout Scanner) throws -> [String: String] {
        var conditions: [String: String] = [:]
        try rows.scan(
            """
            SELECT id, temperature_c, humidity_pct, conditions FROM \(table: "session")
            WHERE temperature_c IS NOT NULL OR humidity_pct IS NOT NULL OR conditions IS NOT NULL
            """, []
        ) { row in
            conditions[try row.text(0) ?? ""] =
                SessionConditions(
                    temperatureC: try row.double(1), humidityPercent: try row.double(2), text: try row.text(3)
                )
                .description
        }
        return conditions
    }

    /// The staircase's state of each trial the filter selects (`trial_procedure`: a log's schema
    /// v13, the store's migration v11), by the trials' own conditions; a log older than the
    /// table has none.
    static func addProcedures<Scanner: RowScanner>(
        _ rows: inout Scanner, _ filter: LogFilter, to counter: inout ThresholdCounter
    ) throws {
        guard try rows.hasTable("trial_procedure") else { return }
        try rows.scan(
            """
            SELECT p.session_id, p.trial_number, p.procedure, p.sample_id, p.reversal
            FROM \(table: "trial_procedure") p JOIN \(table: "session") s ON s.id = p.session_id
                JOIN \(table: "trial_current") t ON t.session_id = p.session_id AND t.number = p.trial_number
            WHERE \(LogFilter.trialCondition)
            """, filter.readingBinds
        ) { row in
            counter.addProcedure(
                sessionId: try row.text(0) ?? "",
                ThresholdProcedureTrial(
                    trialNumber: Int(try row.integer(1) ?? 0), procedure: try row.text(2) ?? "",
                    sampleId: try row.text(3), reversal: (try row.integer(4) ?? 0) != 0))
        }
    }
}
