import Foundation
import SessionLog
import StationControl
import Testing
import TrainingEngine

/// Issue 38's dilutions through the station: `samples add-ladder` and `samples add --stock` are
/// written by lineupd (the log's writer), all or none; a refused one says why in one line and
/// writes nothing; and each dilution's usage limits are its own when a session starts.
@Suite(.serialized, .ownThreads) struct DilutionDaemonTests {
    @Test func aLadderIsWrittenByTheStationAndEachRungKeepsItsOwnLimits() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ladder-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // Rex met TL-1/1e1 twice; TL-1/1e2 never. Each may meet a dog at most twice.
        let log = try SessionLog(path: directory + "/lineup.db")
        _ = try log.addSample(SampleRecord(label: "TL-1", kind: .target))
        let rungs = try log.addDilutions(
            of: "TL-1", try DilutionLadder.rungs(stock: "TL-1", factor: 10, steps: 2),
            made: DilutionMaking(maxUsesPerDog: 2))
        let rex = DogRecord(name: "Rex")
        let session = SessionRecord(dogId: rex.id, mode: .automated, station: "test")
        try log.append(
            [rex, session]
                + (1...2).map { n in
                    TrialRecord(
                        sessionId: session.id, number: n,
                        layout: [
                            StationSlot(station: 1, sampleId: rungs[0].id, kind: .target),
                            StationSlot(station: 2, sampleId: nil, kind: .blank),
                        ], outcome: .hit, indicatedStation: 1, started: .now(), ended: .now())
                })
        guard let daemon = try ServingStationTests.Daemon(speed: 30, directory: directory) else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady(dogs: []))
        let env = ["LINEUP_SOCKET": daemon.socket, "LINEUP_DB": daemon.db]
        func labels() throws -> [String] { try SessionLog.openReader(path: daemon.db).samples().map(\.label) }
        let before = try labels()

        // A half-log ladder's second rung would be TL-1/1e1, which is taken: none of it is written.
        let taken = try lineupctl(
            ["samples", "add-ladder", "--stock", "TL-1", "--factor", "3.162", "--steps", "3"], environment: env)
        #expect(taken.status != 0 && taken.stdout.isEmpty, "\(taken.stdout)")
        #expect(taken.stderr.split(separator: "\n").count == 1 && taken.stderr.contains("TL-1/1e1"), "\(taken.stderr)")
        let unknown = try lineupctl(
            ["samples", "add-ladder", "--stock", "TL-9", "--factor", "10", "--steps", "3"], environment: env)
        #expect(unknown.status != 0 && unknown.stderr.contains("no sample \"TL-9\""), "\(unknown.stderr)")
        #expect(try labels() == before)

        // Through lineupd: a ladder, then a dilution of a dilution by its concentration.
        let ladder = try lineupctl(
            [
                "samples", "add-ladder", "--stock", "TL-1", "--factor", "2", "--steps", "3", "--diluent",
                "mineral oil", "--made-on", "2026-11-20", "--made-by", "R7",
            ], environment: env)
        #expect(ladder.status == 0 && ladder.stderr.isEmpty, "\(ladder.stderr)")
        #expect(ladder.stdout.contains("added dilution TL-1/8 of TL-1: "), "\(ladder.stdout)")
        let one = try lineupctl(
            ["samples", "add", "TL-1/ppb", "--stock", "TL-1/1e2", "--concentration", "2.5", "--unit", "ppb"],
            environment: env)
        #expect(one.status == 0 && one.stderr.isEmpty, "\(one.stderr)")
        #expect(Set(try labels()).subtracting(before) == ["TL-1/2", "TL-1/4", "TL-1/8", "TL-1/ppb"])
        let show = try lineupctl(["samples", "show", "TL-1/4"], environment: env)
        #expect(
            show.stdout.contains("Dilution    1:4 of TL-1 in mineral oil, made 2026-11-20 by R7\n"), "\(show.stdout)")
        let ppb = try lineupctl(["samples", "show", "TL-1/ppb"], environment: env)
        #expect(ppb.stdout.contains("Dilution    of TL-1/1e2 (2.5 ppb)\n"), "\(ppb.stdout)")

        // Rex has met TL-1/1e1 twice, its limit; TL-1/1e2, of the same ladder, is his to meet.
        let refused = try lineupctl(
            [
                "session", "start", "--dog", "Rex", "--program", "research-5-station", "--step", "phase-1/1",
                "--trials", "2", "--sample", "TL-1/1e1",
            ], environment: env)
        #expect(
            refused.status == 1 && refused.stderr.contains("TL-1/1e1: met 2 times by this dog"), "\(refused.stderr)")
        let started = try lineupctl(
            [
                "session", "start", "--dog", "Rex", "--program", "research-5-station", "--step", "phase-1/1",
                "--trials", "2", "--sample", "TL-1/1e2",
            ], environment: env)
        #expect(started.status == 0, "\(started.stderr)")
        _ = try lineupctl(["session", "abort"], environment: env)
    }
}
