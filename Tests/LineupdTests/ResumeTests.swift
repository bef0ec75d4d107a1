import Foundation
import Glibc
import SessionLog
import StationControl
import Testing
import TrainingEngine

/// A session cut short by `kill -9` of the real lineupd, resumed by the next one (issue 36):
/// the block goes on after the last trial logged, the trial running at the kill is logged
/// interrupted (aborted) from its own events, never run or scored again, and every trial is
/// in the log once; a double-blind block still verifies (`verify-blinding`, `verify-scoring`).
@Suite("a session cut short and resumed", .serialized, .ownThreads)
struct ResumeTests {
    /// The session's trial rows (the station's, not corrections): number, outcome, reason, id.
    static func trials(_ db: String, _ session: String) throws -> [(
        number: Int, outcome: String, reason: String?, id: String
    )] {
        try SessionLog.openReader(path: db).read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT number || '|' || outcome || '|' || id || '|' || coalesce(reason, '') FROM trial
                    WHERE session_id = ? AND corrects IS NULL ORDER BY number
                    """, arguments: [session]
            ).map { line in
                let parts = line.split(separator: "|", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
                return (Int(parts[0]) ?? -1, parts[1], parts[3].isEmpty ? nil : parts[3], parts[2])
            }
        }
    }

    /// The session's events of `kind` whose detail holds `text`, as the log has them on disk now
    /// (read beside the writing lineupd: the test waits for what it needs durable, never a guess
    /// of how long the writer takes).
    static func logged(_ db: String, _ session: String, kind: String, holding text: String) -> Int {
        (try? SessionLog.openReader(path: db, everything: true).read { db in
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM event WHERE session_id = ? AND kind = ? AND detail LIKE ?",
                arguments: [session, kind, "%\(text)%"])
        }) ?? 0
    }

    /// Pulls the plug on lineupd in the middle of trial `trial`, by construction: freezes it
    /// (SIGSTOP), reads the log, and kills it (SIGKILL) only when the trial's start cue is on disk
    /// and the trial is not logged; otherwise lets it run 5 ms and looks again. Looking at a
    /// running lineupd and then killing it let the trial end in between on a loaded machine (CI
    /// at 04b2467, ResumePageTests). False when that moment was never seen within `seconds`.
    static func killNineMidTrial(_ pid: pid_t, db: String, session: String, trial: Int, seconds: Double = 30)
        -> Bool
    {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            Glibc.kill(pid, SIGSTOP)
            let look = try? SessionLog.openReader(path: db, everything: true).read { db in
                (
                    starts: try Int.fetchOne(
                        db,
                        sql:
                            "SELECT count(*) FROM event WHERE session_id = ? AND kind = 'cue' AND detail LIKE '%trial-start%'",
                        arguments: [session]) ?? 0,
                    logged: try Int.fetchOne(
                        db, sql: "SELECT count(*) FROM trial WHERE session_id = ?", arguments: [session]) ?? 0
                )
            }
            if let look, look.starts >= trial, look.logged == trial - 1 {
                Glibc.kill(pid, SIGKILL)
                return true
            }
            Glibc.kill(pid, SIGCONT)
            if let look, look.logged >= trial { return false }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return false
    }

    /// Events of `trialId` of the given kind.
    static func events(_ db: String, trial: String, kind: String) throws -> Int {
        try SessionLog.openReader(path: db).read { db in
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM event WHERE trial_id = ? AND kind = ?", arguments: [trial, kind]) ?? 0
        }
    }

    @Test func aTrainerLedRoundCutShortByKillNineIsLoggedOnceAndTheExerciseGoesOn() throws {
        guard let first = try TrainerLedSessionTests.station() else { return }
        defer { if first.process.isRunning { _ = first.terminate() } }
        let client = first.client
        let env = ["LINEUP_SOCKET": first.socket]
        // study's target-scent/1: 4 repetitions of 30 s (3 s at speed 10), target and one empty.
        var request = SessionRequest(
            dog: "Aino", program: "study", step: "target-scent/1", mode: .trainerLed, samples: ["T-1"], seed: 5)
        request.durationSeconds = 30
        let started = try client.sessionStart(request)
        func round(_ n: Int, on client: ControlClient, kill: Bool = false) throws {
            let target = try #require(try client.layout(view: .handler).first { $0.kind == .target })
            _ = try client.ready()
            #expect(eventually(10) { (try? client.status().exercise) == n }, "repetition \(n) never started")
            // The dog holds at the target and is clicked.
            try client.simulate(SimulatedInput(input: target.station, active: true))
            usleep(100_000)
            #expect(try lineupctl(["simulate", "clicker", "press"], environment: env).status == 0)
            if kill {
                // The click (round 1's and this one's) on disk; then the plug is pulled.
                #expect(
                    eventually(10) {
                        Self.logged(first.db, started.session, kind: "note", holding: "manual_click") >= 2
                    },
                    "the click never reached the log")
                return
            }
            try client.simulate(SimulatedInput(input: target.station, active: false))
            #expect(eventually(15) { (try? client.status().exercisesDone) == n }, "repetition \(n) never ended")
        }
        try round(1, on: client)
        try round(2, on: client, kill: true)
        Glibc.kill(first.process.processIdentifier, SIGKILL)
        first.process.waitUntilExit()
        let session = started.session
        #expect(try Self.trials(first.db, session).map { $0.number } == [1])

        guard
            let second = try ServingStationTests.Daemon(
                speed: 10, extra: ["--no-virtual-dog"], directory: first.directory)
        else { return }
        defer { if second.process.isRunning { _ = second.terminate() } }
        #expect(second.waitReady(dogs: []))
        let env2 = ["LINEUP_SOCKET": second.socket]
        let shown = try lineupctl(["status"], environment: env2)
        #expect(
            shown.stdout.contains("State       interrupted: the session with Aino was interrupted at "),
            "\(shown.stdout)")
        #expect(
            shown.stdout.contains(
                "by a crash or a kill of lineupd; 1 of 4 round(s) are logged, round 2 was running and will not be scored: "
                    + "resume it (lineupctl session resume) "
                    + "or end it (lineupctl session end)"), "\(shown.stdout)")
        let resumed = try lineupctl(["session", "resume"], environment: env2)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(
            resumed.stdout.contains(
                "resumed: 1 round(s) were logged; round 2, running when lineupd stopped, is logged interrupted "
                    + "(aborted, not scored); press ready (or `lineupctl ready`) to start repetition 3 of 4."),
            "\(resumed.stdout)")
        // Resumed once: a second resume has nothing to go on with.
        #expect(try lineupctl(["session", "resume"], environment: env2).status == 1)
        let status = try second.client.status()
        #expect(status.state == .waitingForReady && status.trial == 3 && status.exercisesDone == 2, "\(status)")
        try round(3, on: second.client)
        try round(4, on: second.client)
        #expect(try second.client.status().state == .repetitionsDone)
        try second.client.endSession(suggestions: nil)
        #expect(second.terminate().status == 0)

        let rows = try Self.trials(first.db, session)
        #expect(rows.map { $0.number } == [1, 2, 3, 4], "every round once: \(rows.map { $0.number })")
        #expect(
            rows[1].outcome == "aborted" && rows[1].reason?.hasPrefix("interrupted: lineupd stopped during it") == true)
        #expect(rows[0].outcome == "hit" && rows[2].outcome == "hit" && rows[3].outcome == "hit", "\(rows)")
        // The interrupted round is the one its events name: the trainer's click is in it.
        #expect(try Self.events(first.db, trial: rows[1].id, kind: "note") >= 1)
        #expect(try SessionLog.openReader(path: first.db).session(id: session).endedHow == "ended")
    }

    @Test func aDoubleBlindBlockCutShortByKillNineGoesOnAndStillVerifies() throws {
        guard let first = try ServingStationTests.Daemon(speed: 10) else { return }
        defer { if first.process.isRunning { _ = first.terminate() } }
        #expect(first.waitReady())
        let trials = 6
        let session = try first.client.startSession(
            SessionRequest(
                dog: "Rex", program: "research-5-station", step: "phase-3/1", trials: trials, seed: 21,
                unlabelled: true))
        for trial in 1...2 {
            _ = try first.client.ready()
            #expect(eventually(30) { (try? first.client.status().trialsDone) == trial }, "trial \(trial) never ended")
            #expect(eventually(10) { (try? first.client.status().state) == .waitingForReady })
        }
        _ = try first.client.ready()
        // Trial 3 started and not logged: the plug is pulled.
        try #require(
            Self.killNineMidTrial(first.process.processIdentifier, db: first.db, session: session, trial: 3),
            "trial 3 was never seen started and unlogged")
        first.process.waitUntilExit()

        guard let second = try ServingStationTests.Daemon(speed: 10, directory: first.directory) else { return }
        defer { if second.process.isRunning { _ = second.terminate() } }
        #expect(second.waitReady())
        #expect(try second.client.status().state == .interrupted)
        // Still running to the log's readers: a resumable double-blind session stays withheld.
        let early = try lineupctl(["verify-blinding", session, "--db", second.db])
        #expect(early.status == 1 && early.stderr.contains("withheld"), "\(early.stderr)")
        let resumed = try second.client.resumeSession()
        #expect(resumed.message?.contains("trial 3, running when lineupd stopped, is logged interrupted") == true)
        #expect(resumed.message?.contains("trial 4 of 6 waits for ready") == true, "\(resumed.message ?? "")")
        for trial in 4...trials {
            _ = try second.client.ready()
            #expect(eventually(30) { (try? second.client.status().trialsDone) == trial }, "trial \(trial) never ended")
            if trial < trials { #expect(eventually(10) { (try? second.client.status().state) == .waitingForReady }) }
        }
        try second.client.endSession(suggestions: nil)
        #expect(second.terminate().status == 0)

        let rows = try Self.trials(first.db, session)
        #expect(rows.map { $0.number } == Array(1...trials), "every trial once: \(rows.map { $0.number })")
        #expect(rows[2].outcome == "aborted" && rows[2].reason?.contains("interrupted") == true, "\(rows[2])")
        let blinding = try lineupctl(["verify-blinding", session, "--db", first.db])
        #expect(blinding.status == 0, "\(blinding.stdout)\(blinding.stderr)")
        let scoring = try lineupctl(["verify-scoring", session, "--db", first.db])
        #expect(scoring.status == 0, "\(scoring.stdout)\(scoring.stderr)")
    }

    /// `lineupd --simulate --resume`: a simulated block (double-blind, its layouts committed)
    /// cut by `kill -9` of the real lineupd after its third trial is announced goes on in a
    /// second lineupd to its end: every trial once, at most the one cut short logged interrupted,
    /// the session ended, verify-blinding and verify-scoring pass. The emulated tier's power-cut
    /// run does the same across a reboot (hardware/vm/powercut.sh).
    @Test func aSimulatedBlockCutByKillNineGoesOnWithResume() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("resume-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = "\(dir)/lineup.db"
        let common = ["--simulate", "--speed", "30", "--device", "null", "--no-realtime", "--db", db]
        // Nothing to resume on a new log: said, exit 1.
        let nothing = try lineupd(common + ["--resume"])
        #expect(nothing.status == 1 && nothing.stderr.contains("no session was interrupted"), "\(nothing.stderr)")

        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let first = Process()
        first.executableURL = root.appendingPathComponent(".build/debug/lineupd")
        first.arguments = common + ["--trials", "10", "--seed", "4"]
        let out = Pipe()
        first.standardOutput = out
        first.standardError = FileHandle.nullDevice
        try first.run()
        let announced = TextSink()
        let reader = Thread {
            while true {
                let data = out.fileHandleForReading.availableData
                if data.isEmpty { break }
                announced.append(String(decoding: data, as: UTF8.self))
            }
        }
        reader.start()
        let trialLines = { announced.text.split(separator: "\n").filter { $0.hasPrefix("trial ") }.count }
        #expect(eventually(60) { trialLines() >= 3 }, "\(announced.text)")
        Glibc.kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        let cut = trialLines()
        #expect(cut < 10, "the block ended before the kill: \(announced.text)")

        let resumed = try lineupd(common + ["--resume"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stdout.contains("trials, resumed after trial "), "\(resumed.stdout)")
        let session = try #require(
            try SessionLog.openReader(path: db).read { db in try String.fetchOne(db, sql: "SELECT id FROM session") })
        let rows = try Self.trials(db, session)
        #expect(rows.map { $0.number } == Array(1...10), "every trial once: \(rows.map { $0.number })")
        let interrupted = rows.filter { $0.reason?.hasPrefix("interrupted:") == true }
        #expect(interrupted.count <= 1 && interrupted.allSatisfy { $0.outcome == "aborted" && $0.number > cut })
        #expect(try SessionLog.openReader(path: db).session(id: session).endedHow == "ended")
        // The resume is in the log with its boot (this one: the host did not reboot).
        let note = try SessionLog.openReader(path: db).read { db in
            try String.fetchOne(
                db, sql: "SELECT detail FROM event WHERE session_id = ? AND kind = 'note' AND trial_id IS NULL",
                arguments: [session])
        }
        #expect(note?.contains(#""resumed":true"#) == true && note?.contains(#""boot_id":""#) == true, "\(note ?? "")")
        let blinding = try lineupctl(["verify-blinding", session, "--db", db])
        #expect(blinding.status == 0, "\(blinding.stdout)\(blinding.stderr)")
        let scoring = try lineupctl(["verify-scoring", session, "--db", db])
        #expect(scoring.status == 0, "\(scoring.stdout)\(scoring.stderr)")
    }
}
