import Dispatch
import Glibc

/// A tiny sd_notify: one datagram to `$NOTIFY_SOCKET` per message, so the daemon needs no
/// libsystemd. Outside systemd (no `$NOTIFY_SOCKET`) every call does nothing.
enum SystemdNotify {
    @discardableResult
    static func send(_ state: String) -> Bool {
        guard let raw = getenv("NOTIFY_SOCKET") else { return false }
        var path = Array(String(cString: raw).utf8)
        guard !path.isEmpty else { return false }
        // A leading `@` names a socket in the abstract namespace: a NUL byte on the wire.
        let abstract = path[0] == UInt8(ascii: "@")
        if abstract { path[0] = 0 }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let room = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count < room else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path) ?? 2
        // Abstract names are counted exactly; a file path carries its terminating NUL.
        let length = socklen_t(pathOffset + path.count + (abstract ? 0 : 1))

        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let message = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                message.withUnsafeBytes { bytes in
                    sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), sa, length)
                }
            }
        }
        return sent == message.count
    }

    /// Pings the watchdog at half of `$WATCHDOG_USEC` while `alive()` says the station works.
    /// Returns the timer (keep it) or nil when systemd asked for no watchdog.
    static func startWatchdog(alive: @escaping @Sendable () -> Bool) -> DispatchSourceTimer? {
        guard let raw = getenv("WATCHDOG_USEC"), let usec = UInt64(String(cString: raw)), usec > 0 else {
            return nil
        }
        if let pidText = getenv("WATCHDOG_PID"), let pid = Int32(String(cString: pidText)), pid != getpid() {
            return nil
        }
        let timer = DispatchSource.makeTimerSource(queue: .global())
        let half = DispatchTimeInterval.microseconds(Int(clamping: usec / 2))
        timer.schedule(deadline: .now(), repeating: half)
        // A stuck hot loop stops the pings, and systemd restarts the station.
        timer.setEventHandler { if alive() { send("WATCHDOG=1") } }
        timer.resume()
        return timer
    }
}
