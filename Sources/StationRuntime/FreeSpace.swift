import Foundation
import Glibc
import StationConfig

/// The directory holding the log's database: the filesystem whose free space matters.
func logDirectory(of path: String) -> String {
    let directory = (path as NSString).deletingLastPathComponent
    return directory.isEmpty ? "." : directory
}

/// Free space (bytes, as an unprivileged writer sees it) on the filesystem holding `path`, or
/// nil when it cannot be read.
func freeBytes(forFileAt path: String) -> UInt64? {
    var info = statvfs()
    guard statvfs(logDirectory(of: path), &info) == 0 else { return nil }
    return UInt64(info.f_bavail) &* UInt64(info.f_frsize)
}

/// Whether lineupd can write the log now, asked of the system directly rather than learnt from a
/// failed write (which may come only at the next trial): nil when it can, else why. The log's file
/// system mounted read-only (a card the kernel remounted after I/O errors), or the log, its WAL
/// or its directory not writable by lineupd's user. A log not made yet needs its directory only.
public func logWriteProblem(forFileAt path: String) -> String? {
    let directory = logDirectory(of: path)
    var info = statvfs()
    if statvfs(directory, &info) == 0, info.f_flag & UInt(ST_RDONLY) != 0 {
        return "the log's disk (\(directory)) is mounted read-only"
    }
    for file in [directory, path, path + "-wal"] where file == directory || access(file, F_OK) == 0 {
        guard access(file, W_OK) != 0 else { continue }
        return "\(file) cannot be written by lineupd (\(String(cString: strerror(errno))))"
    }
    return nil
}

/// Free space (MB, as an unprivileged writer sees it) on the filesystem holding `path`, or
/// nil when it cannot be read.
func freeMegabytes(forFileAt path: String) -> Int? {
    freeBytes(forFileAt: path).map { Int($0 / 1_048_576) }
}

/// The log's disk against `[log]`'s thresholds, before anything of a block is written (the
/// served station's session start makes the same comparison: whole MB free below the threshold).
public enum FreeSpaceCheck: Equatable {
    case enough
    /// Below `warn_free_mb`, or unreadable: the block runs, after this one-line warning.
    case warning(String)
    /// Below `min_free_mb`: the block is refused with this line, and nothing is written.
    case refused(String)

    public init(databasePath path: String, spec: LogSpec, what: String) {
        let directory = logDirectory(of: path)
        guard let bytes = freeBytes(forFileAt: path) else {
            self = .warning("cannot tell the free space on \(directory) (the log's disk)")
            return
        }
        // Whole MB as the served station counts them; a fraction where it is all there is.
        let megabytes = Double(bytes) / 1_048_576
        let free = megabytes < 10 ? String(format: "%.1f", megabytes) : "\(Int(megabytes))"
        if bytes < UInt64(spec.minFreeMegabytes) * 1_048_576 {
            self = .refused(
                "only \(free) MB free on \(directory) (the disk of the log \(path)); \(what) needs "
                    + "\(spec.minFreeMegabytes) MB ([log] min_free_mb; the project's default unless --config sets it): "
                    + "free some space, or log elsewhere (--db)")
        } else if bytes < UInt64(spec.warnFreeMegabytes) * 1_048_576 {
            self = .warning(
                "only \(free) MB free on \(directory) (the log's disk; [log] warn_free_mb is "
                    + "\(spec.warnFreeMegabytes) MB): free some space before it fills")
        } else {
            self = .enough
        }
    }
}
