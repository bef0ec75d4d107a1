import Figures
import PostgresNIO
import SessionLog

extension LabReader {
    /// `stats --threshold` on the store: what `LogReader.thresholdStats` gives on the merged
    /// logs, counted and fitted by the same `ThresholdCounter` from the same trials.
    public func thresholdStats(by grouping: ThresholdGrouping, _ filter: LogFilter = LogFilter()) async throws
        -> [ThresholdRow]
    {
        let (samples, conditions) = try await thresholdInputs()
        var counter = ThresholdCounter(samples: samples, grouping: grouping)
        try await scanTrials(filter, samples: true) { trial, context in
            counter.add(trial, context: context, conditions: conditions[context.sessionId])
        }
        return counter.rows()
    }

    /// Every sample by id with what it was diluted from, and each session's conditions as
    /// `session show` words them: `ThresholdCounter`'s inputs, as `LogReader` reads them.
    func thresholdInputs() async throws -> (samples: [String: ThresholdSample], conditions: [String: String]) {
        var samples: [String: ThresholdSample] = [:]
        for row in try await store.rows(
            "SELECT id, label, stock_id, dilution_factor, concentration, concentration_unit FROM store.sample")
        {
            let (id, label, stock, factor, concentration, unit) = try row.decode(
                (String, String, String?, Double?, Double?, String?).self)
            samples[id] = ThresholdSample(
                label: label, stockId: stock, factor: factor, concentration: concentration, unit: unit)
        }
        var conditions: [String: String] = [:]
        for row in try await store.rows(
            """
            SELECT id, temperature_c, humidity_pct, conditions FROM store.session
            WHERE temperature_c IS NOT NULL OR humidity_pct IS NOT NULL OR conditions IS NOT NULL
            """)
        {
            let (id, temperature, humidity, text) = try row.decode((String, Double?, Double?, String?).self)
            conditions[id] =
                SessionConditions(temperatureC: temperature, humidityPercent: humidity, text: text).description
        }
        return (samples, conditions)
    }
}
