import Foundation
import GRDB
import Testing

@testable import SessionLog

/// A dog's notes written after it was added: each a new dated row, the dog's notes now the
/// latest, the earlier ones (and those it was added with) kept in the log and listed.
@Suite struct DogNotesTests {
    @Test func aNewNoteStandsAndTheOldOnesStay() throws {
        let log = try SessionLog(path: temporaryLogPath())
        let aino = try log.addDog(name: "Aino", born: nil, notes: "shy of metal bowls")
        _ = try log.addDog(name: "Cara", born: nil, notes: "steady")
        let first = try log.noteDog("aino", text: "  calmer at the lineup  ")
        let second = try log.noteDog(String(aino.id.uuidString.lowercased().prefix(8)), text: "works 5 stations")
        #expect(first.dogId == aino.id && second.dogId == aino.id)
        #expect(first.text == "calmer at the lineup")

        let reader = log.reader
        let dogs = try reader.dogs()
        #expect(dogs.first { $0.name == "Aino" }?.notes == "works 5 stations")
        #expect(dogs.first { $0.name == "Cara" }?.notes == "steady")
        let history = try reader.dogNotes(dogId: aino.id.uuidString.lowercased())
        #expect(history.map(\.text) == ["shy of metal bowls", "calmer at the lineup", "works 5 stations"])
        #expect(history.allSatisfy { !$0.time.isEmpty })
        // The dog's own row is as it was added: nothing was edited.
        let added = try reader.read { db in
            try String.fetchOne(
                db, sql: "SELECT notes FROM dog WHERE id = ?", arguments: [aino.id.uuidString.lowercased()])
        }
        #expect(added == "shy of metal bowls")
        // And the notes' rows cannot be edited either.
        #expect(throws: (any Error).self) {
            try log.pool.write { db in try db.execute(sql: "UPDATE dog_note SET text = 'x'") }
        }
        #expect(throws: (any Error).self) {
            try log.pool.write { db in try db.execute(sql: "DELETE FROM dog_note") }
        }
        // The dogs export gives the notes as they stand.
        let csv = try exportText(reader, .dogs, .csv)
        #expect(csv.contains("works 5 stations") && !csv.contains("calmer at the lineup"), "\(csv)")
    }

    @Test func aDogWithoutNotesGetsItsFirst() throws {
        let log = try SessionLog(path: temporaryLogPath())
        let bo = try log.addDog(name: "Bo", born: nil, notes: nil)
        #expect(try log.reader.dogNotes(dogId: bo.id.uuidString.lowercased()).isEmpty)
        _ = try log.noteDog("Bo", text: "first notes")
        #expect(try log.reader.dogs().first?.notes == "first notes")
        #expect(try log.reader.dogNotes(dogId: bo.id.uuidString.lowercased()).map(\.text) == ["first notes"])
    }

    @Test func badNotesAreRefusedAndNothingIsWritten() throws {
        let log = try SessionLog(path: temporaryLogPath())
        _ = try log.addDog(name: "Aino", born: nil, notes: nil)
        #expect(throws: SessionLogError.unknownDog("Nobody")) { try log.noteDog("Nobody", text: "hello") }
        #expect(throws: SessionLogError.invalidInput("a dog's notes need some text")) {
            try log.noteDog("Aino", text: " \n ")
        }
        #expect(try log.reader.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM dog_note") } == 0)
    }

    @Test func aMergedLogBringsItsDogsNotes() throws {
        let lab = try SessionLog(path: temporaryLogPath())
        _ = try lab.addDog(name: "Aino", born: nil, notes: "lab notes")
        let stationPath = temporaryLogPath()
        let station = try SessionLog(path: stationPath)
        _ = try station.addDog(name: "aino", born: nil, notes: nil)
        _ = try station.noteDog("aino", text: "from the station")
        _ = try lab.merge(from: stationPath)
        let dogs = try lab.reader.dogs()
        #expect(dogs.count == 1)
        #expect(dogs.first?.notes == "from the station")
        let id = try lab.reader.resolveDog("Aino")
        #expect(try lab.reader.dogNotes(dogId: id).map(\.text) == ["lab notes", "from the station"])
    }
}
