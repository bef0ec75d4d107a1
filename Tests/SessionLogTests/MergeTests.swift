import Figures
import Foundation
import GRDB
import Readings
import Testing
import TrainingEngine

@testable import SessionLog

/// Two stations' logs (the same dog's name and the same sample labels on both, different
/// sessions) merged into one lab log, twice: every row once, each with its station, the same
/// animal and samples matched, and the figures of the whole equal to the parts'.
@Suite struct MergeTests {
    /// A station's log: dog "Aino", samples T-1 and C-1, one session of `trials` trials.
    func station(_ trials: Int, seed: UInt64, targetIndicated: Bool) throws -> SessionLog {
        let log = try SessionLog(path: temporaryLogPath())
        let dog = DogRecord(name: "Aino")
        let target = SampleRecord(label: "T-1", kind: .target)
        let control = SampleRecord(label: "C-1", kind: .control)
        let session = SessionRecord(dogId: dog.id, mode: .automated, station: "pi-\(seed)")
        try log.append([dog, target, control, session])
        let writer = log.makeWriter()
        defer { writer.close() }
        for n in 1...trials {
            let t = TrialRecord(
                sessionId: session.id, number: n,
                layout: [
                    StationSlot(
                        station: 1, sampleId: target.id, kind: .target,
                        seen: StationSeen(visited: true, indicated: targetIndicated)),
                    StationSlot(
                        station: 2, sampleId: control.id, kind: .control,
                        seen: StationSeen(visited: true, indicated: false)),
                ], outcome: targetIndicated ? .hit : .miss, indicatedStation: targetIndicated ? 1 : nil,
                started: .now(),
                ended: .now())
            writer.submit(LoggedEvent(kind: .edge, sessionId: session.id, trialId: t.id, station: 1))
            try writer.commitTrial(t)
        }
        return log
    }

    func count(_ log: SessionLog, _ table: String) throws -> Int {
        try log.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)")! }
    }

    @Test func twoStationsMergeOnceWithTheirIdentities() throws {
        let a = try station(3, seed: 1, targetIndicated: true)
        let b = try station(2, seed: 2, targetIndicated: false)
        let lab = try SessionLog(path: temporaryLogPath())
        for _ in 0..<2 {
            _ = try lab.merge(from: a.path)
            _ = try lab.merge(from: b.path)
        }
        #expect(try count(lab, "dog") == 1)
        #expect(try count(lab, "sample") == 2)
        #expect(try count(lab, "session") == 2)
        #expect(try count(lab, "trial") == 5)
        #expect(try count(lab, "trial_station") == 10)
        #expect(try count(lab, "event") == 5)
        #expect(try count(lab, "merged_log") == 2)
        // Each row keeps its station.
        let identities = try [a, b].map { log in
            try log.pool.read { db in try String.fetchOne(db, sql: "SELECT id FROM log_identity")! }
        }
        let stations = try lab.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT station_id, count(*) AS n FROM event GROUP BY station_id ORDER BY n DESC")
                .map { ($0["station_id"] as String, $0["n"] as Int) }
        }
        #expect(stations.map(\.0) == identities && stations.map(\.1) == [3, 2])
        // One dog, one sample each: the figures of the whole are the parts' together.
        let whole = try #require(try lab.reader.stats(by: .dog).first)
        #expect(whole.results.trials == 5 && whole.sensitivity.successes == 3 && whole.sensitivity.trials == 5)
        let bySample = Dictionary(uniqueKeysWithValues: try lab.reader.stats(by: .sample).map { ($0.group, $0) })
        #expect(bySample["T-1"]?.sensitivity.trials == 5 && bySample["C-1"]?.specificity.trials == 5)
        #expect(try lab.reader.samples().map(\.uses).sorted() == [5, 5])
        #expect(try lab.pool.read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") } == "ok")
    }

    @Test func aLabelThatMeansAnotherKindIsRefused() throws {
        let a = try station(1, seed: 1, targetIndicated: true)
        let b = try SessionLog(path: temporaryLogPath())
        try b.append([SampleRecord(label: "T-1", kind: .control)])
        let lab = try SessionLog(path: temporaryLogPath())
        _ = try lab.merge(from: a.path)
        #expect(throws: SessionLogError.self) { _ = try lab.merge(from: b.path) }
        do {
            _ = try lab.merge(from: b.path)
        } catch {
            #expect("\(error)".contains("sample T-1 is a control"), "\(error)")
        }
        #expect(try count(lab, "sample") == 2)
        #expect(throws: SessionLogError.self) { _ = try lab.merge(from: lab.path) }
    }
}
