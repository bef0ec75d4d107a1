import Figures
import Foundation
import GRDB
import Readings
import Testing
import TrainingEngine

@testable import SessionLog

/// A log written by schema v2 (kept as a fixture: Fixtures/v2-simulated-block.sql) opens under
/// v3, keeps every row, and its trials are reported as lacking station data rather than
/// counted by another rule.
@Suite struct MigrationTests {
    func v2Log() throws -> String {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/v2-simulated-block.sql")
        let path = temporaryLogPath()
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in try db.execute(sql: try String(contentsOf: fixture, encoding: .utf8))
        }
        try queue.close()
        return path
    }

    @Test func aV2LogOpensAndItsTrialsSayTheyLackStationData() throws {
        let path = try v2Log()
        let log = try SessionLog(path: path)
        let reader = log.reader
        let applied = try reader.read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations") }
        // Every migration this build knows, the shipped ones first and in their order.
        #expect(applied == Schema.knownVersions)
        #expect(
            applied == [
                "v1", "v2-session-end", "v3-station-seen", "v4-station-identity", "v5-dog-note", "v6-layout-commitment",
                "v7-sample-limits-novelty", "v8-handler-guess", "v9-one-current-correction",
                "v10-lab-sample-uses", "v11-sample-dilution",
                "v12-session-conditions", "v13-trial-procedure",
            ])
        let counts = try reader.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM trial")!,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM event")!,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM trial_station WHERE visited IS NULL")!,
                try String.fetchOne(db, sql: "PRAGMA integrity_check")!
            )
        }
        #expect(counts.0 == 6 && counts.1 == 189 && counts.2 == 30 && counts.3 == "ok")
        // The migrated log takes dilutions beside its old rows (v11).
        _ = try log.addSample(SampleRecord(label: "T-old", kind: .target))
        _ = try log.addDilutions(of: "T-old", [DilutionRung(label: "T-old/1e3", factor: 1000)], made: DilutionMaking())
        #expect(try reader.samples().map { $0.dilution?.factor } == [nil, 1000])

        let old = try #require(try reader.stats(by: .session).first)
        #expect(old.results.trials == 6)
        #expect(old.figures.trialsWithoutStationData == old.results.scored)
        #expect(old.sensitivity.trials == 0 && old.specificity.trials == 0 && old.figures.falseAlertsPerTrial == nil)
        #expect(old.sessionsWithoutStationData == [old.groupId])
        // Latency and trial accuracy need no station data: they are still given.
        #expect(old.figures.trialAccuracy.trials == old.results.scored)
        let details = try reader.session(id: old.groupId)
        #expect(details.figures == old.figures)
        #expect(details.endedHow == "ended")

        // A new session on the migrated log is counted with its station data, beside the old one.
        let dog = try #require(try reader.dogs().first)
        let session = SessionRecord(dogId: UUID(uuidString: dog.id)!, mode: .automated)
        let seen = StationSeen(
            visited: true, indicated: true, firstIndicationNs: 2_000_000_000, sniffs: 0, dwellNs: 2_000_000_000)
        try log.append([
            session,
            TrialRecord(
                sessionId: session.id, number: 1,
                layout: [
                    StationSlot(station: 1, sampleId: nil, kind: .target, seen: seen),
                    StationSlot(
                        station: 2, sampleId: nil, kind: .control, seen: StationSeen(visited: true, indicated: false)),
                ], outcome: .hit, indicatedStation: 1, latencyNs: 2_000_000_000, started: .now(), ended: .now()),
        ])
        let byDog = try #require(try reader.stats(by: .dog).first)
        #expect(byDog.results.trials == 7)
        #expect(byDog.sensitivity.successes == 1 && byDog.sensitivity.trials == 1)
        #expect(byDog.specificity.successes == 1 && byDog.specificity.trials == 1)
        #expect(byDog.figures.trialsWithoutStationData == old.results.scored)
        #expect(byDog.sessionsWithoutStationData == [old.groupId])

        // The export leaves the old trials' station columns empty and fills the new one's.
        let query = try reader.exportQuery(.trials)
        #expect(query.header.contains("station_2_visited") && query.header.contains("station_5_dwell_ns"))
        let column = try #require(query.header.firstIndex(of: "station_1_visited"))
        let visited = try reader.read { db in
            try Row.fetchAll(db, sql: query.sql, arguments: query.arguments).map { $0[column] as Int? }
        }
        #expect(visited.filter { $0 == nil }.count == 6, "\(visited)")
        #expect(visited.last == 1, "\(visited)")
    }
}
