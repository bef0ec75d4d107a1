import Figures
import Foundation
import Glibc
import PostgresNIO
import ReadingRows
import Readings
import SessionLog
import Synchronization
import Testing

@testable import LabStore

/// `stats --lab` reads every trial of the store in one streamed query. A server that falls
/// silent in the middle of it must end the read in one clear error, never hang it; and a row
/// the figures cannot read is left out and named as that row, never taken for a lost connection.
///
/// Not tested: a server that closes the connection while the reader is behind on the stream
/// (`pg_ctl stop -m immediate` mid-stream). postgres-nio 1.33.2 traps then, in
/// RowStreamStateMachine.channelReadComplete ("How can we receive a body part, after a
/// channelReadComplete, but no read has been forwarded yet"), before lineup sees an error.
@Suite(.serialized, .ownThreads) struct LabStreamTests {
    /// One station, dog and session and `trials` trials of five stations each, written by the
    /// store's owner in one statement: enough rows (about 20 MB) that postgres-nio's buffer (at
    /// most 16,384 rows) and the socket's cannot hold them all, so a silent server is noticed
    /// mid-stream.
    func fill(_ lab: TestServer.Lab, trials: Int, layout: String = Self.layout) async throws {
        let owner = try await LabStore.connect(lab.owner)
        do {
            try await owner.execute("INSERT INTO store.station (id, mono_ns, wall_ns) VALUES ('st-1', 0, 0)")
            try await owner.execute(
                "INSERT INTO store.dog (id, station_id, name, mono_ns, wall_ns) VALUES ('dog-1', 'st-1', 'Aino', 0, 0)")
            try await owner.execute(
                """
                INSERT INTO store.session (id, station_id, dog_id, mode, mono_ns, wall_ns)
                VALUES ('session-1', 'st-1', 'dog-1', 'automated', 0, 1700000000000000000)
                """)
            try await owner.execute(
                """
                INSERT INTO store.trial (id, station_id, session_id, number, outcome, latency_ns, started_mono_ns,
                    started_wall_ns, layout, seen, mono_ns, wall_ns)
                SELECT 'trial-' || n, 'st-1', 'session-1', n, 'hit', 1500000000, n, n, \(unescaped: layout), \(unescaped: Self.seen), n, n
                FROM generate_series(1, \(trials)) n
                """)
        } catch {
            await owner.close()
            throw error
        }
        await owner.close()
    }

    static let layout =
        "'1:target:' || md5('a') || ';2:blank:;3:control:' || md5('b') || ';4:distractor:' || md5('c') || ';5:blank:'"
    static let seen = "'1:1:1500000000:2:2000000000;0:0::0:0;1:0::1:500000000;1:0::1:400000000;0:0::0:0'"

    /// A researcher's reader whose statements may stay unanswered for `deadline` at most.
    func reader(_ lab: TestServer.Lab, deadline: Duration) async throws -> LabReader {
        var store = try await LabStore.connect(lab.researcher)
        store.deadline = deadline
        return LabReader(store: store)
    }

    /// The server process serving the reader's connection.
    func backend(of reader: LabReader) async throws -> pid_t {
        let rows = try await reader.store.rows("SELECT pg_backend_pid()")
        return pid_t(try rows[0].decode(Int32.self))
    }

