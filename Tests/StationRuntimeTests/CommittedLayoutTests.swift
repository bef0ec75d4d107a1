import Foundation
import ReadingRows
import SessionLog
import Testing
import TrainingEngine

@testable import StationIO
@testable import StationRuntime

/// Committed layouts (docs/figures.md, "Committed layouts"): a double-blind block in virtual
/// time whose commitments verify from its log, reach the handler's side before each trial and
/// never with a layout, and a copy of its log altered with SQL (its triggers dropped) that
/// `verifyBlinding` catches, naming the trial.
@Suite struct CommittedLayoutTests {
    static let second: UInt64 = 1_000_000_000

    /// Three trials of research-5-station's double-blind phase-3/1, each searched to its end:
    /// the dog holds at the target, or at station A when there is none.
    static func block() throws -> Rig {
        let rig = try Rig(phase: "phase-3", step: "1", trials: 3, blind: true)
        for index in 0..<3 {
            #expect(rig.ready().answer == .started, "trial \(index + 1) starts")
            rig.advance(by: second)
            let station = rig.layouts[index].targetStation ?? 0
            rig.nose(at: station, true)
            rig.advance(by: 3 * second)
            rig.nose(at: station, false)
            // Past the search's end and the inter-trial interval, so the next ready starts.
            rig.advance(by: 120 * second)
            try rig.drain()
        }
        #expect(try rig.log.reader.trials().count == 3)
        return rig
    }

    @Test func aDoubleBlindBlocksCommitmentsVerify() throws {
        let rig = try Self.block()
        let v = try rig.log.reader.verifyBlinding(session: rig.sessionId.uuidString.lowercased())
        #expect(v.mode == .doubleBlind && v.logHasCommitments)
        #expect(v.trials.map(\.number) == [1, 2, 3])
        #expect(v.failed.isEmpty, "\(v.failed)")
        #expect(v.committedNotRun.isEmpty)
        #expect(v.trials.allSatisfy { $0.digest?.count == 64 && $0.salt?.count == 64 })
    }

    @Test func eachCommitmentReachesTheHandlerBeforeItsTrialAndNoLayoutDoes() throws {
        let rig = try Self.block()
        let objects = try rig.watchObjects()
        let v = try rig.log.reader.verifyBlinding(session: rig.sessionId.uuidString.lowercased())
        for trial in v.trials {
            let committed = try #require(
                objects.firstIndex { $0["kind"] == "committed" && $0["trial"] == "\(trial.number)" },
                "trial \(trial.number)'s commitment was announced")
            #expect(objects[committed]["sha256"] == trial.digest)
            #expect(Set(objects[committed].keys) == ["kind", "trial", "sha256"], "no layout, no salt")
            // Every line of its trial comes after it.
            let first = try #require(
                objects.firstIndex { $0["kind"] != "committed" && $0["trial"] == "\(trial.number)" })
            #expect(
                committed < first, "trial \(trial.number) was committed to the handler before it started: \(objects)")
        }
        // No salt on the handler's side: without it the digest tells nothing of the layout.
        let salts = v.trials.compactMap(\.salt)
        #expect(!rig.watchLines.contains { line in salts.contains { line.contains($0) } })
    }

    @Test func aLayoutAlteredInACopyOfTheLogIsCaughtNamingItsTrial() throws {
        let rig = try Self.block()
        let session = rig.sessionId.uuidString.lowercased()
        let trials = try rig.log.reader.trials(LogFilter(sessionId: session))
        let second = try #require(trials.first { $0.number == 2 })
        let target = try #require(rig.layouts[1].targetStation.map { $0 + 1 })
        let other = target == 1 ? 2 : 1
        // Move trial 2's target to another station, in both places the log keeps the layout,
        // as someone editing the file to fit an outcome would.
        let altered = try Self.copy(
            rig,
            sql: """
                DROP TRIGGER trial_station_append_only_update;
                DROP TRIGGER trial_append_only_update;
                UPDATE trial_station SET kind = CASE station WHEN \(target) THEN 'control' ELSE 'target' END,
                    sample_id = (SELECT sample_id FROM trial_station x
                        WHERE x.trial_id = trial_station.trial_id
                        AND x.station = CASE trial_station.station WHEN \(target) THEN \(other) ELSE \(target) END)
                    WHERE trial_id = '\(second.id)' AND station IN (\(target), \(other));
                UPDATE trial SET layout = (SELECT group_concat(station || ':' || kind || ':' || coalesce(sample_id, ''), ';')
                    FROM (SELECT * FROM trial_station WHERE trial_id = '\(second.id)' ORDER BY station))
                    WHERE id = '\(second.id)';
                """)
        let v = try SessionLog.openReader(path: altered).verifyBlinding(session: session)
        #expect(v.failed.map(\.number) == [2])
        #expect(
            v.failed.first?.problems == [
                "trial 2: its layout does not match its commitment (changed after it was committed)"
            ])
        // The original still verifies: the copy's change is what was caught.
        #expect(try rig.log.reader.verifyBlinding(session: session).failed.isEmpty)
    }

    @Test func aSaltLoggedBeforeItsTrialEndedIsARevealTooEarly() throws {
        let rig = try Self.block()
        let session = rig.sessionId.uuidString.lowercased()
        let altered = try Self.copy(
            rig,
            sql: """
                DROP TRIGGER layout_opening_append_only_update;
                UPDATE layout_opening SET mono_ns = (SELECT started_mono_ns FROM trial
                    WHERE trial.id = layout_opening.trial_id) WHERE trial_number = 3;
                """)
        let v = try SessionLog.openReader(path: altered).verifyBlinding(session: session)
        #expect(v.failed.map(\.number) == [3])
        #expect(v.failed.first?.problems.contains { $0.contains("revealed early") } == true)
    }

    @Test func aTrainerLedSessionIsNotDoubleBlindAndHasNothingToVerify() throws {
        let rig = try Rig(phase: "initial", step: "food")
        #expect(rig.ready().answer == .started)
        rig.advance(by: 120 * Self.second)
        try rig.drain()
        let v = try rig.log.reader.verifyBlinding(session: rig.sessionId.uuidString.lowercased())
        #expect(v.mode == .trainerLed)
        #expect(v.trials.isEmpty && v.failed.isEmpty)
        #expect(try rig.log.reader.trials().count == 1, "a round was logged, and not checked")
        #expect(!rig.watchLines.contains { $0.contains("committed") })
    }

    /// A copy of the rig's log (SQLite's online backup) changed by `sql` through the sqlite3
    /// tool, as anyone holding the file could.
    static func copy(_ rig: Rig, sql: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "committed-layout-\(UUID().uuidString).db"
        ).path
        try SessionLog.backup(from: rig.log.reader, to: path)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [path]
        let input = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardError = errors
        try process.run()
        input.fileHandleForWriting.write(Data(sql.utf8))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0 && said.isEmpty, "sqlite3: \(said)")
        return path
    }
}
