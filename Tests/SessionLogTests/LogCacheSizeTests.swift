import Foundation
import GRDB
import Testing

@testable import SessionLog

/// lineupd's connections to the log keep a small page cache, so the daemon does not grow as the
/// log does (issue 24, `StationService.logCacheKibibytes`); everyone else keeps 1 MiB.
@Suite struct LogCacheSizeTests {
    private func cacheSizes(_ log: SessionLog) throws -> (writer: Int, reader: Int) {
        let writer = try log.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") } ?? 0
        let reader = try log.reader.read { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") } ?? 0
        return (writer, reader)
    }

    @Test func theCacheAskedForIsTheWritersAndTheReaders() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cache-size-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let small = try cacheSizes(SessionLog(path: dir.appendingPathComponent("small.db").path, cacheKibibytes: 256))
        #expect(small.writer == -256 && small.reader == -256, "\(small)")
        let usual = try cacheSizes(SessionLog(path: dir.appendingPathComponent("usual.db").path))
        #expect(usual.writer == -1024 && usual.reader == -1024, "\(usual)")
    }
}
