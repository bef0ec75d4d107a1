import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why the control socket could not be opened. One line each, for the journal.
public enum ControlServerError: Error, Sendable, Hashable, CustomStringConvertible {
    case pathTooLong(String)
    case alreadyRunning(String)
    case notASocket(String)
    case system(String, path: String, errno: Int32)
    case alreadyStarted

    public var description: String {
        switch self {
        case .pathTooLong(let path): "control socket path is too long for a Unix socket: \(path)"
        case .alreadyRunning(let path): "another lineupd already answers on \(path)"
        case .notASocket(let path): "\(path) exists and is not a socket; not removing it"
        case .system(let call, let path, let code): "control socket \(path): \(call) failed: \(errnoText(code))"
        case .alreadyStarted: "the control server was already started"
        }
    }
}

/// The station's control socket: a Unix stream socket served on one thread with `poll`.
///
/// Requests go to the `StationControlling` on the server's thread, one at a time, so the
/// station never sees two control calls at once. A client can only hurt its own connection:
/// garbage, oversize lines, a vanished peer or a watcher that stops reading end that
/// connection and nothing else.
///
/// Nor can clients that connect and say nothing lock the trainer out: a connection without a
/// complete request for `idleTimeout` seconds is closed (a watcher is never idle); one user
/// (the peer's uid) holds at most `maxClientsPerUser` connections, its newest taking the place
/// of its longest idle; and when every slot is taken, a newcomer takes the place of the
/// longest idle connection. Only when every connection is a watcher is a newcomer refused.
public final class ControlServer: @unchecked Sendable {
    // @unchecked: `clients`, `listenFD` and the counters below are touched only on the
    // server's thread; what other threads touch (`waker`, outboxes, `lock` state) is locked.

    public struct Options: Sendable {
        public var path: String
        /// The group given the socket, so its members may connect; nil leaves it as created.
        public var group: String?
        public var maxClients: Int
        /// Bytes queued for one client (unsent replies or events) before it is cut off.
        public var maxQueuedBytes: Int
        public var maxLineBytes: Int
        /// Seconds a connection may go without sending a complete request (since it connected,
        /// or since its last one) before it is closed; half a request does not count. Watchers
        /// are never idle. lineupctl sends its request as it connects and waits 5 s at most
        /// for the reply, so 10 s only ever closes a client that has stopped talking. 0 or
        /// less: no time-out.
        public var idleTimeout: Double
        /// Connections one user (the peer's uid, from SO_PEERCRED) may hold at once: a
        /// quarter of the default 32, so the slots one user's stuck scripts can take leave
        /// three quarters to everyone else, and a trainer still has room for a few watchers.
        public var maxClientsPerUser: Int

        public init(
            path: String = ControlProtocol.defaultSocketPath, group: String? = ControlProtocol.defaultGroup,
            maxClients: Int = 32, maxQueuedBytes: Int = 256 * 1024, maxLineBytes: Int = ControlProtocol.maxLineBytes,
            idleTimeout: Double = 10, maxClientsPerUser: Int = 8
        ) {
            self.path = path
            self.group = group
            self.maxClients = maxClients
            self.maxQueuedBytes = maxQueuedBytes
            self.maxLineBytes = maxLineBytes
            self.idleTimeout = idleTimeout
            self.maxClientsPerUser = maxClientsPerUser
        }
    }

    public let options: Options
    private let controller: any StationControlling
    private let waker = Waker()
    private let lock = NSLock()
    private var started = false
    private var running = false
    private var stopping = false
    private let finished = DispatchSemaphore(value: 0)
    private var thread: Thread?

    // Server thread only.
    private var listenFD: Int32 = -1
    private var clients: [Int32: Client] = [:]
    private var acceptPaused = false
    private var accepted: UInt64 = 0

    public init(controller: any StationControlling, options: Options = Options()) {
        self.controller = controller
        self.options = options
    }

