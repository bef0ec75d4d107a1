import Foundation
import GRDB
import TrainingEngine

// The researcher's own additions to the log: dogs, samples and notes on samples. The same
// checks run whether lineupd writes them (the station's usual path, asked over its control
// socket) or lineupctl writes a database file directly (`--db`), so both refuse the same
// input with the same words. Each is one transaction: checked and written, or nothing.

extension SessionLog {
    /// Adds a dog. Refuses an empty name, a malformed birth date, and a name already in the
    /// log: sessions are started by the dog's name, so two dogs of one name could not be told
    /// apart at the station.
    public func addDog(name: String, born: String?, notes: String?) throws -> DogRecord {
        let name = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { throw SessionLogError.invalidInput("a dog needs a name") }
        let born = try born.map { try ResearcherDate.validateDay($0) }
        let dog = DogRecord(name: name, born: born, notes: notes.flatMap { $0.isEmpty ? nil : $0 })
        try writeChecked { db in
            if let existing = try String.fetchOne(
                db, sql: "SELECT id FROM dog WHERE name = ? COLLATE NOCASE", arguments: [name])
            {
                throw SessionLogError.duplicateDog(name: name, id: existing)
            }
            try dog.append(to: db)
        }
        return dog
    }

    /// Adds a sample. Refuses an empty label, facts that fail ``SampleFacts/checked()`` (a
    /// malformed collection date), and a label already in the log (the label is what is
    /// written on the tube).
    public func addSample(_ sample: SampleRecord) throws -> SampleRecord {
        var sample = sample
        sample.label = sample.label.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !sample.label.isEmpty else { throw SessionLogError.invalidInput("a sample needs a label") }
        sample.facts = try sample.facts.checked()
        for (name, limit) in [("--max-uses", sample.maxUses), ("--max-uses-per-dog", sample.maxUsesPerDog)] {
            if let limit, limit < 1 {
                throw SessionLogError.invalidInput(
                    "\(name) \(limit): a usage limit is at least 1 (leave it out for none)")
            }
        }
        try writeChecked { db in
            if try String.fetchOne(db, sql: "SELECT id FROM sample WHERE label = ?", arguments: [sample.label])
                != nil
            {
                throw SessionLogError.duplicateSample(label: sample.label)
            }
            try sample.append(to: db)
        }
        return sample
    }

