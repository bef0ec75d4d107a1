import Figures
import Foundation
import GRDB
import Readings
import Testing
import TrainingEngine

@testable import SessionLog

/// Issue 24's story: a trial corrected in the lab log and the same trial corrected on its
/// station meet at the next merge. The lab counts each trial once: the correction that reached
/// it first stands, the station's is not merged and the merge says so (the project's rule,
/// docs/session-log.md, "Corrections"); and a lab log merged before the rule, which holds both,
/// still shows one current version.
@Suite struct CorrectionMergeTests {
    /// A station's log: dog "Aino", one session of five hits.
    func station() throws -> (SessionLog, sessionId: String) {
        let log = try SessionLog(path: temporaryLogPath())
        let dog = DogRecord(name: "Aino")
        let target = SampleRecord(label: "T-1", kind: .target)
        let control = SampleRecord(label: "C-1", kind: .control)
        let session = SessionRecord(dogId: dog.id, mode: .automated, station: "pi-1")
        try log.append([dog, target, control, session])
        let writer = log.makeWriter()
        defer { writer.close() }
        for n in 1...5 {
            let t = TrialRecord(
                sessionId: session.id, number: n,
                layout: [
                    StationSlot(
                        station: 1, sampleId: target.id, kind: .target,
                        seen: StationSeen(visited: true, indicated: true)),
                    StationSlot(
                        station: 2, sampleId: control.id, kind: .control,
                        seen: StationSeen(visited: true, indicated: false)),
                ], outcome: .hit, indicatedStation: 1, started: .now(), ended: .now())
            try writer.commitTrial(t)
        }
        return (log, session.id.uuidString.lowercased())
    }

    func current(_ log: SessionLog, _ sessionId: String) throws -> [Row] {
        try log.pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT id, number, corrects, reason FROM trial_current WHERE session_id = ? ORDER BY number",
                arguments: [sessionId])
        }
    }

    @Test func twoCorrectionsOfOneTrialMeetAndTheTrialCountsOnce() throws {
        let (pi, sessionId) = try station()
        let lab = try SessionLog(path: temporaryLogPath())
        _ = try lab.merge(from: pi.path)
        let third = try #require(try pi.reader.trials().first { $0.number == 3 })

        let inLab = try lab.correctTrial(
            third.id, outcome: .miss, indicatedStation: nil, reason: "video review: no hold")
        let onStation = try pi.correctTrial(
            third.id, outcome: .miss, indicatedStation: nil, reason: "the trainer: no hold")
        let summary = try lab.merge(from: pi.path)

        let rows = try current(lab, sessionId)
        #expect(rows.map { $0["number"] as Int } == [1, 2, 3, 4, 5])
        #expect((rows[2]["id"] as String) == inLab.id.uuidString.lowercased())
        #expect(summary.correctionsRefused.count == 1)
        #expect(
            summary.correctionsRefused.first?.contains(
                "correction \(onStation.id.uuidString.lowercased().prefix(8)) of trial \(third.id.prefix(8)) not merged"
            )
                == true, "\(summary.correctionsRefused)")
        #expect(try lab.reader.stats(by: .session).first?.results.trials == 5)
        // Nothing of the refused correction came in: not its stations, not its note.
        let leftovers = try lab.pool.read { db in
            try Int.fetchOne(
                db,
                sql:
                    "SELECT (SELECT count(*) FROM trial WHERE id = ?1) + (SELECT count(*) FROM event WHERE trial_id = ?1)",
                arguments: [onStation.id.uuidString.lowercased()])!
        }
        #expect(leftovers == 0)
        // Merged again: the same word, nothing added.
        let again = try lab.merge(from: pi.path)
        #expect(again.correctionsRefused == summary.correctionsRefused && again.trials == 0)
    }

    @Test func aLogHoldingTwoCorrectionsOfOneTrialShowsTheFirst() throws {
        let (pi, sessionId) = try station()
        let third = try #require(try pi.reader.trials().first { $0.number == 3 })
        let first = try pi.correctTrial(third.id, outcome: .miss, indicatedStation: nil, reason: "video review")
        // A second correction of the same trial, as a merge before the rule copied it.
        try pi.write { db in
            let columns = try Row.fetchAll(db, sql: "PRAGMA table_info(trial)").map { $0["name"] as String }
            let values = columns.map { $0 == "id" ? "?1" : ($0 == "reason" ? "'from another log'" : $0) }
            try db.execute(
                sql:
                    "INSERT INTO trial (\(columns.joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) FROM trial WHERE id = ?2",
                arguments: [UUID().uuidString.lowercased(), first.id.uuidString.lowercased()])
        }
        let rows = try current(pi, sessionId)
        #expect(rows.map { $0["number"] as Int } == [1, 2, 3, 4, 5])
        #expect((rows[2]["id"] as String) == first.id.uuidString.lowercased())
    }
}
