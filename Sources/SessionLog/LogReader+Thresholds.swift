import Figures
import GRDB
import ReadingRows
import TrainingEngine

extension LogReader {
    // `stats --threshold` is `ThresholdReading` (Sources/Readings); these are the report's
    // inputs until the report is a reading too.

    /// The staircase's state of each trial `filter` chooses (`trial_procedure`, schema v13),
    /// for the reversal estimate: the trials `scanTrials` reads, by the same conditions.
    static func addThresholdProcedures(_ db: Database, _ filter: LogFilter, to counter: inout ThresholdCounter) throws {
        guard try db.tableExists("trial_procedure") else { return }
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT p.session_id, p.trial_number, p.procedure, p.sample_id, p.reversal
                FROM trial_procedure p JOIN session s ON s.id = p.session_id
                    JOIN trial_current t ON t.session_id = p.session_id AND t.number = p.trial_number
                WHERE (?1 IS NULL OR s.dog_id = ?1) AND (?2 IS NULL OR s.id = ?2)
                    AND (?3 IS NULL OR t.wall_ns >= ?3) AND (?4 IS NULL OR t.wall_ns < ?4)
                    AND \(filter.sessionCondition(from: 5))
                """,
            arguments: StatementArguments(
                [
                    filter.dogId.databaseValue, filter.sessionId.databaseValue, filter.since.databaseValue,
                    filter.until.databaseValue,
                ] + filter.sessionArguments))
        while let row = try rows.next() {
            counter.addProcedure(
                sessionId: row[0],
                ThresholdProcedureTrial(
                    trialNumber: row[1], procedure: row[2], sampleId: row[3], reversal: (row[4] as Int) != 0))
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
