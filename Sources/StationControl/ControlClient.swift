import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a control request did not get its answer. One line each, for `lineupctl: ...`.
public enum ControlClientError: Error, Sendable, Hashable, CustomStringConvertible {
    case notRunning(path: String)
    case staleSocket(path: String)
    /// `group` is the socket's group as the file system says, nil when it cannot be read.
    case notAllowed(path: String, group: String?)
    case pathTooLong(String)
    case system(String, errno: Int32)
    case timedOut(seconds: Double)
    case closed
    case badReply(String)
    /// The station or the protocol said no.
    case refused(ControlRefusal)

    public var description: String {
        switch self {
        case .notRunning(let path): "lineupd is not running (no socket at \(path))"
        case .staleSocket(let path): "lineupd is not running (nobody answers on \(path))"
        case .notAllowed(let path, let group):
            "not allowed to control the station: \(path) is for "
                + (group.map { "the \($0) group" } ?? "the station's group")
        case .pathTooLong(let path): "socket path is too long: \(path)"
        case .system(let call, let code): "\(call) failed: \(errnoText(code))"
        case .timedOut(let seconds): "lineupd did not answer within \(formatSeconds(seconds)) s"
        case .closed: "lineupd closed the connection without answering"
        case .badReply(let why): "lineupd's reply could not be read: \(why)"
        case .refused(let refusal): refusal.message
        }
    }
}

/// The name of the group owning `path` (lineupd's `--group`, whatever it was), or nil when the
/// path cannot be read.
public func socketGroup(_ path: String) -> String? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    var entry = group()
    var result: UnsafeMutablePointer<group>? = nil
    var buffer = [CChar](repeating: 0, count: 4096)
    guard getgrgid_r(info.st_gid, &entry, &buffer, buffer.count, &result) == 0, result != nil,
        let name = entry.gr_name
    else { return "gid \(info.st_gid)" }
    return String(cString: name)
}

private func formatSeconds(_ s: Double) -> String {
    s == s.rounded() ? String(Int(s)) : String(s)
}

/// One request per connection to lineupd's control socket, as `lineupctl` uses it.
public struct ControlClient: Sendable {
    public var path: String
    /// How long to wait for a reply, in seconds.
    public var timeout: Double

    public init(path: String = ControlProtocol.defaultSocketPath, timeout: Double = 5) {
        self.path = path
        self.timeout = timeout
    }

    /// `--socket` if given, else `$LINEUP_SOCKET`, else the default path.
    public static func path(option: String?) -> String {
        if let option, !option.isEmpty { return option }
        if let env = ProcessInfo.processInfo.environment[ControlProtocol.socketEnvironmentVariable], !env.isEmpty {
            return env
        }
        return ControlProtocol.defaultSocketPath
    }

    public func status() throws(ControlClientError) -> StationStatus {
        try send(StatusRequest())
    }

    /// Returns the new session's id.
    public func startSession(_ request: SessionRequest) throws(ControlClientError) -> String {
        try sessionStart(request).session
    }

    /// The whole answer: the session's id and the station's warning, if any.
    public func sessionStart(_ request: SessionRequest) throws(ControlClientError) -> SessionStarted {
        try send(request)
    }

    public func layout(view: ClientView) throws(ControlClientError) -> [LayoutEntry] {
        try send(LayoutRequest(view: view)).stations
    }

    /// The engine's answer; a press that starts nothing is an error naming why.
    @discardableResult
    public func ready() throws(ControlClientError) -> ReadyReply { try send(ReadyRequest()) }
    public func abort() throws(ControlClientError) { _ = try send(AbortRequest()) }

    public func endSession(suggestions: String?) throws(ControlClientError) {
        _ = try send(SessionEndRequest(suggestions: suggestions))
    }

    /// Each returns the new row's id.
    public func addDog(_ entry: DogEntry) throws(ControlClientError) -> String {
        try send(entry).id
    }

    public func addSample(_ entry: SampleEntry) throws(ControlClientError) -> String {
        try send(entry).id
    }

    /// Returns the dilutions' ids, in the order of `entry.dilutions`.
    public func addDilutions(_ entry: DilutionEntry) throws(ControlClientError) -> [String] {
        try send(entry).ids
    }

    public func noteSample(_ entry: SampleNoteEntry) throws(ControlClientError) -> String {
        try send(entry).id
    }

    /// Returns the dog note's id.
    public func noteDog(_ entry: DogNoteEntry) throws(ControlClientError) -> String {
        try send(entry).id
    }

    /// Returns the correction's trial id.
    public func correctTrial(_ entry: TrialCorrectionEntry) throws(ControlClientError) -> String {
        try send(entry).id
    }

    /// Returns the note's id.
    public func noteSession(_ entry: SessionNoteEntry) throws(ControlClientError) -> String {
        try send(entry).id
    }

    /// Moves an input of the simulated lineup (refused by a real board's lineupd).
    public func simulate(_ input: SimulatedInput) throws(ControlClientError) {
        _ = try send(input)
    }

    /// The station's log and the programs it would accept.
    public func about() throws(ControlClientError) -> StationAbout {
        try send(AboutRequest())
    }

    /// Sends one request and reads its reply: any call of the table, so a new request needs
    /// no method here.
    public func send<C: ControlCall>(_ call: C) throws(ControlClientError) -> C.Reply {
        let connection = try Connection(path: path)
        defer { connection.close() }
        try connection.write(ControlProtocol.encode(call, id: 1), timeout: timeout)
        guard let line = try connection.readLine(timeout: timeout) else { throw .closed }
        return try Self.decodeReply(line, id: 1, as: C.Reply.self)
    }