    /// Binds the socket, gives it mode 0660 and the station's group, and starts serving on
    /// a thread of its own. Returns warnings (e.g. the group could not be set) that leave the
    /// socket usable, for the daemon to log.
    @discardableResult
    public func start() throws(ControlServerError) -> [String] {
        let first = lock.withLock {
            defer { started = true }
            return !started
        }
        guard first else { throw .alreadyStarted }
        let path = options.path
        try removeStaleSocket(path)
        try waker.open(path: path)

        let fd = socket(AF_UNIX, socketStreamType, 0)
        guard fd >= 0 else { throw .system("socket", path: path, errno: errno) }
        var ok = false
        defer { if !ok { close(fd) } }
        guard setNonBlocking(fd) else { throw .system("fcntl", path: path, errno: errno) }
        guard var address = UnixAddress(path) else { throw .pathTooLong(path) }
        guard address.bind(fd) == 0 else { throw .system("bind", path: path, errno: errno) }
        // Permissions before listen: until then nobody can connect, so there is no window
        // in which the socket is open to everyone.
        guard chmod(path, 0o660) == 0 else {
            let code = errno
            unlink(path)
            throw .system("chmod", path: path, errno: code)
        }
        var warnings: [String] = []
        if let group = options.group { warnings += giveToGroup(path, group) }
        guard listen(fd, 16) == 0 else {
            let code = errno
            unlink(path)
            throw .system("listen", path: path, errno: code)
        }
        ok = true
        listenFD = fd
        let thread = Thread { [self] in
            serve()
            finished.signal()
        }
        thread.name = "lineup-control"
        lock.withLock {
            self.thread = thread
            running = true
        }
        thread.start()
        return warnings
    }

    /// Stops serving: closes every client, removes the socket file and waits for the
    /// server's thread to end. Safe from any thread and more than once.
    public func stop() {
        let (wasRunning, first, serving) = lock.withLock {
            defer { stopping = true }
            return (running, !stopping, thread)
        }
        guard wasRunning, first else { return }
        waker.wake()
        // From the server's own thread (a controller calling back) waiting would never end.
        guard Thread.current != serving else { return }
        finished.wait()
        // The thread's closure holds this server (and so its controller): let it go, or a
        // stopped server and everything its controller owns would live for good.
        lock.withLock { thread = nil }
    }

    private var isStopping: Bool { lock.withLock { stopping } }

    // MARK: The loop

    private func serve() {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while !isStopping {
            // Out of descriptors, the listener would wake poll at once, forever: rest it a moment.
            let resting = acceptPaused
            acceptPaused = false
            var fds = [pollfd(fd: listenFD, events: resting ? 0 : Int16(POLLIN), revents: 0)]
            fds.append(pollfd(fd: waker.readFD, events: Int16(POLLIN), revents: 0))
            for (fd, client) in clients {
                var events: Int16 = 0
                if !client.closing { events |= Int16(POLLIN) }
                if client.hasOutput { events |= Int16(POLLOUT) }
                fds.append(pollfd(fd: fd, events: events, revents: 0))
            }
            var timeout: Int32 = resting ? 100 : -1
            if let due = nextIdleDeadline {
                let now = monotonicNanoseconds()
                let wait = due > now ? Int32(clamping: (due - now + 999_999) / 1_000_000) : 0
                timeout = timeout < 0 ? wait : min(timeout, wait)
            }
            let n = poll(&fds, nfds_t(fds.count), timeout)
            if n < 0 {
                if errno == EINTR { continue }
                break  // Only a programming error gets here; leave rather than spin.
            }
            if fds[1].revents != 0 {
                waker.drain()
                deliverEvents()
            }
            for entry in fds.dropFirst(2) where entry.revents != 0 {
                guard let client = clients[entry.fd] else { continue }
                if entry.revents & Int16(POLLOUT) != 0 || entry.revents & Int16(POLLERR | POLLHUP) != 0 {
                    flush(client)
                }
                if clients[entry.fd] != nil, !client.closing,
                    entry.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0
                {
                    read(client, into: &chunk)
                }
            }
            closeIdleClients()
            if fds[0].revents & Int16(POLLIN) != 0 { acceptClients() }
        }
        for client in Array(clients.values) { drop(client) }
        close(listenFD)
        unlink(options.path)
        waker.close()
    }

