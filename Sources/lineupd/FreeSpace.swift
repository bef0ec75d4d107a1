import Foundation
import Glibc

/// The directory holding the log's database: the filesystem whose free space matters.
func logDirectory(of path: String) -> String {
    let directory = (path as NSString).deletingLastPathComponent
    return directory.isEmpty ? "." : directory
}

/// Free space (MB, as an unprivileged writer sees it) on the filesystem holding `path`, or
/// nil when it cannot be read.
func freeMegabytes(forFileAt path: String) -> Int? {
    var info = statvfs()
    guard statvfs(logDirectory(of: path), &info) == 0 else { return nil }
    return Int(UInt64(info.f_bavail) &* UInt64(info.f_frsize) / 1_048_576)
}