    /// Adds a note to a sample named by its label, full id or id prefix.
    public func noteSample(_ sample: String, text: String) throws -> SampleNote {
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw SessionLogError.invalidInput("a note needs some text")
        }
        var note: SampleNote?
        try writeChecked { db in
            let byLabel = try String.fetchOne(db, sql: "SELECT id FROM sample WHERE label = ?", arguments: [sample])
            guard let id = try byLabel ?? LogReader.resolve(db, table: "sample", text: sample, kind: "sample"),
                let uuid = UUID(uuidString: id)
            else { throw SessionLogError.unknownSample(sample) }
            let made = SampleNote(sampleId: uuid, text: text)
            try made.append(to: db)
            note = made
        }
        guard let note else { throw SessionLogError.database("the note was not written") }
        return note
    }

    /// New notes for a dog named by its name (any case), full id or id prefix: a new dated row,
    /// which the dog's current notes are from now on; the earlier notes stay in the log.
    public func noteDog(_ dog: String, text: String) throws -> DogNote {
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw SessionLogError.invalidInput("a dog's notes need some text") }
        var note: DogNote?
        try writeChecked { db in
            let byName = try String.fetchAll(
                db, sql: "SELECT id FROM dog WHERE name = ? COLLATE NOCASE", arguments: [dog])
            if byName.count > 1 { throw SessionLogError.ambiguousId(dog, kind: "dog") }
            guard let id = try byName.first ?? LogReader.resolve(db, table: "dog", text: dog, kind: "dog"),
                let uuid = UUID(uuidString: id)
            else { throw SessionLogError.unknownDog(dog) }
            let made = DogNote(dogId: uuid, text: text)
            try made.append(to: db)
            note = made
        }
        guard let note else { throw SessionLogError.database("the dog's notes were not written") }
        return note
    }

    /// A comment on a session after it: appended, never edited (a later note adds to it).
    public func noteSession(_ session: String, text: String) throws -> SessionNote {
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw SessionLogError.invalidInput("a note needs some text") }
        var note: SessionNote?
        try writeChecked { db in
            guard let id = try LogReader.resolve(db, table: "session", text: session, kind: "session"),
                let uuid = UUID(uuidString: id)
            else { throw SessionLogError.unknownSession(session) }
            let made = SessionNote(sessionId: uuid, kind: .comment, text: text)
            try made.append(to: db)
            note = made
        }
        guard let note else { throw SessionLogError.database("the note was not written") }
        return note
    }

    /// A handler by pseudonymous code: logged once, the same id every later time.
    public func logHandler(code: String) throws -> UUID {
        let code = code.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !code.isEmpty else { throw SessionLogError.invalidInput("a handler code cannot be empty") }
        // A code, not a name: personal data stays out of the log.
        guard Self.isPseudonymousCode(code) else {
            throw SessionLogError.invalidInput(
                "handler \"\(code)\": a handler is a pseudonymous code (letters, digits, - _ ., at most 32), not a name"
            )
        }
        var id: UUID?
        try writeChecked { db in
            let record = HandlerRecord(code: code)
            try db.execute(
                sql:
                    "INSERT INTO handler (id, code, mono_ns, wall_ns) VALUES (?, ?, ?, ?) ON CONFLICT(code) DO NOTHING",
                arguments: [record.id.logText, code, record.time.monoNs, record.time.wallNs])
            id = try String.fetchOne(db, sql: "SELECT id FROM handler WHERE code = ?", arguments: [code])
                .flatMap(UUID.init(uuidString:))
        }
        guard let id else { throw SessionLogError.database("the handler \(code) was not logged") }
        return id
    }

    /// Logs a program's text once (by its SHA-256) and returns the id its row has in the log:
    /// a new session must refer to that id, not to a fresh record's, which is not inserted when
    /// the same text was logged before (every second session of a program once failed its
    /// foreign key this way).
    public func logProgram(_ program: ProgramRecord) throws -> UUID {
        var id: UUID?
        try writeChecked { db in
            try program.append(to: db)
            id = try String.fetchOne(db, sql: "SELECT id FROM program WHERE sha256 = ?", arguments: [program.sha256])
                .flatMap(UUID.init(uuidString:))
        }
        guard let id else { throw SessionLogError.database("the program \(program.name) was not logged") }
        return id
    }

    /// Marks every session of `station` that has no end as interrupted: lineupd calls it as
    /// it starts, before any session of its own, so each one found was cut short by a crash,
    /// a kill or a power cut. Returns them (id, dog, scored trials) for the journal.
    ///
    /// Only under the log's ``LogLock``: another lineupd writing this log would have its live
    /// session taken for a dead one.
    /// `resumable`: the one session lineupd can resume (its resume file is beside the log); it
    /// is left without an end, to be resumed or ended by a person.
    public func markInterruptedSessions(station: String, holding lock: LogLock, resumable: UUID? = nil) throws -> [(
        session: String, dog: String, trials: Int
    )] {
        guard lock.covers(logAt: path) else {
            throw SessionLogError.invalidInput(
                "the lock held is \(lock.path), not this log's (\(path)): unfinished sessions are not looked for")
        }
        var found: [(String, String, Int)] = []
        try writeChecked { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT s.id, d.name, (SELECT count(*) FROM trial t WHERE t.session_id = s.id) AS trials,
                        (SELECT max(t.number) FROM trial t WHERE t.session_id = s.id) AS last
                    FROM session s JOIN dog d ON d.id = s.dog_id
                    WHERE s.station IS ? AND NOT EXISTS (SELECT 1 FROM session_end e WHERE e.session_id = s.id)
                    ORDER BY s.wall_ns
                    """, arguments: [station])
            for row in rows {
                let id: String = row["id"]
                guard let uuid = UUID(uuidString: id), uuid != resumable else { continue }
                let last: Int? = row["last"]
                let detail =
                    "lineupd did not end it (a crash, a kill or a power cut); "
                    + (last.map { "trials after #\($0) were not scored" } ?? "no trial was scored")
                try SessionEnd(sessionId: uuid, how: .interrupted, detail: detail).append(to: db)
                found.append((id, row["name"], row["trials"]))
            }
        }
        return found
    }

    /// One write transaction whose checks throw ``SessionLogError`` as they are.
    func writeChecked(_ body: (Database) throws -> Void) throws {
        do {
            try pool.write { db in try body(db) }
        } catch {
            throw SessionLogError.from(error, path: path)
        }
    }
}