    // Without the deadline on the stream this waited for ever: the time limit makes it a failure.
    // It covers the server's start too (initdb takes tens of seconds on a loaded machine); the
    // check of the deadline itself is `waited`, timed from the query.
    @Test(.timeLimit(.minutes(3))) func aServerFallingSilentMidStreamEndsTheReadInOneError() async throws {
        guard let server = try await TestServer.startOrSkip("aServerFallingSilentMidStreamEndsTheReadInOneError") else {
            return
        }
        let lab = try await server.makeLab()
        try await fill(lab, trials: 60_000)
        // 3 s: the statements and the first rows before the silence must come within it, and a
        // loaded CI machine has taken about 1 s to answer them.
        let reader = try await reader(lab, deadline: .seconds(3))
        let backend = try await backend(of: reader)
        // Whatever happens, the stopped backend goes on (and ends, its connection closed).
        defer { kill(backend, SIGCONT) }
        let scanned = Mutex(0)
        let started = ContinuousClock.now
        // Through the readings' row interface, as `stats --lab` reads the trials.
        let error = await #expect(throws: LabStoreError.self) {
            try await offThePool {
                try reader.readRows { rows in
                    try rows.scan("SELECT t.layout, t.seen FROM \(table: "trial_current") t", []) { _ in
                        // The server stops sending after the first row: the rows already on their
                        // way arrive, then nothing.
                        scanned.withLock { count in
                            if count == 0 { kill(backend, SIGSTOP) }
                            count += 1
                        }
                    }
                }
            }
        }
        let scannedRows = scanned.withLock { $0 }
        await reader.close()
        let waited = started.duration(to: .now)
        guard case .unreachable(let store, let reason) = error else {
            Issue.record("not a lost connection: \(String(describing: error))")
            return
        }
        #expect(store == lab.researcher.display)
        #expect(reason.contains("within 3 s"), "\(reason)")
        #expect(scannedRows > 0 && scannedRows < 60_000, "\(scannedRows) rows before the silence")
        // Noticed within two deadlines (the watch looks once a deadline), not after minutes.
        #expect(waited < .seconds(30), "\(waited)")
    }

    @Test(.timeLimit(.minutes(3))) func aQueryNeverAnsweredEndsInOneError() async throws {
        guard let server = try await TestServer.startOrSkip("aQueryNeverAnsweredEndsInOneError") else { return }
        let lab = try await server.makeLab()
        try await fill(lab, trials: 10)
        let reader = try await reader(lab, deadline: .seconds(1))
        let backend = try await backend(of: reader)
        defer { kill(backend, SIGCONT) }
        kill(backend, SIGSTOP)
        let started = ContinuousClock.now
        let error = await #expect(throws: LabStoreError.self) {
            _ = try await offThePool { try StatsReading(by: .dog).read(from: reader) }
        }
        let waited = started.duration(to: .now)
        await reader.close()
        // Given up after the 1 s deadline, not after minutes.
        #expect(waited < .seconds(30), "\(waited)")
        guard case .unreachable(_, let reason) = error else {
            Issue.record("not a lost connection: \(String(describing: error))")
            return
        }
        #expect(reason.contains("within 1 s"), "\(reason)")
    }

    /// A trial whose layout no station writes, and a trial station off the board, stored before
    /// v9 (the store refuses both since; the append-only store cannot remove them): each reading
    /// leaves them out and names each once, and reads every other row. Issue 33: one such row
    /// made every reading over the store fail, for every station.
    @Test func damagedRowsStoredBeforeV9AreLeftOutAndNamedOnce() async throws {
        guard let server = try await TestServer.startOrSkip("damagedRowsStoredBeforeV9AreLeftOutAndNamedOnce") else {
            return
        }
        let lab = try await server.makeLab()
        // The rows a store from before v9 may hold, put in as the owner with v9's checks lifted.
        let owner = try await LabStore.connect(lab.owner)
        do {
            try await owner.execute("ALTER TABLE store.trial DROP CONSTRAINT trial_layout_is_stations")
            try await owner.execute("ALTER TABLE store.trial_station DROP CONSTRAINT trial_station_on_the_board")
        } catch {
            await owner.close()
            throw error
        }
        do {
            try await fill(lab, trials: 3, layout: "CASE WHEN n = 2 THEN '999:target:;' ELSE '1:blank:' END")
            try await owner.execute(
                """
                INSERT INTO store.trial_station (trial_id, station, station_id, kind)
                VALUES ('trial-1', 1, 'st-1', 'blank'), ('trial-3', 300000000, 'st-1', 'blank')
                """)
        } catch {
            await owner.close()
            throw error
        }
        await owner.close()
        let said = Mutex<[String]>([])
        var reader = try await reader(lab, deadline: .seconds(120))
        reader.damage = LabDamage(say: { line in said.withLock { $0.append(line) } })
        // Read twice: named once.
        var rows: [StatsRow] = []
        for _ in 0..<2 { rows = try await offThePool { [reader] in try StatsReading(by: .dog).read(from: reader) } }
        #expect(rows.map(\.figures.results.trials) == [2], "\(rows)")
        let bytes = Mutex<[UInt8]>([])
        let sink = ByteSink { chunk in
            bytes.withLock { $0.append(contentsOf: chunk) }
            return true
        }
        let exported = try await reader.export(.trials, format: .csv, to: sink)
        await reader.close()
        #expect(exported == 3)
        // The trials' columns stop at the board's stations: no column for station 300000000.
        let csv = String(decoding: bytes.withLock { $0 }, as: UTF8.self)
        #expect(csv.contains("station_1_kind") && !csv.contains("station_300000000"), "\(csv.prefix(300))")
        let lines = said.withLock { $0 }
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.contains { $0.contains("trial trial-2") && $0.contains("a layout that is not stations") })
        #expect(lines.contains { $0.contains("a station of trial trial-3") && $0.contains("station 300000000") })
        #expect(lines.allSatisfy { $0.contains("left out of this reading") })
    }
}
