import Foundation
import SessionLog
import StationControl
import Testing

/// `lineupctl dogs note` through a running lineupd: the new notes are in the daemon's log, the
/// ones the dog was added with kept; `dogs notes` lists both; bad input is one line and exit 1.
@Suite(.serialized, .ownThreads) struct DogNoteDaemonTests {
    @Test func aDogsNotesAreWrittenByTheDaemonAndKeptInHistory() throws {
        guard let daemon = try ServingStationTests.Daemon(speed: 30) else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady(dogs: []))
        // No --db: the row can only reach the log through lineupd.
        let env = ["LINEUP_SOCKET": daemon.socket]
        let added = try lineupctl(["dogs", "add", "Aino", "--notes", "shy of metal bowls"], environment: env)
        #expect(added.status == 0, "\(added.stderr)")
        let noted = try lineupctl(["dogs", "note", "aino", "Calmer at the lineup since May"], environment: env)
        #expect(noted.status == 0, "\(noted.stderr)")
        #expect(noted.stdout == "noted on aino\n", "\(noted.stdout)")
        for (arguments, message) in [
            (["dogs", "note", "Nobody", "hello"], "no dog \"Nobody\""),
            (["dogs", "note", "Aino", "  "], "a dog's notes need some text"),
        ] {
            let result = try lineupctl(arguments, environment: env)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.stdout.isEmpty, "\(arguments)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        let listed = try lineupctl(["dogs", "notes", "Aino", "--db", daemon.db], environment: env)
        #expect(listed.status == 0, "\(listed.stderr)")
        let lines = listed.stdout.split(separator: "\n")
        #expect(lines.count == 2, "\(listed.stdout)")
        #expect(lines.first?.hasSuffix("  shy of metal bowls") == true, "\(listed.stdout)")
        #expect(lines.last?.hasSuffix("  Calmer at the lineup since May") == true, "\(listed.stdout)")
        #expect(daemon.terminate().status == 0)

        let reader = try SessionLog.openReader(path: daemon.db)
        #expect(try reader.dogs().first?.notes == "Calmer at the lineup since May")
        #expect(
            try reader.dogNotes(dogId: reader.resolveDog("Aino")).map(\.text) == [
                "shy of metal bowls", "Calmer at the lineup since May",
            ])
    }
}
