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
        // What watchers and clients were already owed (the events logged up to the stop, a
        // double-blind session's revealed trials) goes out before they are closed; bounded, so
        // a client that does not read cannot hold up the daemon's stop.
        deliverEvents()
        drainOutput(for: Self.stopDrainNanoseconds)
        for client in Array(clients.values) { drop(client) }
        close(listenFD)
        unlink(options.path)
        waker.close()
    }

    /// How long a stop waits for clients to take what is queued for them.
    static let stopDrainNanoseconds: UInt64 = 1_000_000_000

    /// Sends queued output until none is left or `limit` has passed.
    private func drainOutput(for limit: UInt64) {
        let end = monotonicNanoseconds() &+ limit
        while true {
            let owed = clients.values.filter { $0.hasOutput }
            let now = monotonicNanoseconds()
            guard !owed.isEmpty, now < end else { return }
            var fds = owed.map { pollfd(fd: $0.fd, events: Int16(POLLOUT), revents: 0) }
            let wait = Int32(clamping: (end - now + 999_999) / 1_000_000)
            if poll(&fds, nfds_t(fds.count), wait) < 0, errno != EINTR { return }
            for entry in fds where entry.revents != 0 {
                if let client = clients[entry.fd] { flush(client) }
            }
        }
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
}