    private func acceptClients() {
        while true {
            let fd = accept(listenFD, nil, nil)
            if fd < 0 {
                let code = errno
                if code == EMFILE || code == ENFILE || code == ENOBUFS || code == ENOMEM { acceptPaused = true }
                return  // EAGAIN: all taken; anything else: try again next round.
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            guard setNonBlocking(fd) else {
                close(fd)
                continue
            }
            setNoSigPipe(fd)
            let peer = peerCredentials(fd)
            // A user at its limit makes room from its own connections, so one user's stuck
            // clients never cost anyone else a slot.
            let own = clients.values.filter { $0.uid == peer.uid }
            if own.count >= max(1, options.maxClientsPerUser) {
                guard let idle = longestIdle(own) else {
                    // The processes name the forgotten watchers.
                    let pids = Set(own.map(\.pid)).sorted().map(String.init).joined(separator: ", ")
                    refuse(
                        fd,
                        "too many control connections from uid \(peer.uid) (\(options.maxClientsPerUser), all watching: "
                            + "pid\(pids.contains(",") ? "s" : "") \(pids)); close one and try again")
                    continue
                }
                evict(idle)
            }
            if clients.count >= options.maxClients {
                guard let idle = longestIdle(Array(clients.values)) else {
                    refuse(fd, "too many control clients (\(options.maxClients), all watching); try again later")
                    continue
                }
                evict(idle)
            }
            accepted += 1
            clients[fd] = Client(fd: fd, uid: peer.uid, pid: peer.pid, order: accepted, now: monotonicNanoseconds())
        }
    }

    private func refuse(_ fd: Int32, _ message: String) {
        let line = ControlProtocol.encodeReply(id: nil, error: ControlRefusal(.busy, message))
        // One best-effort write: a fresh socket's buffer holds it, and a busy server must not
        // wait for anyone.
        _ = line.withUnsafeBytes { sendBytes(fd, $0.baseAddress, $0.count) }
        discardInput(fd)
        close(fd)
    }

    /// The connection that has gone longest without a complete request; never a watcher.
    private func longestIdle(_ candidates: [Client]) -> Client? {
        candidates.filter { $0.watch == nil }.min { ($0.idleSince, $0.order) < ($1.idleSince, $1.order) }
    }

    /// Closes an idle connection to give its slot to a newcomer, telling it why.
    private func evict(_ client: Client) {
        let seconds = Double(monotonicNanoseconds() &- client.idleSince) / 1e9
        say(
            ControlRefusal(
                .busy,
                "closed to make room for another client: no complete request in \(secondsText(seconds)) s"),
            andDrop: client)
    }

    /// The idle time-out in nanoseconds; nil when there is none (`idleTimeout` 0 or less).
    private var idleNanoseconds: UInt64? {
        options.idleTimeout > 0 ? UInt64(min(options.idleTimeout, 1e9) * 1e9) : nil
    }

    /// When the next connection becomes idle for too long, if any can.
    private var nextIdleDeadline: UInt64? {
        guard let limit = idleNanoseconds else { return nil }
        return clients.values.lazy.filter { $0.watch == nil }.map(\.idleSince).min().map { $0 &+ limit }
    }

    private func closeIdleClients() {
        guard let limit = idleNanoseconds else { return }
        let now = monotonicNanoseconds()
        for client in Array(clients.values) where client.watch == nil && now &- client.idleSince >= limit {
            say(
                ControlRefusal(
                    .busy, "closed: no complete request in \(secondsText(options.idleTimeout)) s"),
                andDrop: client)
        }
    }

    /// One best-effort line, then the connection is closed: an idle client is not waited on.
    private func say(_ refusal: ControlRefusal, andDrop client: Client) {
        let line = ControlProtocol.encodeReply(id: nil, error: refusal)
        if !client.hasOutput { _ = line.withUnsafeBytes { sendBytes(client.fd, $0.baseAddress, $0.count) } }
        drop(client)
    }

    private func read(_ client: Client, into chunk: inout [UInt8]) {
        let n = chunk.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) }
        if n < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
            drop(client)
            return
        }
        if n == 0 {
            // The client closed its side. A half line is dropped unread; replies already
            // queued still go out to a client that only shut down writing.
            client.closing = true
            if !client.hasOutput { drop(client) }
            return
        }
        if client.watch != nil { return }  // A watching connection only streams; input is ignored.
        client.input.append(contentsOf: chunk[0..<n])
        var start = 0
        while let newline = client.input[start...].firstIndex(of: 0x0A) {
            var line = client.input[start..<newline]
            start = newline + 1
            if line.last == 0x0D { line = line.dropLast() }
            if line.count > options.maxLineBytes {
                refuseTooLong(client)
                return
            }
            if line.isEmpty { continue }
            client.idleSince = monotonicNanoseconds()
            handle(Data(line), from: client)
            if clients[client.fd] == nil || client.closing || client.watch != nil { break }
        }
        client.input.removeSubrange(0..<start)
        if client.watch != nil { client.input = [] }
        if client.input.count > options.maxLineBytes { refuseTooLong(client) }
    }

    private func refuseTooLong(_ client: Client) {
        client.input = []
        client.closing = true
        enqueue(
            ControlProtocol.encodeReply(
                id: nil,
                error: ControlRefusal(.tooLong, "request longer than \(options.maxLineBytes) bytes; closing")),
            to: client)
        if clients[client.fd] != nil, !client.hasOutput { drop(client) }
    }

    private func handle(_ line: Data, from client: Client) {
        switch ControlProtocol.decodeRequest(line) {
        case .failure(let failure):
            enqueue(ControlProtocol.encodeReply(id: failure.id, error: failure.refusal), to: client)
        case .success(let (id, call as any StationCall)):
            enqueue(call.answer(id: id, from: controller), to: client)
        case .success(let (id, call)):
            guard call is WatchRequest else {
                // Only a call added to the table without a way to answer it lands here.
                let refusal = ControlRefusal(.failed, "lineupd cannot answer '\(type(of: call).name)'")
                enqueue(ControlProtocol.encodeReply(id: id, error: refusal), to: client)
                return
            }
            // Registered before the reply, so a client that has the reply is watching. The
            // reply still goes out first: events reach the client only through
            // `deliverEvents`, on this thread, after this returns.
            let outbox = Outbox(limit: options.maxQueuedBytes, waker: waker)
            let token = controller.watch { line in outbox.offer(line) }
            client.watch = (outbox, token)
            enqueue(ControlProtocol.encodeReply(id: id, result: Done()), to: client)
        }
    }

    /// Moves events from the watchers' outboxes to their connections.
    private func deliverEvents() {
        for client in Array(clients.values) {
            guard let (outbox, _) = client.watch else { continue }
            switch outbox.take() {
            case .overflowed:
                drop(client)
            case .lines(let data):
                if !data.isEmpty { enqueue(data, to: client) }
            }
        }
    }

    private func enqueue(_ data: Data, to client: Client) {
        if client.queuedBytes + data.count > options.maxQueuedBytes {
            drop(client)  // A client that does not read its replies or events is cut off.
            return
        }
        client.output.append(contentsOf: data)
        flush(client)
    }

    private func flush(_ client: Client) {
        while client.hasOutput {
            let n = client.output.withUnsafeBytes { buffer in
                sendBytes(client.fd, buffer.baseAddress.map { $0 + client.sent }, buffer.count - client.sent)
            }
            if n < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { break }
                drop(client)
                return
            }
            client.sent += n
        }
        if client.sent > 0, client.sent == client.output.count {
            client.output.removeAll(keepingCapacity: client.output.count <= 64 * 1024)
            client.sent = 0
        } else if client.sent > 64 * 1024 {
            client.output.removeSubrange(0..<client.sent)
            client.sent = 0
        }
        if client.closing, !client.hasOutput { drop(client) }
    }

    private func drop(_ client: Client) {
        guard clients.removeValue(forKey: client.fd) != nil else { return }
        if let (outbox, token) = client.watch {
            outbox.close()
            controller.unwatch(token)
        }
        discardInput(client.fd)
        close(client.fd)
    }

    // MARK: Setting up the file

    private func removeStaleSocket(_ path: String) throws(ControlServerError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFSOCK else { throw .notASocket(path) }
        let probe = socket(AF_UNIX, socketStreamType, 0)
        guard probe >= 0 else { throw .system("socket", path: path, errno: errno) }
        defer { close(probe) }
        guard var address = UnixAddress(path) else { throw .pathTooLong(path) }
        if address.connect(probe) == 0 { throw .alreadyRunning(path) }
        let code = errno
        // ECONNREFUSED: nobody listens, the file is left from a daemon that died.
        guard code == ECONNREFUSED else { throw .system("connect", path: path, errno: code) }
        guard unlink(path) == 0 || errno == ENOENT else { throw .system("unlink", path: path, errno: errno) }
    }

    private func giveToGroup(_ path: String, _ group: String) -> [String] {
        guard let gid = groupID(group) else {
            return ["group '\(group)' does not exist; \(path) keeps the daemon's own group"]
        }
        // Under systemd the service's own group is usually the one wanted, and its
        // SystemCallFilter=~@privileged refuses chown outright: skip the call when it would
        // change nothing, so the journal does not carry a warning on every start.
        var info = stat()
        if stat(path, &info) == 0, info.st_gid == gid { return [] }
        if chown(path, uid_t.max, gid) != 0 {
            let code = errno
            return [
                "could not give \(path) to group '\(group)' (\(errnoText(code))); it keeps the daemon's own group"
            ]
        }
        return []
    }
}

// MARK: - Per-client state

private final class Client {
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
private final class Outbox: @unchecked Sendable {
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
private final class Waker: @unchecked Sendable {
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
private struct PeerCredentials {
    var pid: Int32 = 0
    var uid: UInt32 = .max
    var gid: UInt32 = .max
}

/// Who is at the other end of a Unix socket, as the kernel recorded it at connect time.
private func peerCredentials(_ fd: Int32) -> PeerCredentials {
    var credentials = PeerCredentials()
    #if canImport(Glibc)
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        if getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0 { return PeerCredentials() }
    #endif
    return credentials
}

private func monotonicNanoseconds() -> UInt64 {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
}

/// "10", "0.25", "3.4": seconds as a person writes them.
private func secondsText(_ seconds: Double) -> String {
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
