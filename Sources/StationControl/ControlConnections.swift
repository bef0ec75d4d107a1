import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// MARK: - Per-client state

final class Client {
    let fd: Int32
    /// The peer's user and process when it connected (SO_PEERCRED); uid_t.max if unknown.
    let uid: UInt32
    let pid: Int32
    /// Accepted as the server's `order`-th connection: breaks ties between equally idle ones.
    let order: UInt64
    /// When it connected or last sent a complete request (CLOCK_MONOTONIC ns).
    var idleSince: UInt64
    var input: [UInt8] = []
    var output: [UInt8] = []
    var sent = 0
    /// Reading stopped; the connection closes once its output is out.
    var closing = false
    var watch: (Outbox, Int)?

    init(fd: Int32, uid: UInt32, pid: Int32, order: UInt64, now: UInt64) {
        self.fd = fd
        self.uid = uid
        self.pid = pid
        self.order = order
        idleSince = now
    }

    var hasOutput: Bool { sent < output.count }
    var queuedBytes: Int { output.count - sent }
}

/// A watcher's events between the daemon's log thread and the server's thread.
final class Outbox: @unchecked Sendable {
    // @unchecked: every field is behind `lock`.
    enum Taken {
        case lines(Data)
        case overflowed
    }

    private let lock = NSLock()
    private var pending = Data()
    private var overflowed = false
    private var closed = false
    private let limit: Int
    private let waker: Waker

    init(limit: Int, waker: Waker) {
        self.limit = limit
        self.waker = waker
    }

    /// Called from the daemon's log thread. False once the client is gone or too far behind,
    /// so the daemon stops sending to it.
    func offer(_ line: String) -> Bool {
        // A newline inside would split the event in two; in JSON it can only be whitespace.
        var bytes = Data(line.utf8)
        for i in bytes.indices where bytes[i] == 0x0A || bytes[i] == 0x0D { bytes[i] = 0x20 }
        bytes.append(0x0A)
        let accepted = lock.withLock {
            if closed || overflowed { return false }
            if pending.count + bytes.count > limit {
                overflowed = true
                return true  // Still wake the server, so it cuts the client off now.
            }
            pending.append(bytes)
            return true
        }
        guard accepted else { return false }
        waker.wake()
        return lock.withLock { !overflowed }
    }

    func take() -> Taken {
        lock.withLock {
            if overflowed { return .overflowed }
            defer { pending = Data() }
            return .lines(pending)
        }
    }

    func close() { lock.withLock { closed = true } }
}

/// A pipe that interrupts the server's `poll` from other threads.
final class Waker: @unchecked Sendable {
    // @unchecked: the descriptors change only under `lock`.
    private let lock = NSLock()
    private var fds: (read: Int32, write: Int32) = (-1, -1)

    var readFD: Int32 { lock.withLock { fds.read } }

    func open(path: String) throws(ControlServerError) {
        var pair: [Int32] = [-1, -1]
        guard pipe(&pair) == 0 else { throw .system("pipe", path: path, errno: errno) }
        _ = setNonBlocking(pair[0])
        _ = setNonBlocking(pair[1])
        _ = fcntl(pair[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(pair[1], F_SETFD, FD_CLOEXEC)
        lock.withLock { fds = (pair[0], pair[1]) }
    }

    func wake() {
        lock.withLock {
            guard fds.write >= 0 else { return }
            var byte: UInt8 = 1
            _ = write(fds.write, &byte, 1)  // A full pipe already means "wake up".
        }
    }

    func drain() {
        var buffer = [UInt8](repeating: 0, count: 256)
        let fd = readFD
        while buffer.withUnsafeMutableBytes({ Glibc.read(fd, $0.baseAddress, $0.count) }) > 0 {}
    }

    func close() {
        lock.withLock {
            if fds.read >= 0 { _ = Glibc.close(fds.read) }
            if fds.write >= 0 { _ = Glibc.close(fds.write) }
            fds = (-1, -1)
        }
    }
}
