import GRDB
import TrainingEngine

/// One trial of a dog (after corrections) with each of its samples' exposure before it.
struct ExposedTrial {
    var dogId: String
    var dog: String
    /// Whether the trial is among those the filter chose; every trial counts toward exposure.
    var inScope: Bool
    var trial: ScoredTrial
    /// Each sample of the layout: the dog's exposure to it before this trial.
    var exposures: [String: Int]
}

/// What the registry says of a sample, as the confound figures group it.
struct SampleRegistryDetails {
    var kind: SampleKind
    var source: String?
    var collection: String?
    var processing: String?
}

extension LogReader {
    /// Every trial of the chosen dog (or of every dog) in time order, with exposures counted
    /// over all of them by `Exposure.before` and `inScope` saying which the filter keeps:
    /// narrowing to a week must not make the week's first trial of an old sample novel.
    static func exposedTrials(_ db: Database, _ filter: LogFilter) throws -> [ExposedTrial] {
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT t.outcome, t.latency_ns, t.layout, t.seen, s.dog_id, d.name,
                    ((?2 IS NULL OR s.id = ?2) AND (?3 IS NULL OR t.wall_ns >= ?3) AND (?4 IS NULL OR t.wall_ns < ?4)
                        AND \(filter.sessionCondition(from: 5))) AS in_scope
                FROM trial_current t JOIN session s ON s.id = t.session_id JOIN dog d ON d.id = s.dog_id
                WHERE (?1 IS NULL OR s.dog_id = ?1)
                ORDER BY t.started_wall_ns, s.id, t.number
                """,
            arguments: StatementArguments(
                [
                    filter.dogId.databaseValue, filter.sessionId.databaseValue, filter.since.databaseValue,
                    filter.until.databaseValue,
                ] + filter.sessionArguments))
        var read: [(ExposureTrial, ExposedTrial)] = []
        var slots: [StationInLayout] = []
        var seen: [StationSeen] = []
        while let row = try rows.next() {
            var layout: String = row[2] ?? ""
            layout.withUTF8 { parseLayout($0.baseAddress, $0.count, into: &slots) }
            var hasSeen = false
            // As `scanTrials`: a trial without `seen` (before schema v3) has no station data.
            if var text: String = row[3] {
                hasSeen =
                    text.withUTF8 { parseSeen($0.baseAddress, $0.count, into: &seen) } && seen.count == slots.count
            }
            let trial = ScoredTrial(
                outcome: TrialOutcome(rawValue: row[0]) ?? .aborted, latencyNs: row[1],
                stations: slots.enumerated().map { index, slot in
                    StationObservation(
                        station: slot.station, kind: slot.kind, sample: slot.sample.isEmpty ? nil : slot.sample,
                        seen: hasSeen ? seen[index] : nil)
                })
            let dogId: String = row[4]
            read.append(
                (
                    ExposureTrial(dogId: dogId, samples: trial.stations.compactMap(\.sample)),
                    ExposedTrial(dogId: dogId, dog: row[5], inScope: row[6], trial: trial, exposures: [:])
                ))
        }
        let exposures = Exposure.before(read.map(\.0))
        return zip(read, exposures).map { pair, exposure in
            var trial = pair.1
            trial.exposures = exposure
            return trial
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
