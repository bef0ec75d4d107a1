import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// MARK: - Small system helpers shared with the client

struct UnixAddress {
    var storage = sockaddr_un()

    init?(_ path: String) {
        storage.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: storage.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity, !bytes.contains(0) else { return nil }
        withUnsafeMutableBytes(of: &storage.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
            raw[bytes.count] = 0
        }
    }

    mutating func bind(_ fd: Int32) -> Int32 {
        withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }

    mutating func connect(_ fd: Int32) -> Int32 {
        withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }
}

#if canImport(Glibc)
    let socketStreamType = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
#else
    let socketStreamType = SOCK_STREAM
#endif

/// `send` that never raises SIGPIPE: a vanished client must not kill the daemon.
func sendBytes(_ fd: Int32, _ base: UnsafeRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
        return send(fd, base, count, Int32(MSG_NOSIGNAL))
    #else
        return send(fd, base, count, 0)
    #endif
}

func setNoSigPipe(_ fd: Int32) {
    #if canImport(Darwin)
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
    #endif
}

/// Reads and forgets what a client sent but we will not handle: closing a Unix socket with
/// unread input resets the peer, which could then lose the error line we just sent it.
func discardInput(_ fd: Int32) {
    var scratch = [UInt8](repeating: 0, count: 4096)
    for _ in 0..<16 {
        let n = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if n <= 0 { return }
    }
}

/// `struct ucred` (Glibc's Swift module leaves it out: it needs _GNU_SOURCE).
struct PeerCredentials {
    var pid: Int32 = 0
    var uid: UInt32 = .max
    var gid: UInt32 = .max
}

/// Who is at the other end of a Unix socket, as the kernel recorded it at connect time.
func peerCredentials(_ fd: Int32) -> PeerCredentials {
    var credentials = PeerCredentials()
    #if canImport(Glibc)
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        if getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0 { return PeerCredentials() }
    #endif
    return credentials
}

func monotonicNanoseconds() -> UInt64 {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
}

/// "10", "0.25", "3.4": seconds as a person writes them.
func secondsText(_ seconds: Double) -> String {
    if seconds >= 10 || seconds == seconds.rounded() { return String(Int(seconds.rounded())) }
    var text = String(format: seconds < 1 ? "%.2f" : "%.1f", seconds)
    while text.hasSuffix("0") { text.removeLast() }
    return text
}

func setNonBlocking(_ fd: Int32) -> Bool {
    let flags = fcntl(fd, F_GETFL)
    return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0
}

func errnoText(_ code: Int32) -> String {
    String(cString: strerror(code))
}

func groupID(_ name: String) -> gid_t? {
    var group = group()
    var result: UnsafeMutablePointer<group>?
    var buffer = [CChar](repeating: 0, count: 16 * 1024)
    let rc = getgrnam_r(name, &group, &buffer, buffer.count, &result)
    guard rc == 0, result != nil else { return nil }
    return group.gr_gid
}