    /// Streams the station's events: `onEvent` gets each line (one JSON object, no newline)
    /// until lineupd closes the connection or `onEvent` returns false.
    public func watch(_ onEvent: (String) -> Bool) throws(ControlClientError) {
        let connection = try Connection(path: path)
        defer { connection.close() }
        try connection.write(ControlProtocol.encode(WatchRequest(), id: 1), timeout: timeout)
        guard let first = try connection.readLine(timeout: timeout) else { throw .closed }
        _ = try Self.decodeReply(first, id: 1, as: Done.self)
        while let line = try connection.readLine(timeout: nil) {
            guard let text = String(data: line, encoding: .utf8) else { continue }
            if !onEvent(text) { return }
        }
    }

    /// Streams the station's events, each read by its one definition (`WatchEvent`), until
    /// lineupd closes the connection or `onEvent` returns false. A line that is none of the
    /// stream's kinds ends it with `.badReply`, saying what is wrong with it.
    public func watchEvents(_ onEvent: (WatchEvent) -> Bool) throws(ControlClientError) {
        var unreadable: WatchEventError?
        try watch { line in
            do throws(WatchEventError) {
                return onEvent(try WatchEvent(line: line))
            } catch {
                unreadable = error
                return false
            }
        }
        if let unreadable { throw .badReply(unreadable.description) }
    }

    static func decodeReply<R: Decodable>(_ line: Data, id: Int, as: R.Type) throws(ControlClientError) -> R {
        let decoder = JSONDecoder()
        let head: ReplyHead
        do {
            head = try decoder.decode(ReplyHead.self, from: line)
        } catch {
            throw .badReply(ControlProtocol.badRequest(error).message)
        }
        guard head.v == ControlProtocol.version else {
            throw .badReply(
                "lineupd speaks protocol version \(head.v); this lineupctl speaks \(ControlProtocol.version)")
        }
        if !head.ok {
            throw .refused(head.error ?? ControlRefusal(.failed, "lineupd refused without saying why"))
        }
        // A reply without an id answers no request of ours, e.g. "too many clients".
        guard head.id == id else { throw .badReply("reply is for request \(head.id.map(String.init) ?? "none")") }
        do {
            return try decoder.decode(ReplyResult<R>.self, from: line).result
        } catch {
            throw .badReply(ControlProtocol.badRequest(error).message)
        }
    }
}

/// A blocking-by-poll connection: each wait is bounded by its timeout.
private final class Connection {
    let fd: Int32
    let path: String
    var buffer: [UInt8] = []
    /// Replies and events are bounded by the server; this keeps a wrong peer from filling memory.
    let maxLine = 4 * 1024 * 1024

    init(path: String) throws(ControlClientError) {
        self.path = path
        fd = socket(AF_UNIX, socketStreamType, 0)
        guard fd >= 0 else { throw .system("socket", errno: errno) }
        setNoSigPipe(fd)
        guard var address = UnixAddress(path) else {
            Glibc.close(fd)
            throw .pathTooLong(path)
        }
        if address.connect(fd) != 0 {
            let code = errno
            Glibc.close(fd)
            switch code {
            case ENOENT, ENOTDIR: throw .notRunning(path: path)
            case ECONNREFUSED: throw .staleSocket(path: path)
            case EACCES, EPERM: throw .notAllowed(path: path, group: socketGroup(path))
            default: throw .system("connect to \(path)", errno: code)
            }
        }
        _ = setNonBlocking(fd)
    }

    func close() { Glibc.close(fd) }

    func write(_ data: Data, timeout: Double) throws(ControlClientError) {
        var offset = 0
        let deadline = Deadline(seconds: timeout)
        while offset < data.count {
            let n = data.withUnsafeBytes { sendBytes(fd, $0.baseAddress.map { $0 + offset }, $0.count - offset) }
            if n > 0 {
                offset += n
                continue
            }
            if n < 0, errno == EINTR { continue }
            if n < 0, errno != EAGAIN, errno != EWOULDBLOCK {
                // The daemon hung up early, perhaps with a reason (too many clients): read it.
                if errno == EPIPE || errno == ECONNRESET { return }
                throw .system("send", errno: errno)
            }
            try wait(for: Int16(POLLOUT), deadline: deadline, timeout: timeout)
        }
    }

    /// The next line without its newline; nil at end of stream. `timeout` nil waits forever.
    func readLine(timeout: Double?) throws(ControlClientError) -> Data? {
        let deadline = timeout.map { Deadline(seconds: $0) }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = Data(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return line
            }
            if buffer.count > maxLine { throw .badReply("line longer than \(maxLine) bytes") }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                buffer.append(contentsOf: chunk[0..<n])
                continue
            }
            if n == 0 { return nil }
            let code = errno
            if code == EINTR { continue }
            if code == ECONNRESET { return nil }
            guard code == EAGAIN || code == EWOULDBLOCK else { throw .system("recv", errno: code) }
            if let deadline, let timeout {
                try wait(for: Int16(POLLIN), deadline: deadline, timeout: timeout)
            } else {
                var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                _ = poll(&entry, 1, -1)
            }
        }
    }

    private func wait(for events: Int16, deadline: Deadline, timeout: Double) throws(ControlClientError) {
        let left = deadline.millisecondsLeft
        guard left > 0 else { throw .timedOut(seconds: timeout) }
        var entry = pollfd(fd: fd, events: events, revents: 0)
        let n = poll(&entry, 1, Int32(min(left, Int(Int32.max))))
        if n < 0, errno != EINTR { throw .system("poll", errno: errno) }
    }
}

private struct Deadline {
    let end: UInt64

    init(seconds: Double) {
        end = Deadline.now() &+ UInt64(max(0, seconds) * 1_000_000_000)
    }

    var millisecondsLeft: Int {
        let now = Deadline.now()
        return now >= end ? 0 : Int((end - now + 999_999) / 1_000_000)
    }

    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
