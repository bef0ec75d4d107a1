import Figures
import GRDB

extension LogReader {
    /// `stats --threshold`: the trials `filter` chooses whose target is a rung of a dilution
    /// ladder, per dog, `grouping` and stock, counted and fitted by `ThresholdCounter`
    /// (docs/figures.md, "How little the dog can smell").
    public func thresholdStats(by grouping: ThresholdGrouping, _ filter: LogFilter = LogFilter()) throws
        -> [ThresholdRow]
    {
        try read { db in
            var counter = ThresholdCounter(samples: try Self.thresholdSamples(db), grouping: grouping)
            let conditions = try Self.sessionConditions(db)
            try Self.scanTrials(db, filter, samples: true) { trial, context in
                counter.add(trial, context: context, conditions: conditions[context.sessionId])
            }
            return counter.rows()
        }
    }

    /// Every sample by id, with what it was diluted from.
    static func thresholdSamples(_ db: Database) throws -> [String: ThresholdSample] {
        var samples: [String: ThresholdSample] = [:]
        for row in try Row.fetchAll(
            db, sql: "SELECT id, label, stock_id, dilution_factor, concentration, concentration_unit FROM sample")
        {
            samples[row[0]] = ThresholdSample(
                label: row[1], stockId: row[2], factor: row[3], concentration: row[4], unit: row[5])
        }
        return samples
    }

    /// Each session's conditions as `session show` words them, for the sessions that have any.
    static func sessionConditions(_ db: Database) throws -> [String: String] {
        var result: [String: String] = [:]
        for row in try Row.fetchAll(
            db,
            sql: """
                SELECT id, temperature_c, humidity_pct, conditions FROM session
                WHERE temperature_c IS NOT NULL OR humidity_pct IS NOT NULL OR conditions IS NOT NULL
                """)
        {
            let recorded = SessionConditions(temperatureC: row[1], humidityPercent: row[2], text: row[3])
            result[row[0]] = recorded.description
        }
        return result
    }
}
