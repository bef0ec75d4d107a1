import Foundation
import SessionLog
import StationControl
import Testing

/// What the session records is what was asked: the handler's code, and only a dog the log
/// knows (or one said to be new), through the real lineupctl and the serving daemon.
@Suite(.serialized, .ownThreads) struct SessionRecordTests {
    @Test func anUnknownDogIsRefusedAndTheHandlerIsRecorded() throws {
        guard let daemon = try ServingStationTests.Daemon(speed: 30) else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady(dogs: ["Rex"]))
        let env = ["LINEUP_SOCKET": daemon.socket]
        let start = [
            "session", "start", "--program", "research-5-station", "--step", "phase-3/1", "--unlabelled",
        ]

        // A misspelt name: one line naming it and the known dogs, exit 1, nothing written.
        let misspelt = try lineupctl(start + ["--dog", "Rexx", "--trials", "2"], environment: env)
        #expect(misspelt.status == 1)
        #expect(misspelt.stderr.split(separator: "\n").count == 1, "\(misspelt.stderr)")
        #expect(misspelt.stderr.contains("no dog \"Rexx\"") && misspelt.stderr.contains("known: Rex"))
        #expect(misspelt.stderr.contains("--new-dog"))
        // --new-dog for a dog already there is refused too.
        let twice = try lineupctl(start + ["--dog", "rex", "--new-dog"], environment: env)
        #expect(twice.status == 1 && twice.stderr.contains("already in the log"), "\(twice.stderr)")

        // A handler is a code, never a name.
        let named = try lineupctl(start + ["--dog", "Rex", "--handler", "Anna Virtanen"], environment: env)
        #expect(named.status == 1 && named.stderr.contains("pseudonymous code"), "\(named.stderr)")
        // A new dog, said so, with the handler's code.
        let started = try lineupctl(
            start + ["--dog", "Bo", "--new-dog", "--handler", "H-07", "--trials", "1", "--json"], environment: env)
        #expect(started.status == 0, "\(started.stderr)")
        let end = try lineupctl(["session", "end"], environment: env)
        #expect(end.status == 0, "\(end.stderr)")
        // The same dog again, by name, and the same handler code: one row each.
        let again = try lineupctl(start + ["--dog", "Bo", "--handler", "H-07", "--trials", "1"], environment: env)
        #expect(again.status == 0, "\(again.stderr)")
        try daemon.client.ready()
        #expect(eventually(10) { (try? daemon.client.status().trialsDone) == 1 }, "the trial never ended")
        _ = try lineupctl(["session", "end"], environment: env)

        // A correction through the daemon (the group may only read the log on a board).
        let listed = try lineupctl(["trials", "--db", daemon.db, "--json", "--limit", "1"])
        let newest = try #require(
            (try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])?.first?["id"]
                as? String)
        let corrected = try lineupctl(
            ["trial", "correct", String(newest.prefix(8)), "--outcome", "aborted", "--reason", "a door slammed"],
            environment: env)
        #expect(corrected.status == 0, "\(corrected.stderr)")
        let wrong = try lineupctl(
            ["trial", "correct", String(newest.prefix(8)), "--outcome", "miss", "--reason", "x"], environment: env)
        #expect(wrong.status == 1 && wrong.stderr.contains("already corrected"), "\(wrong.stderr)")
        let shownTrials = try lineupctl(["trials", "--db", daemon.db, "--limit", "1"])
        #expect(
            shownTrials.stdout.contains("corrected (was \(newest.prefix(8))): a door slammed"), "\(shownTrials.stdout)")
        // A station by its letter, through lineupd (whose log this lineupctl is not told of: the
        // board's default names stand in): the correction, corrected to a false alert at a
        // station that did not hold the target.
        let correction = try #require(
            (try JSONSerialization.jsonObject(
                with: Data(try lineupctl(["trials", "--db", daemon.db, "--json", "--limit", "1"]).stdout.utf8))
                as? [[String: Any]])?.first)
        let layout = try #require(correction["layout"] as? [[String: Any]])
        let notTarget = try #require(layout.first { $0["kind"] as? String != "target" }?["station"] as? Int)
        let letter = String(UnicodeScalar(UInt8(64 + notTarget)))
        let byLetter = try lineupctl(
            [
                "trial", "correct", String((correction["id"] as! String).prefix(8)), "--outcome", "false-alert",
                "--indicated", letter, "--reason", "video: held at \(letter)",
            ], environment: env)
        #expect(byLetter.status == 0, "\(byLetter.stderr)")
        let after = try SessionLog.openReader(path: daemon.db).trials().first {
            $0.corrects == correction["id"] as? String
        }
        #expect(after?.indicatedStation == notTarget && after?.outcome == .falseAlert, "\(String(describing: after))")
        #expect(daemon.terminate().status == 0)

        let reader = try SessionLog.openReader(path: daemon.db)
        #expect(try reader.dogs().map(\.name).sorted() == ["Bo", "Rex"])
        let sessions = try reader.sessions()
        #expect(sessions.count == 2)
        for s in sessions {
            #expect(try reader.session(id: s.id).handler == "H-07")
            #expect(s.dog == "Bo")
        }
        let handlers = try reader.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM handler") }
        #expect(handlers == 1)
        // The program the sessions ran is kept as its text, not its name.
        let program = try reader.read { db in try String.fetchOne(db, sql: "SELECT content FROM program") }
        #expect(program?.contains("[[phases]]") == true, "\(program ?? "-")")
        let shown = try lineupctl(["session", "show", String(sessions[0].id.prefix(8)), "--db", daemon.db])
        #expect(shown.stdout.contains("Handler     H-07"), "\(shown.stdout)")
    }
}
