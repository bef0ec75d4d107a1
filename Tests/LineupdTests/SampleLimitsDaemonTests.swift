import Foundation
import SessionLog
import StationControl
import Testing
import TrainingEngine

/// Usage limits against the log's exposure, through the station and `lineupctl`: a start a
/// limit stops is refused with the sample and its limit, nothing written; `samples show` gives
/// the uses per dog.
@Suite(.serialized, .ownThreads) struct SampleLimitsDaemonTests {
    /// A log where Rex met T-1 in two trials (one aborted: it counts, the sample stood there)
    /// and Ada met T-2 once; T-1 may meet each dog at most twice.
    func seededLog(in directory: String) throws {
        let log = try SessionLog(path: directory + "/lineup.db")
        let t1 = try log.addSample(SampleRecord(label: "T-1", kind: .target, maxUsesPerDog: 2))
        let t2 = try log.addSample(SampleRecord(label: "T-2", kind: .target, maxUses: 5))
        let rex = DogRecord(name: "Rex")
        let ada = DogRecord(name: "Ada")
        let rexSession = SessionRecord(dogId: rex.id, mode: .automated, station: "test")
        let adaSession = SessionRecord(dogId: ada.id, mode: .automated, station: "test")
        func trial(_ session: SessionRecord, _ number: Int, _ sample: UUID, _ outcome: TrialOutcome) -> TrialRecord {
            TrialRecord(
                sessionId: session.id, number: number,
                layout: [
                    StationSlot(station: 1, sampleId: sample, kind: .target),
                    StationSlot(station: 2, sampleId: nil, kind: .blank),
                ], outcome: outcome, indicatedStation: outcome == .hit ? 1 : nil, started: .now(), ended: .now())
        }
        try log.append([
            rex, ada, rexSession, adaSession, trial(rexSession, 1, t1.id, .hit), trial(rexSession, 2, t1.id, .aborted),
            trial(adaSession, 1, t2.id, .miss),
        ])
    }

    @Test func aStartStoppedByAPerDogLimitIsRefusedAndSamplesShowGivesUsesPerDog() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("limits-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try seededLog(in: directory)
        guard let daemon = try ServingStationTests.Daemon(speed: 30, directory: directory) else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady(dogs: []))
        let env = ["LINEUP_SOCKET": daemon.socket]

        let shown = try lineupctl(["samples", "show", "T-1", "--db", daemon.db])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("Used        2 trial(s)\n"), "\(shown.stdout)")
        #expect(shown.stdout.contains("Per dog (max_uses_per_dog 2)\n  Rex: 2 trial(s), last "), "\(shown.stdout)")
        #expect(!shown.stdout.contains("Ada"), "\(shown.stdout)")
        let json = try lineupctl(["samples", "show", "T-2", "--db", daemon.db, "--json"])
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let details = try decoder.decode(SampleDetails.self, from: Data(json.stdout.utf8))
        #expect(details.usedBy.map(\.dog) == ["Ada"] && details.usedBy.map(\.uses) == [1])
        #expect(details.sample.maxUses == 5 && details.sample.maxUsesPerDog == nil)

        // Rex has met T-1 twice, its limit: a block on T-1 alone cannot be laid out.
        let sessionsBefore = try SessionLog.openReader(path: daemon.db).sessions().count
        let refused = try lineupctl(
            [
                "session", "start", "--dog", "Rex", "--program", "research-5-station", "--step", "phase-1/1",
                "--trials", "2", "--sample", "T-1",
            ], environment: env)
        #expect(refused.status == 1)
        #expect(
            refused.stderr.contains(
                "trial 1: 1 different target samples needed but only 0 within their usage limits "
                    + "(T-1: met 2 times by this dog, max_uses_per_dog 2)"), "\(refused.stderr)")
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        #expect(try SessionLog.openReader(path: daemon.db).sessions().count == sessionsBefore, "a refused start wrote")

        // With T-2 as well (used once, by Ada; 5 uses in all): trials 1 to 4 take T-2, and the
        // fifth is stopped by both limits.
        let both = try lineupctl(
            [
                "session", "start", "--dog", "Rex", "--program", "research-5-station", "--step", "phase-1/1",
                "--trials", "5", "--sample", "T-1", "--sample", "T-2",
            ], environment: env)
        #expect(both.status == 1)
        #expect(
            both.stderr.contains(
                "trial 5: 1 different target samples needed but only 0 within their usage limits "
                    + "(T-1: met 2 times by this dog, max_uses_per_dog 2; T-2: used 5 times, max_uses 5)"),
            "\(both.stderr)")
        #expect(try SessionLog.openReader(path: daemon.db).sessions().count == sessionsBefore, "a refused start wrote")

        // Limits given when a sample is added, through the station; a limit below 1 is refused.
        let zero = try lineupctl(["samples", "add", "T-3", "--kind", "target", "--max-uses", "0"], environment: env)
        #expect(zero.status == 1 && zero.stderr.contains("--max-uses 0: a usage limit is at least 1"), "\(zero.stderr)")
        let added = try lineupctl(
            ["samples", "add", "T-3", "--kind", "target", "--max-uses", "40", "--max-uses-per-dog", "8"],
            environment: env)
        #expect(added.status == 0, "\(added.stderr)")
        let t3 = try lineupctl(["samples", "show", "T-3", "--db", daemon.db])
        #expect(
            t3.stdout.contains("Used        0 trial(s) (max_uses 40)\nPer dog (max_uses_per_dog 8)\n"), "\(t3.stdout)")

        // Ada never met T-1: her block on it starts.
        let ada = try lineupctl(
            [
                "session", "start", "--dog", "Ada", "--program", "research-5-station", "--step", "phase-1/1",
                "--trials", "2", "--sample", "T-1",
            ], environment: env)
        #expect(ada.status == 0, "\(ada.stderr)")
        let layout = try daemon.client.layout(view: .assistant)
        #expect(layout.contains { $0.sample == "T-1" }, "\(layout)")
        try daemon.client.endSession(suggestions: nil)
        #expect(daemon.terminate().status == 0)
    }
}
