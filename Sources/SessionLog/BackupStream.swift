import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension LogReader {
    /// Writes a consistent copy of the log to a file descriptor (`lineupctl backup -`, which
    /// `lineupctl pull` runs over ssh). SQLite's online backup needs a file, so the copy is
    /// made in a fresh directory under `temporaryDirectory`, streamed, and removed, also when
    /// the stream fails. Returns the bytes written.
    @discardableResult
    public func backup(toDescriptor fd: Int32, temporaryDirectory: URL = FileManager.default.temporaryDirectory)
        throws -> Int
    {
        var template = Array(temporaryDirectory.appendingPathComponent("lineup-backup-XXXXXX").path.utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw SessionLogError.invalidInput(
                "cannot make a temporary directory in \(temporaryDirectory.path) for the copy: \(String(cString: strerror(errno)))"
            )
        }
        let directory = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let copy = directory + "/lineup.db"
        try backup(to: copy)
        guard let input = FileHandle(forReadingAtPath: copy) else {
            throw SessionLogError.cannotOpen(path: copy, reason: "the copy just written cannot be read")
        }
        defer { try? input.close() }
        var total = 0
        while true {
            let chunk = try input.read(upToCount: 1 << 20) ?? Data()
            if chunk.isEmpty { break }
            try chunk.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let written = write(fd, raw.baseAddress! + offset, raw.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw SessionLogError.invalidInput(
                            "cannot write the copy: \(String(cString: strerror(errno)))")
                    }
                    offset += written
                }
            }
            total += chunk.count
        }
        return total
    }
}
