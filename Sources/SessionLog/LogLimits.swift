import Figures
import GRDB

/// The ranges a number read from the log must fall in before it sizes anything (an array of
/// stations, an export's columns): a hostile or damaged row is one line naming its table and
/// row, never an allocation without bound.
public enum LogLimits {
    /// Station numbers: a board has at most 16 stations (StationConfig's `maximumStations`,
    /// the project's limit), numbered from 1, as the figures' decoder reads them.
    public static let stations = TrialRowDecoder.stations

    /// Refuses the log, in one line naming the row, when a `trial_station` row names a station
    /// outside `stations`. The export sizes its columns by the highest station and the report
    /// its tallies: one scan of the table before either.
    static func checkStations(_ db: Database) throws {
        guard
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT trial_id, station FROM trial_station
                    WHERE typeof(station) <> 'integer' OR station NOT BETWEEN ? AND ? LIMIT 1
                    """, arguments: [stations.lowerBound, stations.upperBound])
        else { return }
        // trial_station has no rowid: its key is (trial_id, station).
        let station = (row["station"] as DatabaseValue).description
        throw SessionLogError.badRow(
            table: "trial_station", row: "(trial \(row["trial_id"] as String? ?? "-"))",
            problem: "station \(station), outside \(stations.lowerBound) to \(stations.upperBound)")
    }

    /// The same for a trial's compact layout, which the figures parse.
    public static func badLayout(trial id: String) -> SessionLogError {
        .badRow(table: "trial", row: id, problem: TrialRowDecoder.layoutProblem)
    }
}
