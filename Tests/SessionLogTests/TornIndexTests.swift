import Foundation
import GRDB
import Glibc
import Testing

@testable import SessionLog

/// A read of a live log past SQLite's SQLITE_READONLY_RECOVERY (`SessionLog.pastTornIndex`,
/// commit 5c16c6b): a reader with a read-only `-shm` that finds the WAL index's header torn
/// (lineupd writing it at that moment) and the write lock free says so instead of waiting,
/// though the next look finds the header whole. Here lineupd, in a process of its own (a writer
/// in this one would share its writable `-shm`), is held still while the test tears the header,
/// and the reading's first statement puts it back as it fails: the read must start again.
@Suite struct TornIndexTests {
    @Test func aReadThatFindsTheIndexHeaderTornStartsAgainOnceItIsWhole() throws {
        guard let lineupd = lineupdPath() else {
            Issue.record("lineupd is not built: run `swift build` before `swift test`")
            return
        }
        let path = temporaryLogPath()
        let socket = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("control.sock").path
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: lineupd)
        writer.arguments = [
            "--simulate", "--serve", "--socket", socket, "--db", path, "--speed", "30", "--no-realtime",
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = nil
        writer.environment = environment
        writer.standardOutput = FileHandle.nullDevice
        writer.standardError = FileHandle.nullDevice
        try writer.run()
        defer {
            kill(writer.processIdentifier, SIGCONT)
            writer.terminate()
            writer.waitUntilExit()
        }
        // Serving: its log is open, the -shm made. A bounded wait for the daemon to start.
        let end = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: socket), writer.isRunning, Date() < end { usleep(10_000) }
        try #require(FileManager.default.fileExists(atPath: socket), "lineupd did not start serving")
        let reader = try SessionLog.openReader(path: path)

        // lineupd holds still with the log open (its lock keeps the reader's -shm the shared one).
        kill(writer.processIdentifier, SIGSTOP)
        let shm = try FileHandle(forUpdating: URL(fileURLWithPath: path + "-shm"))
        defer { try? shm.close() }
        let whole = try #require(try shm.read(upToCount: 48), "the index header's first copy")
        var torn = whole
        // Its second word (unused by SQLite): the two copies of the header now differ, as while a
        // writer is between them.
        torn[4] ^= 0xFF
        try shm.seek(toOffset: 0)
        try shm.write(contentsOf: torn)

        var attempts = 0
        var found: [String] = []
        let dogs = try reader.read { db in
            attempts += 1
            do {
                return try Int.fetchOne(db, sql: "SELECT count(*) FROM dog")
            } catch let error as DatabaseError {
                found.append("\(error.extendedResultCode)")
                // lineupd finishes the header, as it does moments after a reader finds it torn.
                try shm.seek(toOffset: 0)
                try shm.write(contentsOf: whole)
                throw error
            }
        }
        #expect(found == ["\(ResultCode.SQLITE_READONLY_RECOVERY)"], "the first read found the header torn")
        #expect(attempts == 2, "and the read started again")
        #expect(dogs == 0)
    }
}
