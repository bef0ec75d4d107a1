import Foundation
import Glibc
import ReadingRows
import SessionLog
import StationControl
import Testing

/// Issue 38 and 36 together: a double-blind 2-down-1-up staircase on the served simulated station,
/// cut by `kill -9` of the real lineupd after a trial is logged and resumed by the next one, runs
/// trial for trial as the same staircase run without the cut: the same seed, and a virtual dog
/// whose answers depend on the dilution alone (its threshold between two rungs, a curve 0.01
/// decades wide, no false alerts), so each trial's answer is the same in both runs. The procedure
/// after the resume is recomputed from the trials logged; its dilutions, committed before the
/// cut or after it, verify (`verify-blinding`), and the re-scorer's staircase agrees
/// (`verify-scoring`).
@Suite(.serialized, .ownThreads) struct ThresholdResumeTests {
    struct Trial: Equatable, CustomStringConvertible {
        var number: Int
        var outcome: String
        var dilution: String?
        var rung: Int?
        var reversals: Int?
        var stopped: Bool?
        var description: String {
            "#\(number) \(dilution ?? "catch") \(outcome) r\(reversals ?? -1)\(stopped == true ? " stopped" : "")"
        }
    }

    /// One staircase from the session's start to its stop, with `seed`; cut by `kill -9` once
    /// trial `cutAfter` is logged (the next one waiting for ready; `midSearch`: once the next one
    /// has started), then resumed by a new lineupd.
    func staircase(seed: UInt64, cutAfter: Int?, midSearch: Bool = false) throws -> (
        trials: [Trial], db: String, session: String
    )? {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stair-cut-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try ThresholdStationTests.program.write(
            toFile: directory + "/stair-test.toml", atomically: true, encoding: .utf8)
        // The ladder holds 1:10 to 1:10,000; the dog finds 1:10 and 1:100, never 1:1,000 or weaker.
        let extra = [
            "--programs", directory, "--dog-threshold", "0.003", "--dog-threshold-width", "0.01",
            "--false-alert-rate", "0",
        ]
        guard var daemon = try ServingStationTests.Daemon(speed: 30, extra: extra, directory: directory) else {
            return nil
        }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady())
        let env = ["LINEUP_SOCKET": daemon.socket, "LINEUP_DB": daemon.db]
        #expect(try lineupctl(["samples", "add", "TH-1", "--kind", "target"], environment: env).status == 0)
        let ladder = try lineupctl(
            ["samples", "add-ladder", "--stock", "TH-1", "--factor", "10", "--steps", "4"], environment: env)
        #expect(ladder.status == 0, "\(ladder.stderr)")
        let rungs = ["TH-1/1e1", "TH-1/1e2", "TH-1/1e3", "TH-1/1e4"]
        let session = try daemon.client.startSession(
            SessionRequest(dog: "Rex", program: "stair-test", step: "thr/stair", samples: rungs, seed: seed))
        var cutShort = false
        for trial in 1...16 {
            // The trial cut short mid-search ended at the resume: no ready for it.
            if cutShort {
                cutShort = false
                continue
            }
            guard (try? daemon.client.layout(view: .assistant)) != nil else { break }  // the staircase stopped
            try daemon.client.ready()
            #expect(eventually(20) { (try? daemon.client.status().trialsDone) == trial }, "trial \(trial) never ended")
            guard trial == cutAfter else { continue }
            // Logged, the next trial's dilution committed with it: the plug is pulled.
            #expect(eventually(10) { (try? daemon.client.status().state) == .waitingForReady })
            if midSearch {
                // Or the next trial's start cue on disk, the dog searching.
                try daemon.client.ready()
                try #require(
                    ResumeTests.killNineMidTrial(
                        daemon.process.processIdentifier, db: daemon.db, session: session, trial: trial + 1),
                    "trial \(trial + 1) was never seen started and unlogged")
            } else {
                Glibc.kill(daemon.process.processIdentifier, SIGKILL)
            }
            daemon.process.waitUntilExit()
            guard let second = try ServingStationTests.Daemon(speed: 30, extra: extra, directory: directory) else {
                return nil
            }
            daemon = second
            #expect(daemon.waitReady())
            #expect(try daemon.client.status().state == .interrupted)
            cutShort = midSearch
            let resumed = try daemon.client.resumeSession()
            let goesOn =
                midSearch
                ? "trial \(trial + 1), running when lineupd stopped, is logged interrupted"
                : "\(trial) trial(s) were logged; trial \(trial + 1) of"
            #expect(resumed.message?.contains(goesOn) == true, "\(resumed.message ?? "")")
        }
        try daemon.client.endSession(suggestions: nil)
        #expect(daemon.terminate().status == 0)
        let reader = try SessionLog.openReader(path: directory + "/lineup.db")
        let trials = try reader.trials(LogFilter(sessionId: session)).map {
            Trial(
                number: $0.number, outcome: $0.outcome.rawValue, dilution: $0.procedure?.dilution,
                rung: $0.procedure?.rung, reversals: $0.procedure?.reversals, stopped: $0.procedure?.stopped)
        }
        return (trials, directory + "/lineup.db", session)
    }

    @Test func aStaircaseCutByKillNineAndResumedRunsAsTheUncutOneAndVerifies() throws {
        guard let uncut = try staircase(seed: 5, cutAfter: nil) else { return }
        defer { try? FileManager.default.removeItem(atPath: (uncut.db as NSString).deletingLastPathComponent) }
        guard let cut = try staircase(seed: 5, cutAfter: 5) else { return }
        defer { try? FileManager.default.removeItem(atPath: (cut.db as NSString).deletingLastPathComponent) }

        // Not a trivial staircase: it went down, turned, and ran past the cut to its stop.
        #expect(uncut.trials.count > 7, "\(uncut.trials)")
        #expect(uncut.trials.contains { ($0.reversals ?? 0) > 0 && $0.number <= 7 }, "\(uncut.trials)")
        #expect(uncut.trials.last?.stopped == true, "\(uncut.trials)")
        #expect(Set(uncut.trials.compactMap(\.dilution)).count >= 2, "\(uncut.trials)")
        // Trial for trial the same dilutions, answers and states, after the cut as before it.
        #expect(cut.trials == uncut.trials, "cut: \(cut.trials)\nuncut: \(uncut.trials)")

        // The cut run's log: resumed once, its dilutions' commitments (made before the cut and
        // after) verified, and the re-scorer's own staircase agreeing.
        let notes = try SessionLog.openReader(path: cut.db).read { db in
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM event WHERE session_id = ? AND detail LIKE '%\"resumed\":true%'",
                arguments: [cut.session])
        }
        #expect(notes == 1)
        let blinding = try lineupctl(["verify-blinding", cut.session, "--db", cut.db])
        #expect(blinding.status == 0, "\(blinding.stdout)\(blinding.stderr)")
        #expect(blinding.stdout.contains("all \(cut.trials.count) trials match"), "\(blinding.stdout)")
        let scoring = try lineupctl(["verify-scoring", cut.session, "--db", cut.db])
        #expect(scoring.status == 0, "\(scoring.stdout)\(scoring.stderr)")
    }

    /// Cut mid-search instead: the trial running is logged aborted with the dilution it held and
    /// its procedure's row (no answer: the staircase stays, the next target trial gets its rung),
    /// and the session still verifies whole.
    @Test func aStaircaseTrialCutShortIsNoAnswerAndTheSessionStillVerifies() throws {
        guard let cut = try staircase(seed: 5, cutAfter: 5, midSearch: true) else { return }
        defer { try? FileManager.default.removeItem(atPath: (cut.db as NSString).deletingLastPathComponent) }
        let aborted = try #require(cut.trials.first { $0.number == 6 })
        #expect(aborted.outcome == "aborted", "\(cut.trials)")
        #expect(aborted.reversals == cut.trials[4].reversals, "\(cut.trials)")
        if let rung = aborted.rung, let next = cut.trials.dropFirst(6).first(where: { $0.rung != nil }) {
            #expect(next.rung == rung, "the staircase stayed: \(cut.trials)")
        }
        #expect(aborted.rung != nil || aborted.dilution == nil)
        #expect(cut.trials.last?.stopped == true, "\(cut.trials)")
        let blinding = try lineupctl(["verify-blinding", cut.session, "--db", cut.db])
        #expect(blinding.status == 0, "\(blinding.stdout)\(blinding.stderr)")
        let scoring = try lineupctl(["verify-scoring", cut.session, "--db", cut.db])
        #expect(scoring.status == 0, "\(scoring.stdout)\(scoring.stderr)")
    }
}
