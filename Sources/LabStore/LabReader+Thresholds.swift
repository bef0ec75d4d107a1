import Figures
import PostgresNIO
import ReadingRows
import SessionLog
import TrainingEngine

extension LabReader {
    // `stats --threshold` is `ThresholdReading` (Sources/Readings); these are the report's
    // inputs until the report is a reading too.

    /// The staircase's state per trial for the reversal estimate, as `LogReader` hands it over,
    /// when the store mirrors `trial_procedure` (lab migration v11); otherwise every group's
    /// estimate is withheld, said in words.
    func addThresholdProcedures(_ filter: LogFilter, to counter: inout ThresholdCounter) async throws {
        // to_regclass needs no privilege on the table, so any login learns it is missing.
        let present = try await store.rows("SELECT to_regclass('store.trial_procedure') IS NOT NULL").first?
            .decode(Bool.self)
        guard present == true else { return counter.withholdProcedures(ThresholdRow.procedureWithheldLabStore) }
        // The casts take the log's integer flags or booleans alike.
        for row in try await store.rows(
            PostgresQuery(
                unsafeSQL: """
                    SELECT p.session_id, p.trial_number::bigint, p.procedure, p.sample_id, p.reversal::int <> 0
                    FROM store.trial_procedure p JOIN store.session s ON s.id = p.session_id
                        JOIN store.trial_current t ON t.session_id = p.session_id AND t.number = p.trial_number
                    WHERE \(filter.labTrialCondition)
                    """, binds: filter.labBindings))
        {
            let (session, number, procedure, sample, reversal) = try row.decode(
                (String, Int64, String, String?, Bool).self)
            counter.addProcedure(
                sessionId: session,
                ThresholdProcedureTrial(
                    trialNumber: Int(number), procedure: procedure, sampleId: sample, reversal: reversal))
        }
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
