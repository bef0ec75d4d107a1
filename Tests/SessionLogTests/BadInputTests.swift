import Foundation
import GRDB
import Testing
import TrainingEngine

@testable import SessionLog

@Suite struct BadInputTests {
    @Test func aMissingDatabase() throws {
        let path = temporaryLogPath("absent.db")
        #expect(throws: SessionLogError.databaseMissing(path: path)) { try SessionLog.openReader(path: path) }
        #expect(throws: SessionLogError.databaseMissing(path: path)) { try SessionLog(path: path, create: false) }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aLockedDatabase() throws {
        let path = temporaryLogPath()
        _ = try SessionLog(path: path)
        // Another process holding SQLite's exclusive lock (WAL readers are otherwise never blocked).
        var config = Configuration()
        config.allowsUnsafeTransactions = true  // the point is to hold the lock open
        let holder = try DatabaseQueue(path: path, configuration: config)
        try holder.inDatabase { db in
            try db.execute(sql: "PRAGMA locking_mode = EXCLUSIVE")
            try db.execute(sql: "BEGIN EXCLUSIVE")
        }
        #expect(throws: SessionLogError.databaseLocked(path: path)) {
            try SessionLog.openReader(path: path, busyTimeout: 0.1)
        }
        #expect(throws: SessionLogError.databaseLocked(path: path)) {
            try SessionLog(path: path, create: false, busyTimeout: 0.1)
        }
        try holder.inDatabase { db in try db.execute(sql: "ROLLBACK") }
    }

    @Test func unknownIds() throws {
        let log = try SessionLog(path: temporaryLogPath())
        let reader = log.reader
        #expect(throws: SessionLogError.unknownDog("Rex")) { try reader.resolveDog("Rex") }
        #expect(throws: SessionLogError.unknownSession("deadbeef")) { try reader.resolveSession("deadbeef") }
        #expect(throws: SessionLogError.unknownSession("not-an-id!")) { try reader.resolveSession("not-an-id!") }
        #expect(throws: SessionLogError.unknownSample("T-9")) { try reader.resolveSample("T-9") }
        #expect(throws: SessionLogError.unknownDog("x")) { try reader.progress(dogId: "x") }
    }

    @Test(arguments: [
        "yesterday", "2025-13-01", "2025-02-30", "2025-05-01T25:00", "2025-5-1", "2025-05-01T10:00+99:00",
    ])
    func malformedDates(_ text: String) {
        #expect(throws: SessionLogError.malformedDate(text)) { try ResearcherDate.parse(text) }
    }

    /// Each bad input through the real command: one line on stderr, a non-zero exit,
    /// nothing on stdout, nothing written.
    @Test func theCommandSaysOneLineAndWritesNothing() throws {
        let path = temporaryLogPath()
        let log = try SessionLog(path: path)
        try log.append([DogRecord(name: "Aino"), SampleRecord(label: "T-1", kind: .target)])
        let newer = temporaryLogPath()
        try SessionLog(path: newer).write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v9')")
        }
        let cases: [([String], String)] = [
            (["dogs", "--db", temporaryLogPath("absent.db")], "no session log"),
            (["sessions", "--db", path, "--dog", "Rex"], "no dog \"Rex\""),
            (["session", "show", "0123abcd", "--db", path], "no session \"0123abcd\""),
            (["trials", "--db", path, "--since", "last tuesday"], "malformed date"),
            (["export", "--what", "trials", "--db", path, "--until", "2025-02-30"], "malformed date"),
            (["progress", "--dog", "Rex", "--db", path], "no dog"),
            (["stats", "--db", newer], "newer lineup"),
            (["samples", "add", "T-2", "--kind", "target", "--collected-on", "2025-99-01", "--db", path], "malformed"),
            (["samples", "add", "T-1", "--kind", "target", "--db", path], "already in the log"),
            (["samples", "note", "T-404", "hello", "--db", path], "no sample"),
            (["samples", "note", "T-1", " ", "--db", path], "a note needs some text"),
            (["samples", "add", " ", "--kind", "blank", "--db", path], "a sample needs a label"),
            // Dilutions (issue 38): nothing of a ladder is written when any of it is refused.
            (["samples", "add-ladder", "--stock", "T-1", "--factor", "1", "--steps", "3", "--db", path], "--factor 1"),
            (["samples", "add-ladder", "--stock", "T-1", "--factor", "0.1", "--steps", "3", "--db", path], "above 1"),
            (["samples", "add-ladder", "--stock", "T-1", "--factor", "10", "--steps", "0", "--db", path], "--steps 0"),
            (
                ["samples", "add-ladder", "--stock", "T-9", "--factor", "10", "--steps", "3", "--db", path],
                "no sample \"T-9\""
            ),
            (
                [
                    "samples", "add-ladder", "--stock", "T-1", "--factor", "10", "--steps", "2", "--made-by",
                    "Anna Virtanen", "--db", path,
                ], "pseudonymous"
            ),
            (
                [
                    "samples", "add-ladder", "--stock", "T-1", "--factor", "10", "--steps", "2", "--made-on",
                    "2025-13-01", "--db", path,
                ], "malformed"
            ),
            (["samples", "add", "T-1/x", "--stock", "T-1", "--factor", "0.5", "--db", path], "--factor 0.5"),
            (["samples", "add", "T-1/x", "--stock", "T-1", "--concentration", "2", "--db", path], "--unit"),
            (
                ["samples", "add", "T-1/x", "--stock", "T-1", "--concentration=-2", "--unit", "ppb", "--db", path],
                "--concentration -2"
            ),
            (["samples", "add", "T-1/x", "--stock", "T-1", "--db", path], "give its --factor or its --concentration"),
            (
                ["samples", "add", "T-1/x", "--stock", "T-1", "--factor", "10", "--source", "clinic A", "--db", path],
                "--source is its stock's"
            ),
            (["samples", "add", "T-1/x", "--kind", "target", "--factor", "10", "--db", path], "give its --stock"),
            (["samples", "add", "T-2", "--db", path], "give its --kind"),
            (["dogs", "add", "aino", "--db", path], "a dog named \"aino\" is already in the log"),
            (["dogs", "add", "", "--db", path], "a dog needs a name"),
            (["dogs", "add", "Bo", "--db", path, "--socket", "/tmp/none.sock"], "not both"),
            (["dogs", "add", "Bo", "--db", temporaryLogPath("absent.db")], "no session log"),
        ]
        for (arguments, message) in cases {
            let result = try runLineupctl(arguments)
            #expect(result.status != 0, "\(arguments)")
            #expect(result.stdout.isEmpty, "\(arguments): \(result.stdout)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("lineupctl: "), "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        #expect(try log.reader.samples().map(\.label) == ["T-1"])
        #expect(try log.reader.dogs().map(\.name) == ["Aino"])
        #expect(try log.reader.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sample_note") } == 0)
    }

    @Test func theCommandsWorkOnAGoodLog() throws {
        let path = temporaryLogPath()
        let result = try runLineupctl(["dogs", "add", "Cara", "--born", "2022-03-04", "--db", path, "--create"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try runLineupctl(["samples", "add", "C-7", "--kind", "control", "--db", path]).status == 0)
        #expect(try runLineupctl(["samples", "note", "C-7", "from clinic B", "--db", path]).status == 0)
        let dogs = try runLineupctl(["dogs", "--json"], environment: ["LINEUP_DB": path])
        #expect(dogs.status == 0)
        #expect(dogs.stdout.contains("\"name\" : \"Cara\""))
        let show = try runLineupctl(["samples", "show", "C-7", "--db", path])
        #expect(show.stdout.contains("from clinic B"))
        let backup = temporaryLogPath("copy.db")
        #expect(try runLineupctl(["backup", backup, "--db", path]).status == 0)
        #expect(try SessionLog.openReader(path: backup).dogs().map(\.name) == ["Cara"])
    }
}
