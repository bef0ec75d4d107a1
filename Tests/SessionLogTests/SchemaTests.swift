import Figures
import Foundation
import GRDB
import Testing
import TrainingEngine

@testable import SessionLog

@Suite struct SchemaTests {
    @Test func migratesAnEmptyDatabase() throws {
        let path = temporaryLogPath()
        let log = try SessionLog(path: path)
        let (tables, applied, journal) = try log.reader.read { db in
            (
                try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"),
                try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations"),
                try String.fetchOne(db, sql: "PRAGMA journal_mode")
            )
        }
        for table in Schema.appendOnlyTables { #expect(tables.contains(table)) }
        #expect(applied == Schema.knownVersions)
        #expect(journal == "wal")
        // Opening again finds nothing to do and loses nothing.
        try log.append([DogRecord(name: "Aino")])
        let again = try SessionLog(path: path)
        #expect(try again.reader.dogs().map(\.name) == ["Aino"])
    }

    @Test func migratesAVersion1LogSoItsSessionsAreNotTakenForInterrupted() throws {
        let path = temporaryLogPath()
        let dog = DogRecord(name: "Aino")
        let session = SessionRecord(dogId: dog.id, phase: "1", mode: .automated, station: "pi")
        do {
            // A log as the first release wrote it: only v1 applied.
            let queue = try DatabaseQueue(path: path)
            try Schema.migrator.migrate(queue, upTo: "v1")
            try queue.write { db in
                try dog.append(to: db)
                try session.append(to: db)
            }
        }
        // A reader of this build refuses it until the station has migrated it.
        #expect(throws: SessionLogError.self) { try SessionLog.openReader(path: path) }
        let log = try SessionLog(path: path)
        let lock = try LogLock(logPath: path)
        let ends = try log.reader.read { db in try Row.fetchAll(db, sql: "SELECT * FROM session_end") }
        #expect(ends.count == 1)
        #expect(ends.first?["how"] == "unknown")
        #expect(ends.first?["session_id"] == session.id.uuidString.lowercased())
        let endId: String = try #require(ends.first?["id"])
        #expect(UUID(uuidString: endId) != nil, "\(endId)")
        // Nothing is lost, and the station's next start finds nothing unfinished.
        #expect(try log.reader.dogs().map(\.name) == ["Aino"])
        #expect(try log.markInterruptedSessions(station: "pi", holding: lock).isEmpty)
        #expect(
            try SessionLog.openReader(path: path).session(id: session.id.uuidString.lowercased()).endedHow == "unknown")
    }

