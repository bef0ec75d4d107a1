import Foundation
import Testing

@testable import SessionLog

/// One lineupd per log (issue 23): the lock file beside the log, and the unfinished-session
/// check that needs it. `flock` locks of two opens conflict within one process too, so each
/// `LogLock` here stands for one lineupd.
@Suite struct LogLockTests {
    @Test func aSecondLockOnOneLogIsRefusedNamingTheHolder() throws {
        let path = temporaryLogPath()
        let first = try LogLock(logPath: path, socket: "/run/lineup/control.sock")
        #expect(first.path == path + ".lock")
        do {
            _ = try LogLock(logPath: path, socket: "/tmp/other.sock")
            Issue.record("a second lock on one log was granted")
        } catch let error as SessionLogError {
            #expect(error == .logInUse(path: path, holder: "pid \(getpid()), control socket /run/lineup/control.sock"))
            #expect(!error.description.contains("\n"))
            #expect(error.description.hasPrefix("another lineupd (pid \(getpid()), control socket"), "\(error)")
        }
        // The refused one did not overwrite the holder's text.
        #expect(
            try String(contentsOfFile: first.path, encoding: .utf8)
                == "pid \(getpid()), control socket /run/lineup/control.sock\n")
        // Readers are not stopped by it: the lock is not on the log.
        let log = try SessionLog(path: path)
        _ = try SessionLog.openReader(path: path, check: .quick)
        _ = log
        withExtendedLifetime(first) {}
    }

    @Test func theLockIsFreeOnceItsHolderLetsGo() throws {
        let path = temporaryLogPath()
        do { _ = try LogLock(logPath: path) }
        _ = try LogLock(logPath: path, socket: "s")
        // Another log beside it has a lock of its own.
        let a = try LogLock(logPath: path)
        let b = try LogLock(logPath: path + "2")
        withExtendedLifetime((a, b)) {}
    }

    @Test func oneLogReachedThroughALinkSharesItsLock() throws {
        let path = temporaryLogPath()
        _ = try SessionLog(path: path)
        let link = temporaryLogPath("link.db")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        let held = try LogLock(logPath: path)
        #expect(throws: SessionLogError.self) { try LogLock(logPath: link) }
        withExtendedLifetime(held) {}
    }

    /// Before the log exists (lineupd's first start), a directory reached through a link too.
    @Test func aLogNotYetMadeIsLockedWhereItsDirectoryLinkLeads() throws {
        let path = temporaryLogPath()
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let link = temporaryLogPath("dir-link")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: directory)
        let held = try LogLock(logPath: link + "/lineup.db")
        #expect(throws: SessionLogError.self) { try LogLock(logPath: path) }
        withExtendedLifetime(held) {}
    }

    /// Sessions are marked interrupted only under this log's own lock.
    @Test func theUnfinishedSessionCheckNeedsThisLogsLock() throws {
        let log = try SessionLog(path: temporaryLogPath())
        let dog = DogRecord(name: "Aino")
        let open = SessionRecord(dogId: dog.id, phase: "1", mode: .automated, station: "pi")
        try log.append([dog, open])
        let otherLock = try LogLock(logPath: temporaryLogPath())
        #expect(throws: SessionLogError.self) { try log.markInterruptedSessions(station: "pi", holding: otherLock) }
        #expect(try log.reader.session(id: open.id.uuidString.lowercased()).endedHow == nil)
        let own = try LogLock(logPath: log.path)
        #expect(try log.markInterruptedSessions(station: "pi", holding: own).count == 1)
    }
}
