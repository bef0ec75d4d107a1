import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One lineupd per log: an exclusive `flock` on a lock file beside the log (`lineup.db.lock`),
/// held for as long as this object lives (the daemon's life, across reloads).
///
/// Not a lock on the log itself: `lineupctl` and `lineup-web` read the log while lineupd
/// writes it, and SQLite's own exclusive locking would shut them out. The kernel drops a
/// `flock` when its holder dies, so a crash or a power cut leaves no stale lock; the file's
/// text (the holder's pid and control socket) is only read while someone holds it.
public final class LogLock: Sendable {
    /// The log this lock is for, as given.
    public let logPath: String
    /// The lock file beside it.
    public let path: String
    private let descriptor: Int32

    /// The lock file of the log at `logPath`: beside it, so it lives in the state directory
    /// the service may write (systemd's `StateDirectory=`), wherever the log is.
    /// A log reached through a symbolic link (the log's or its directory's) is locked where
    /// the link leads, so two spellings of one log share one lock, also before the log exists.
    public static func lockPath(logPath: String) -> String {
        func resolved(_ path: String) -> String? {
            guard let real = realpath(path, nil) else { return nil }
            defer { free(real) }
            return String(cString: real)
        }
        if let log = resolved(logPath) { return log + ".lock" }
        let url = URL(fileURLWithPath: logPath)
        guard let directory = resolved(url.deletingLastPathComponent().path) else { return logPath + ".lock" }
        return directory + "/" + url.lastPathComponent + ".lock"
    }

    /// Takes the log's lock or refuses with ``SessionLogError/logInUse(path:holder:)`` naming
    /// the lineupd that holds it. `socket`, the holder's control socket, is written in the lock
    /// file beside this process's pid, for the refusal.
    public init(logPath: String, socket: String? = nil) throws {
        self.logPath = logPath
        path = Self.lockPath(logPath: logPath)
        // Never truncated on open: the text belongs to whoever holds the lock.
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o640)
        guard fd >= 0 else {
            throw SessionLogError.cannotOpen(
                path: path, reason: "cannot make the log's lock file beside it: \(String(cString: strerror(errno)))")
        }
        // A reader's probe (`isHeld`) holds a shared lock for a moment: wait that out (up to
        // half a second) before saying another lineupd holds it.
        var probes = 0
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let failure = errno
            if failure == EINTR { continue }
            if failure == EWOULDBLOCK, probes < 50 {
                probes += 1
                usleep(10_000)
                continue
            }
            let holder = Self.holder(fd)
            close(fd)
            if failure == EWOULDBLOCK {
                throw SessionLogError.logInUse(path: logPath, holder: holder)
            }
            throw SessionLogError.cannotOpen(
                path: path, reason: "cannot lock it: \(String(cString: strerror(failure)))")
        }
        descriptor = fd
        // Who holds it, for the next one's refusal; best effort (a full disk refuses even
        // these few bytes, and the lock holds without them).
        var text = "pid \(getpid())"
        if let socket { text += ", control socket \(socket)" }
        text += "\n"
        _ = ftruncate(fd, 0)
        _ = text.withCString { pwrite(fd, $0, strlen($0), 0) }
    }

    deinit { close(descriptor) }

    /// Whether a lineupd holds the lock of the log at `logPath` now: probed with a shared lock
    /// taken and dropped at once (a lineupd starting at that instant waits it out, see `init`).
    /// No lock file: no lineupd has written this log since locks exist. A lock file this user
    /// cannot open counts as held, so a reader errs on the side of withholding.
    public static func isHeld(logPath: String) -> Bool {
        let fd = open(lockPath(logPath: logPath), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return errno != ENOENT }
        defer { close(fd) }
        while flock(fd, LOCK_SH | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            return true
        }
        _ = flock(fd, LOCK_UN)
        return false
    }

    /// What the lock file says of its holder, in one line.
    private static func holder(_ fd: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = pread(fd, &buffer, buffer.count, 0)
        let text = count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : ""
        let line = text.split(separator: "\n").first.map(String.init)?.trimmingCharacters(in: .whitespaces) ?? ""
        // The holder may not have written it yet (it has just started), or could not.
        return line.isEmpty ? "its pid not written yet" : line
    }

    /// Whether this lock is for the log at `path` (the same file, however spelt).
    public func covers(logAt path: String) -> Bool {
        var mine = stat()
        var theirs = stat()
        guard stat(logPath, &mine) == 0, stat(path, &theirs) == 0 else { return logPath == path }
        return mine.st_dev == theirs.st_dev && mine.st_ino == theirs.st_ino
    }
}