    @Test func sessionsWithoutAnEndAreMarkedInterruptedOnceAndOnlyForTheirStation() throws {
        let log = try SessionLog(path: temporaryLogPath())
        let lock = try LogLock(logPath: log.path)
        let dog = DogRecord(name: "Aino")
        let cut = SessionRecord(dogId: dog.id, phase: "1", mode: .automated, station: "pi")
        let ended = SessionRecord(dogId: dog.id, phase: "1", mode: .automated, station: "pi")
        let elsewhere = SessionRecord(dogId: dog.id, phase: "1", mode: .automated, station: "other")
        try log.append([dog, cut, ended, elsewhere, SessionEnd(sessionId: ended.id, how: .ended)])
        let found = try log.markInterruptedSessions(station: "pi", holding: lock)
        #expect(found.map(\.session) == [cut.id.uuidString.lowercased()])
        #expect(found.first?.dog == "Aino")
        #expect(try log.markInterruptedSessions(station: "pi", holding: lock).isEmpty)
        let details = try log.reader.session(id: cut.id.uuidString.lowercased())
        #expect(details.endedHow == "interrupted")
        #expect(details.endDetail?.contains("no trial was scored") == true)
        #expect(try log.reader.session(id: elsewhere.id.uuidString.lowercased()).endedHow == nil)
        // Append-only like the rest: an end is never rewritten.
        #expect(throws: (any Error).self) {
            try log.write { db in try db.execute(sql: "UPDATE session_end SET how = 'ended'") }
        }
    }

    @Test func aProgramIsLoggedOnceAndEverySessionOfItRefersToThatRow() throws {
        let log = try SessionLog(path: temporaryLogPath())
        let dog = DogRecord(name: "Aino")
        try log.append([dog])
        let first = try log.logProgram(ProgramRecord(name: "study", content: "[program]\nname = 'study'"))
        // The same text again, as a second session of the program brings it: the first row's id.
        let again = ProgramRecord(name: "study", content: "[program]\nname = 'study'")
        #expect(try log.logProgram(again) == first)
        #expect(again.id != first)
        for _ in 0..<2 {
            try log.append([SessionRecord(dogId: dog.id, programId: first, phase: "1", mode: .automated)])
        }
        let other = try log.logProgram(ProgramRecord(name: "study", content: "[program]\nname = 'study v2'"))
        #expect(other != first)
        #expect(try log.reader.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM program") } == 2)
        #expect(try log.reader.sessions().count == 2)
    }

    @Test func walFilesOutliveTheWriterSoReadOnlyUsersCanOpenTheLog() throws {
        let path = temporaryLogPath()
        do {
            let log = try SessionLog(path: path)
            try log.append([DogRecord(name: "Aino")])
        }
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(FileManager.default.fileExists(atPath: path + "-shm"))
        #expect(try SessionLog.openReader(path: path).dogs().count == 1)
    }

    @Test func rowsCannotBeRewritten() throws {
        let log = try SessionLog(path: temporaryLogPath())
        try log.append([DogRecord(name: "Aino")])
        #expect(throws: (any Error).self) {
            try log.write { db in try db.execute(sql: "UPDATE dog SET name = 'Bruno'") }
        }
        #expect(throws: (any Error).self) {
            try log.write { db in try db.execute(sql: "DELETE FROM dog") }
        }
        #expect(try log.reader.dogs().map(\.name) == ["Aino"])
    }

    @Test func refusesANewerSchemaAndWritesNothing() throws {
        let path = temporaryLogPath()
        let log = try SessionLog(path: path)
        try log.append([DogRecord(name: "Aino")])
        // A later lineup added a migration this build does not know.
        try log.write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v2-from-the-future')")
        }
        let expected = SessionLogError.newerSchema(path: path, unknownVersions: ["v2-from-the-future"])
        #expect(throws: expected) { try SessionLog.openReader(path: path) }
        #expect(throws: expected) { try SessionLog(path: path) }
        #expect(try log.reader.dogs().count == 1)
        #expect(expected.description.contains("newer lineup"))
    }

    @Test func refusesAFileThatIsNotASessionLog() throws {
        let path = temporaryLogPath()
        try Data("hello, not a database at all".utf8 + [UInt8](repeating: 0, count: 4096)).write(
            to: URL(fileURLWithPath: path))
        #expect(throws: SessionLogError.notASessionLog(path: path)) { try SessionLog.openReader(path: path) }

        let other = temporaryLogPath()
        let queue = try DatabaseQueue(path: other)
        try queue.write { db in try db.execute(sql: "CREATE TABLE photos (id INTEGER)") }
        #expect(throws: SessionLogError.notASessionLog(path: other)) { try SessionLog.openReader(path: other) }
        #expect(throws: SessionLogError.notASessionLog(path: other)) { try SessionLog(path: other) }
    }

    @Test func programsAreHashedWithSHA256() {
        #expect(SHA256Digest.hex(of: []) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            SHA256Digest.hex(of: Array("abc".utf8))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256Digest.hex(of: Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        // FIPS 180-4's long message: one million "a".
        #expect(
            SHA256Digest.hex(of: [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        #expect(ProgramRecord(name: "p", content: "abc").sha256.hasPrefix("ba7816bf"))
    }

    @Test func formatsTimesAsISO8601WithOffset() throws {
        var helsinki = ISOTimeFormatter(timeZone: try #require(TimeZone(identifier: "Europe/Helsinki")))
        // 2025-03-01T09:00:00Z is winter time (+02:00), 2025-07-01T09:00:00Z summer (+03:00).
        #expect(helsinki.string(wallNs: 1_740_819_600_123_456_789) == "2025-03-01T11:00:00.123456+02:00")
        #expect(helsinki.string(wallNs: 1_751_360_400_000_000_000) == "2025-07-01T12:00:00.000000+03:00")
        var utc = ISOTimeFormatter(timeZone: try #require(TimeZone(secondsFromGMT: 0)))
        #expect(utc.string(wallNs: 0) == "1970-01-01T00:00:00.000000+00:00")
        #expect(utc.string(wallNs: -1_000) == "1969-12-31T23:59:59.999999+00:00")
    }

    @Test func readsTheDatesResearchersType() throws {
        let utc = try #require(TimeZone(secondsFromGMT: 0))
        #expect(try ResearcherDate.parse("2025-03-01", timeZone: utc) == 1_740_787_200_000_000_000)
        #expect(try ResearcherDate.parse("2025-03-01T09:00", timeZone: utc) == 1_740_819_600_000_000_000)
        #expect(try ResearcherDate.parse("2025-03-01 11:00:00+02:00", timeZone: utc) == 1_740_819_600_000_000_000)
        #expect(try ResearcherDate.parse("2025-03-01T09:00:00.5Z", timeZone: utc) == 1_740_819_600_500_000_000)
        #expect(try ResearcherDate.parseUpperBound("2025-03-01", timeZone: utc) == 1_740_873_600_000_000_000)
    }
}
