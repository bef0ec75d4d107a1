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
        let statement = try db.makeStatement(
            sql: """
                SELECT t.outcome, t.latency_ns, t.layout, t.seen, s.dog_id, d.name,
                    ((?2 IS NULL OR s.id = ?2) AND (?3 IS NULL OR t.wall_ns >= ?3) AND (?4 IS NULL OR t.wall_ns < ?4)
                        AND \(filter.sessionCondition(from: 5))) AS in_scope, t.id
                FROM trial_current t JOIN session s ON s.id = t.session_id JOIN dog d ON d.id = s.dog_id
                WHERE (?1 IS NULL OR s.dog_id = ?1)
                ORDER BY t.started_wall_ns, s.id, t.number
                """)
        try statement.setArguments(
            StatementArguments(
                [
                    filter.dogId.databaseValue, filter.sessionId.databaseValue, filter.since.databaseValue,
                    filter.until.databaseValue,
                ] + filter.sessionArguments))
        // Straight from SQLite's column accessors, as `scanTrials`: the report reads every trial.
        let sqlite = statement.sqliteStatement
        func text(_ column: Int32) -> String {
            guard let bytes = sqlite3_column_text(sqlite, column) else { return "" }
            return String(
                decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(sqlite, column))),
                as: UTF8.self)
        }
        var exposure = Exposure()
        var slots: [StationInLayout] = []
        var seen: [StationSeen] = []
        var dogId = ""
        var dog = ""
        while true {
            let rc = sqlite3_step(sqlite)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else {
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: rc), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
            }
            guard parseLayout(sqlite3_column_text(sqlite, 2), Int(sqlite3_column_bytes(sqlite, 2)), into: &slots)
            else { throw LogLimits.badLayout(trial: text(7)) }
            // As `scanTrials`: a trial without `seen` (before schema v3) has no station data.
            let hasSeen =
                sqlite3_column_type(sqlite, 3) != SQLITE_NULL
                && parseSeen(sqlite3_column_text(sqlite, 3), Int(sqlite3_column_bytes(sqlite, 3)), into: &seen)
                && seen.count == slots.count
            let trial = ScoredTrial(
                outcome: TrialOutcome(rawValue: text(0)) ?? .aborted,
                latencyNs: sqlite3_column_type(sqlite, 1) == SQLITE_NULL ? nil : sqlite3_column_int64(sqlite, 1),
                stations: slots.enumerated().map { index, slot in
                    StationObservation(
                        station: slot.station, kind: slot.kind, sample: slot.sample.isEmpty ? nil : slot.sample,
                        seen: hasSeen ? seen[index] : nil)
                })
            // Trials come by session: one dog's id and name for the run of them.
            let id = text(4)
            if id != dogId {
                dogId = id
                dog = text(5)
            }
            var next = exposure.meet(dogId: dogId, samples: trial.stations.compactMap(\.sample)).makeIterator()
            try body(
                ExposedTrial(
                    dogId: dogId, dog: dog, inScope: sqlite3_column_int64(sqlite, 6) != 0, trial: trial,
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
