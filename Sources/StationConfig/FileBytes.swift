#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a whole small file with POSIX calls, so a failure carries the OS's own reason
/// (`No such file or directory`, `Permission denied`) and nothing can trap.
enum FileBytes {
    enum Failure: Error, Equatable {
        /// strerror's text for errno.
        case system(String)
        case isDirectory
        case tooLarge(limit: Int)

        var reason: String {
            switch self {
            case .system(let text): return text
            case .isDirectory: return "is a directory"
            case .tooLarge(let limit): return "larger than \(limit / 1024) KiB"
            }
        }
    }

    static func read(path: String, limit: Int) -> Result<[UInt8], Failure> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 { return .failure(.system(lastError())) }
        defer { _ = close(fd) }
        var info = stat()
        if fstat(fd, &info) != 0 { return .failure(.system(lastError())) }
        if (info.st_mode & mode_t(S_IFMT)) == mode_t(S_IFDIR) { return .failure(.isDirectory) }
        if Int(info.st_size) > limit { return .failure(.tooLarge(limit: limit)) }

        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { buffer in
                posixRead(fd, buffer.baseAddress, buffer.count)
            }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(.system(lastError()))
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > limit { return .failure(.tooLarge(limit: limit)) }
        }
        return .success(bytes)
    }

    private static func lastError() -> String {
        let code = errno
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }
}

/// `read(2)`, named apart from the static `read(path:limit:)` above.
private func posixRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}
