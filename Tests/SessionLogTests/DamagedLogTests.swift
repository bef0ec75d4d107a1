import Foundation
import GRDB
import LineupBench
import Testing

@testable import SessionLog

/// Damaged logs are named as damaged (issue 23): a copy of a real log with bytes changed inside
/// one page of its trials or events (never the file's header), checked at each level.
@Suite struct DamagedLogTests {
    /// A whole, self-contained copy (online backup) of a filled log, so the bytes changed are
    /// the file's own and no WAL holds newer pages.
    static func copyOfFilledLog() throws -> String {
        let log = try SessionLog(path: temporaryLogPath())
        var filler = LogFiller()
        filler.dogs = 2
        filler.sessionsPerDog = 3
        filler.trialsPerSession = 20
        filler.eventsPerTrial = 10
        try filler.fill(log)
        let copy = temporaryLogPath("copy.db")
        try log.reader.backup(to: copy)
        return copy
    }

    /// The first leaf page of `table` and the file's page size, from SQLite's own page map.
    static func leafPage(of table: String, in path: String) throws -> (page: Int, size: Int) {
        var config = Configuration()
        config.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: config)
        defer { try? queue.close() }
        return try queue.read { db in
            let page = try #require(
                try Int.fetchOne(
                    db, sql: "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno LIMIT 1",
                    arguments: [table]))
            let size = try #require(try Int.fetchOne(db, sql: "PRAGMA page_size"))
            return (page, size)
        }
    }

    /// Flips (XOR 0xFF) `count` bytes at `offset` inside `page`.
    static func flip(_ path: String, page: Int, size: Int, offset: Int, count: Int) throws {
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        defer { try? handle.close() }
        let start = UInt64((page - 1) * size + offset)
        try handle.seek(toOffset: start)
        let bytes = try #require(try handle.read(upToCount: count))
        try handle.seek(toOffset: start)
        try handle.write(contentsOf: Data(bytes.map { $0 ^ 0xFF }))
    }

    /// A copy whose first trial leaf page has its cell pointers flipped: the page no longer
    /// parses, which every check level sees.
    static func trialPageBroken() throws -> (path: String, page: Int) {
        let path = try Self.copyOfFilledLog()
        let (page, size) = try Self.leafPage(of: "trial", in: path)
        // A leaf page's header is 8 bytes; its first cells' pointers follow.
        try Self.flip(path, page: page, size: size, offset: 8, count: 8)
        return (path, page)
    }

    @Test func aTrialPageWithItsCellPointersFlippedIsRefusedAtEveryLevel() throws {
        let (path, page) = try Self.trialPageBroken()
        for check in [LogCheck.allButEvents, .quick, .integrity] {
            do {
                _ = try SessionLog.openReader(path: path, check: check)
                Issue.record("\(check) opened a damaged log")
            } catch let error as SessionLogError {
                guard case .damaged(let named, let problem) = error else {
                    Issue.record("\(check): \(error)")
                    continue
                }
                #expect(named == path)
                #expect(problem.hasPrefix("\(check == .integrity ? "integrity_check" : "quick_check"): "), "\(problem)")
                #expect(problem.contains("page \(page)"), "\(problem)")
                let said = error.description
                #expect(!said.contains("\n"))
                #expect(said.contains("restore it from a backup"), "\(said)")
                #expect(said.contains("sqlite3 \(path) .dump | sed"), "\(said)")
            }
        }
    }

    @Test func aWholeCopyPassesEveryLevel() throws {
        let path = try Self.copyOfFilledLog()
        for check in LogCheck.allCases { _ = try SessionLog.openReader(path: path, check: check) }
    }

    /// Unchecked, the damage is met while reading: SQLITE_CORRUPT says damaged, not "not a
    /// session log" (which it said before).
    @Test func damageMetWhileReadingIsCalledDamage() throws {
        let (path, _) = try Self.trialPageBroken()
        let reader = try SessionLog.openReader(path: path, check: .none)
        do {
            _ = try reader.trials()
            Issue.record("read a damaged trial table without a word")
        } catch let error as SessionLogError {
            guard case .damaged(let named, _) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(named == path)
        }
    }

    /// One character of an event's id changed inside its table page: the page still parses, so
    /// quick_check passes it; only integrity_check, comparing the id's index with the row,
    /// finds it. This is why backup, report and merge pay for integrity_check.
    @Test func aChangedValueIsFoundByIntegrityCheckAlone() throws {
        let path = try Self.copyOfFilledLog()
        let (page, size) = try Self.leafPage(of: "event", in: path)
        var config = Configuration()
        config.readonly = true
        let ids = try DatabaseQueue(path: path, configuration: config).read { db in
            try String.fetchAll(db, sql: "SELECT id FROM event")
        }
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let inPage = (page - 1) * size..<page * size
        let found = try #require(ids.lazy.compactMap { bytes.range(of: Data($0.utf8), in: inPage) }.first)
        bytes[found.lowerBound] = bytes[found.lowerBound] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        try bytes.write(to: URL(fileURLWithPath: path))

        _ = try SessionLog.openReader(path: path, check: .allButEvents)
        _ = try SessionLog.openReader(path: path, check: .quick)
        #expect(throws: SessionLogError.self) { try SessionLog.openReader(path: path, check: .integrity) }
        do {
            _ = try SessionLog.openReader(path: path, check: .integrity)
        } catch let error as SessionLogError {
            #expect(error.description.contains("integrity_check: "), "\(error)")
            #expect(error.description.contains("event_by_id"), "\(error)")
        }
    }

    /// The merge refuses a damaged source before writing anything, naming the source (the
    /// ATTACHed file's damage was once blamed on the lab log).
    @Test func aDamagedSourceIsRefusedByMergeAndNothingIsWritten() throws {
        let (path, _) = try Self.trialPageBroken()
        let lab = try SessionLog(path: temporaryLogPath("lab.db"))
        let before = try lab.reader.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM trial") }
        do {
            _ = try lab.merge(from: path)
            Issue.record("merged a damaged log")
        } catch let error as SessionLogError {
            guard case .damaged(let named, _) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(named == path)
        }
        #expect(try lab.reader.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM trial") } == before)
        #expect(try lab.reader.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM merged_log") } == 0)
    }
}
