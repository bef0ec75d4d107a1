import Figures
import Foundation
import GRDB
import Testing
import TrainingEngine

@testable import SessionLog

/// The rows the writer puts in every table, compared with those the hand-written INSERTs
/// (before GRDB's records) put there for the same session: Fixtures/record-rows.json was
/// captured from that code. Every value is compared as SQLite's `quote()` spells it, so a
/// change of storage class (text for an integer, a blob for a UUID) or of a byte fails.
///
/// To capture the fixture again (only when the schema changes on purpose): run this suite
/// with `LINEUP_CAPTURE_ROWS=1`; it writes the file and fails, so it cannot pass that way.
@Suite struct RecordRowsTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/record-rows.json")

    /// Every table a record writes: the append-only tables but `log_identity` and
    /// `merged_log`, which no record writes (their ids are random per log).
    static let tables = Schema.appendOnlyTables + ["session_end"]

    @Test func theWriterWritesTheSameRowsAsTheHandWrittenInserts() throws {
        let log = try SessionLog(path: temporaryLogPath())
        try Self.writeSession(log)
        let rows = try Self.dump(log)
        #expect(rows.map(\.table) == Self.tables)
        #expect(rows.allSatisfy { !$0.rows.isEmpty })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        if ProcessInfo.processInfo.environment["LINEUP_CAPTURE_ROWS"] == "1" {
            try encoder.encode(rows).write(to: Self.fixture)
            Issue.record("captured \(Self.fixture.path); run again without LINEUP_CAPTURE_ROWS")
            return
        }
        let expected = try JSONDecoder().decode([TableRows].self, from: Data(contentsOf: Self.fixture))
        #expect(rows.map(\.table) == expected.map(\.table))
        for (got, want) in zip(rows, expected) {
            #expect(got.columns == want.columns, "columns of \(got.table)")
            #expect(got.rows.count == want.rows.count, "rows of \(got.table)")
            for (index, (row, wanted)) in zip(got.rows, want.rows).enumerated() {
                #expect(row == wanted, "\(got.table) row \(index)")
            }
        }
    }

    @Test func aProgramWithTheSameTextIsLoggedOnce() throws {
        let log = try SessionLog(path: temporaryLogPath())
        let first = ProgramRecord(name: "study", content: "[phase]\n", time: Self.time(1))
        let again = ProgramRecord(name: "study again", content: "[phase]\n", time: Self.time(2))
        let other = ProgramRecord(name: "other", content: "[other]\n", time: Self.time(3))
        try log.append([first, again, other])
        let names = try log.reader.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM program ORDER BY wall_ns")
        }
        #expect(names == ["study", "other"])
        // The same id with other text is a clash, not a duplicate program: refused.
        #expect(throws: SessionLogError.self) {
            try log.append([ProgramRecord(id: first.id, name: "clash", content: "[clash]\n", time: Self.time(4))])
        }
    }

    /// The event insert stays hand-written for speed; its GRDB record must write the same row.
    @Test func anEventWrittenByHandOrAsItsRecordIsTheSameRow() throws {
        let byHand = try SessionLog(path: temporaryLogPath())
        let asRecord = try SessionLog(path: temporaryLogPath())
        let events =
            Self.events(session: Self.id(9), trial: Self.id(11)) + [LoggedEvent(kind: .edge, time: Self.time(14))]
        try byHand.write { db in for event in events { try event.append(to: db) } }
        try asRecord.write { db in for event in events { try event.row.insert(db) } }
        let written = try byHand.reader.read { db in try Self.rows(db, "event") }
        #expect(written.rows.count == events.count)
        #expect(try asRecord.reader.read { db in try Self.rows(db, "event") } == written)
    }

    // MARK: The session

    static func id(_ n: Int) -> UUID {
        UUID(uuidString: String(format: "00000000-0000-7000-8000-%012d", n))!
    }

    static func time(_ n: Int64) -> LogTime {
        LogTime(monoNs: 1_000_000_000 * n + 17, wallNs: 1_760_000_000_000_000_000 + 1_000_000_000 * n + 23)
    }

    /// A session that sets every column a record can set, and leaves each optional one
    /// empty at least once, written through the writer as the station writes.
    static func writeSession(_ log: SessionLog) throws {
        let writer = log.makeWriter(batchInterval: .seconds(60))
        defer { writer.close() }
        let rex = DogRecord(id: id(1), name: "Rex", born: "2021-04-01", notes: "Lab's 'best' nose", time: time(1))
        let aino = DogRecord(id: id(2), name: "Ainö", time: time(2))
        let handler = HandlerRecord(id: id(3), code: "H-7", time: time(3))
        let target = SampleRecord(
            id: id(4), label: "T-7", kind: .target,
            facts: SampleFacts(
                diagnosis: "positive", source: "clinic A", collection: "mask, 30 min", processing: "frozen −20 °C",
                collectedOn: "2025-05-01"), time: time(4))
        let control = SampleRecord(id: id(5), label: "C-1", kind: .control, time: time(5))
        let note = SampleNote(id: id(6), sampleId: target.id, text: "lid cracked\nreplaced", time: time(6))
        let program = ProgramRecord(id: id(7), name: "study", content: "[phase]\nname = \"1\"\n", time: time(7))
        let sameProgram = ProgramRecord(id: id(8), name: "study", content: program.content, time: time(8))
        let session = SessionRecord(
            id: id(9), dogId: rex.id, handlerId: handler.id, programId: program.id, phase: "phase-3",
            phaseSteps: 4, step: "phase-3/1", exercise: "lineup", mode: .doubleBlind,
            settings: #"{"hold_ms":2000}"#, station: "bench-1", bootId: "b00t", time: time(9))
        let bare = SessionRecord(id: id(10), dogId: aino.id, mode: .trainerLed, bootId: nil, time: time(10))
        try writer.commit([rex, aino, handler, target, control, note, program])
        try writer.commit([sameProgram, session, bare])

        let seen = StationSeen(
            visited: true, indicated: true, firstIndicationNs: 2_500_000_000, sniffs: 3, dwellNs: 4_000_000_000)
        let passed = StationSeen(visited: true, indicated: false, firstIndicationNs: nil, sniffs: 1, dwellNs: 300)
        let unseen = StationSeen(visited: false, indicated: false)
        let hit = TrialRecord(
            id: id(11), sessionId: session.id, number: 1, seed: .max,
            layout: [
                StationSlot(station: 1, sampleId: control.id, kind: .control, seen: passed),
                StationSlot(station: 2, sampleId: target.id, kind: .target, seen: seen),
                StationSlot(station: 3, sampleId: nil, kind: .blank, seen: unseen),
            ],
            outcome: .hit, indicatedStation: 2, latencyNs: 2_500_000_000, searchNs: 4_300_000_300,
            started: time(11), ended: time(12))
        let events =
            Self.events(session: session.id, trial: hit.id) + [LoggedEvent(kind: .edge, time: time(14), value: -1)]
        for event in events { #expect(writer.submit(event)) }
        try writer.commitTrial(hit)

        // No station data (as before schema v3), no seed, no indication.
        let miss = TrialRecord(
            id: id(12), sessionId: session.id, number: 2, seed: 0,
            layout: [
                StationSlot(station: 1, sampleId: target.id, kind: .target),
                StationSlot(station: 2, sampleId: control.id, kind: .distractor),
            ],
            outcome: .miss, started: time(13), ended: time(14))
        let aborted = TrialRecord(
            id: id(13), sessionId: bare.id, number: 1, layout: [], outcome: .aborted, started: time(14),
            ended: time(15), reason: "stopped")
        try writer.commitTrial(miss)
        try writer.commitTrial(aborted)
        let correction = TrialRecord(
            id: id(14), sessionId: session.id, number: 2, seed: 0, layout: miss.layout, outcome: .correctRejection,
            started: miss.started, ended: time(16), corrects: miss.id, reason: "target was a control")
        try writer.commit([
            correction,
            MilestoneRecord(
                id: id(15), dogId: rex.id, sessionId: session.id, phase: "phase-3", step: "phase-3/1",
                criterion: "30 consecutive correct", time: time(16)),
            MilestoneRecord(id: id(16), dogId: aino.id, phase: "phase-1", time: time(17)),
            SessionNote(id: id(17), sessionId: session.id, text: "Shorter rounds", time: time(17)),
            SessionNote(id: id(18), sessionId: session.id, kind: .comment, text: "", time: time(18)),
            SessionEnd(id: id(19), sessionId: session.id, how: .ended, time: time(18)),
            SessionEnd(id: id(29), sessionId: bare.id, how: .stopped, detail: "SIGTERM", time: time(19)),
        ])
    }

    /// Events of every kind, each optional column set and left empty at least once.
    static func events(session: UUID, trial: UUID) -> [LoggedEvent] {
        [
            LoggedEvent(
                id: id(20), kind: .cue, sessionId: session, trialId: trial, time: time(11),
                detail: #"{"cue":"start"}"#),
            LoggedEvent(
                id: id(21), kind: .edge, sessionId: session, trialId: trial, station: 2, time: time(11),
                kernelNs: 11_000_000_005, value: 1),
            LoggedEvent(
                id: id(22), kind: .sniff, sessionId: session, trialId: trial, station: 1, time: time(11),
                durationNs: 300),
            LoggedEvent(
                id: id(23), kind: .indication, sessionId: session, trialId: trial, station: 2, time: time(12)),
            LoggedEvent(
                id: id(24), kind: .click, sessionId: session, trialId: trial, station: 2, time: time(12),
                click: ClickTiming(
                    edgeNs: 12_000_000_000, handedNs: 12_000_020_000, triggerNs: 12_000_030_000, delayFrames: 128,
                    onsetLatencyNs: 2_700_000)),
            LoggedEvent(
                id: id(25), kind: .click, sessionId: session, trialId: trial, station: 2, time: time(12),
                click: ClickTiming(edgeNs: 12_000_000_000, handedNs: 12_000_020_000)),
            LoggedEvent(id: id(26), kind: .button, sessionId: session, time: time(12), value: 3),
            LoggedEvent(
                id: id(27), kind: .fault, sessionId: session, station: 4, time: time(12),
                detail: #"{"fault":"stuck","since_ns":"12"}"#),
            LoggedEvent(id: id(28), kind: .note, time: time(13), detail: "«free» text"),
        ]
    }

    // MARK: Reading every row back

    struct TableRows: Codable, Equatable {
        var table: String
        var columns: [String]
        /// Each value as `quote()` spells it: 'text' (quotes doubled), integers, NULL, X'blob'.
        var rows: [[String]]
    }

    /// Every table's rows, in the order of `tables`.
    static func dump(_ log: SessionLog) throws -> [TableRows] {
        try log.reader.read { db in try tables.map { try rows(db, $0) } }
    }

    /// One table's rows, ordered by every column in turn; the `id` of the one event whose id
    /// is made at random is blanked (its other columns still compared).
    static func rows(_ db: Database, _ table: String) throws -> TableRows {
        let columns = try Row.fetchAll(
            db, sql: "SELECT name FROM pragma_table_info(?) ORDER BY cid", arguments: [table]
        ).map { $0["name"] as String }
        let quoted = columns.map { "quote(\($0))" }.joined(separator: ", ")
        let order = (1...columns.count).map(String.init).joined(separator: ", ")
        var rows = try Row.fetchAll(db, sql: "SELECT \(quoted) FROM \(table) ORDER BY \(order)").map { row in
            (0..<row.count).map { row[$0] as String }
        }
        if table == "event", let idColumn = columns.firstIndex(of: "id") {
            let made = rows.firstIndex { !$0[idColumn].hasPrefix("'00000000-0000-7000-8000-") }
            if let made { rows[made][idColumn] = "(time-ordered)" }
        }
        return TableRows(table: table, columns: columns, rows: rows)
    }
}
