import Figures
import Foundation
import SessionLog
import StationControl
import Testing
import TrainingEngine

/// Issue 21's end-to-end case: a served station whose virtual dog memorises its samples (sure at
/// a target it has met, poor at a new one) runs two sessions of a step with novel-sample rounds;
/// `lineupctl stats --familiar-novel` flags the dog and the report shows the flag. On the same
/// log, the novelty the station recorded at each station when it laid the trial out agrees with
/// the statistics' reading of the definition (`Exposure`), recomputed from the trials export.
@Suite(.serialized, .ownThreads) struct MemorisationCaughtTests {
    static let program = """
        name = "memo"
        title = "Known targets and new ones"

        [[phases]]
        id = "test"
        title = "Test"

        [[phases.steps]]
        id = "1"
        title = "Half the targets new to the dog"
        mode = "automated"
        lineup = { stations = 3, targets = 1, controls = 2, no_target_share = 0.0, novel_target_share = 0.5 }

        [[phases.steps.exercises]]
        id = "1"
        title = "Block of 20"
        instruction = "Load as the assistant's layout says."
        trials = 20
        """

    /// Ready, as the loading assistant presses it: a start the station refuses because the dog is
    /// still at a station (the virtual dog leaves the last trial's station on its own time, later
    /// on a loaded machine) is pressed again once it has left, as a person would; any other
    /// refusal is the test's failure.
    static func pressReadyOnceClear(_ client: ControlClient) throws {
        let end = Date().addingTimeInterval(20)
        while true {
            do {
                _ = try client.ready()
                return
            } catch let error as ControlClientError {
                guard case .refused(let refusal) = error, refusal.code == .notReady,
                    refusal.message.contains("is active"), Date() < end
                else { throw error }
                usleep(100_000)
            }
        }
    }

    @Test func aDogThatKnowsItsTrainingSamplesIsFlaggedAndTheReportShowsIt() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("memo-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory + "/programs", withIntermediateDirectories: true)
        try Self.program.write(toFile: directory + "/programs/memo.toml", atomically: true, encoding: .utf8)
        guard
            let daemon = try ServingStationTests.Daemon(
                speed: 30,
                extra: [
                    "--programs", directory + "/programs", "--memorise-after", "1", "--familiar-sensitivity", "1",
                    "--sensitivity", "0.1",
                ], directory: directory)
        else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady(dogs: ["Rex"]))
        let client = daemon.client
        // Enough targets for two sessions' novel rounds, and controls to rotate.
        let targets = (1...26).map { String(format: "T-%02d", $0) }
        let controls = (1...6).map { "C-\($0)" }
        for label in targets {
            _ = try client.addSample(SampleEntry(label: label, kind: .target, facts: SampleFacts(source: "clinic A")))
        }
        for label in controls {
            _ = try client.addSample(SampleEntry(label: label, kind: .control, facts: SampleFacts(source: "clinic A")))
        }

        for (session, seed) in [(1, UInt64(21)), (2, UInt64(22))] {
            _ = try client.startSession(
                SessionRequest(
                    dog: "Rex", program: "memo", step: "test/1", trials: 20, samples: targets + controls, seed: seed))
            for trial in 1...20 {
                try Self.pressReadyOnceClear(client)
                #expect(
                    eventually(20) { (try? client.status().trialsDone) == trial },
                    "session \(session): trial \(trial) never ended\n\(daemon.stderrSoFar)")
            }
            try client.endSession(suggestions: nil)
        }

        let stats = try lineupctl(["stats", "--familiar-novel", "--db", daemon.db])
        #expect(stats.status == 0, "\(stats.stderr)")
        #expect(
            stats.stdout.contains("flag: Rex: novel-sample sensitivity")
                && stats.stdout.contains("the memorisation signature"), "\(stats.stdout)")
        let report = try lineupctl(["report", "--db", daemon.db])
        #expect(report.status == 0, "\(report.stderr)")
        #expect(report.stdout.contains(#"class="flag memorisation""#), "the report shows no memorisation flag")

        // The station's record of novelty against the statistics' reading, from the export.
        let trials = try lineupctl(["trials", "--db", daemon.db, "--json", "--limit", "0"])
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(trials.stdout.utf8)) as? [[String: Any]])
        #expect(rows.count == 40)
        let ordered = rows.sorted { ($0["started"] as? String ?? "") < ($1["started"] as? String ?? "") }
        let stationsOf: ([String: Any]) -> [[String: Any]] = { $0["layout"] as? [[String: Any]] ?? [] }
        let exposures = Exposure.before(
            ordered.map { row in
                ExposureTrial(dogId: "Rex", samples: stationsOf(row).compactMap { $0["sample"] as? String })
            })
        var novelTargets = 0
        var familiarTargets = 0
        for (row, exposure) in zip(ordered, exposures) {
            let withSample = stationsOf(row).filter { $0["sample"] as? String != nil }
            #expect(withSample.count == exposure.count)
            for (slot, met) in zip(withSample, exposure) {
                let recorded = try #require(slot["novel"] as? Bool, "no recorded novelty: \(slot)")
                #expect(recorded == (met == 0), "trial \(row["number"] ?? "?"): \(slot) met \(met) time(s) before")
                if slot["kind"] as? String == "target" {
                    if met == 0 { novelTargets += 1 } else { familiarTargets += 1 }
                }
            }
        }
        // The step asked for half of each session's targets new: both sides well filled.
        #expect(novelTargets >= 20 && familiarTargets >= 10, "novel \(novelTargets), familiar \(familiarTargets)")
    }
}
