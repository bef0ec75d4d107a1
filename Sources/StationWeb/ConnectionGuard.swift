import Glibc
import NIOCore
import NIOHTTPTypes
import Synchronization

// The page's connections, so that connections which send nothing (or a request a byte at a
// time) cannot take every descriptor from the trainer's page: each connection has deadlines,
// and the connections are counted per client address and in all. Issue 33: about 1,100 silent
// connections took lineup-web's 1,024 descriptors and the trainer's Click timed out.

/// How long a connection may take and how many there may be. The project's rule (docs/web.md,
/// "What an attacker on the network can do").
public struct ConnectionLimits: Sendable, Hashable {
    /// From a connection's opening to the end of its first request's head.
    public var headerSeconds: Double = 10
    /// From a request's head to the end of its body (the page's bodies are under 16 KiB).
    public var bodySeconds: Double = 10
    /// From a response's end to the end of the next request's head (a kept-alive connection).
    public var idleSeconds: Double = 30
    /// Connections open at once, in all and from one client address. An idle connection costs
    /// lineup-web a descriptor and some kilobytes: room for thousands means an attacker's
    /// silent connections are held until their deadline rather than closed and reopened.
    public var total: Int = 2048
    public var perAddress: Int = 32

    public init() {}

    public init(total: Int, perAddress: Int) {
        self.total = total
        self.perAddress = perAddress
    }
}

/// Every open connection of the page: its client address, and whether it is busy (a request
/// read and its response not yet ended: a live stream, a download, a request being answered)
/// or idle (nothing asked yet, a request still being sent, or between requests).
///
/// A new connection over its address's limit is closed at once. Over the total, it takes the
/// place of the oldest idle connection of the address holding the most, when that address holds
/// at least two more than its own; else it is closed at once. A busy connection is never closed
/// for another. So a flood of silent connections from many addresses never keeps a page's new
/// request out (its address holds few), and never closes a live page.
///
/// Closing one connection for each new one whatever its address made a loop (issue 33): an
/// attacker reopening each connection lineup-web closed made it close another, as fast as
/// lineup-web could accept, a core spent on it while the queue of connections waiting to be
/// accepted stayed full, so the trainer's new connection was dropped by the kernel and tried
/// again a second later (page p99 1.5 s). A connection reopened at once comes from an address
/// at the top, so it is refused now and closes nobody's.
public final class ConnectionTable: Sendable {
    public enum Admission: Sendable {
        /// Open `id`; `evicted` is the connection closed to make room, if any.
        case admitted(id: Int, evicted: (@Sendable () -> Void)?)
        /// Over a limit with nothing idle to close: close this one.
        case refused
    }

    private struct Entry {
        var address: String
        var close: @Sendable () -> Void
        var busy: Bool
        /// When it last became idle, as a count of events (no clock: the order is what matters).
        var idleSince: Int
    }

    private struct State {
        var entries: [Int: Entry] = [:]
        var perAddress: [String: Int] = [:]
        var nextID = 0
        var tick = 0
        var evictions = 0
        var refusals = 0
    }

    public let limits: ConnectionLimits
    private let state = Mutex(State())

    public init(limits: ConnectionLimits) { self.limits = limits }

    public func admit(address: String, close: @escaping @Sendable () -> Void) -> Admission {
        state.withLock { state in
            let own = state.perAddress[address, default: 0]
            var victim: Int?
            if own >= limits.perAddress {
                state.refusals += 1
                return .refused
            }
            if state.entries.count >= limits.total {
                // Room only from an address holding at least two more than this one: its
                // oldest idle connection. A connection reopened as soon as it was closed comes
                // from an address at the top, so it is refused, and closes nobody's.
                var best: (count: Int, idleSince: Int, id: Int)?
                for (id, entry) in state.entries where !entry.busy {
                    let count = state.perAddress[entry.address, default: 0]
                    guard count >= own + 2 else { continue }
                    if best == nil || count > best!.count || (count == best!.count && entry.idleSince < best!.idleSince)
                    {
                        best = (count, entry.idleSince, id)
                    }
                }
                victim = best?.id
                if victim == nil {
                    state.refusals += 1
                    return .refused
                }
            }
            var evicted: (@Sendable () -> Void)?
            if let victim, let entry = Self.remove(victim, &state) {
                evicted = entry.close
                state.evictions += 1
            }
            let id = state.nextID
            state.nextID += 1
            state.tick += 1
            state.entries[id] = Entry(address: address, close: close, busy: false, idleSince: state.tick)
            state.perAddress[address, default: 0] += 1
            return .admitted(id: id, evicted: evicted)
        }
    }

    public func setBusy(_ id: Int, _ busy: Bool) {
        state.withLock { state in
            guard state.entries[id] != nil else { return }
            state.tick += 1
            state.entries[id]!.busy = busy
            if !busy { state.entries[id]!.idleSince = state.tick }
        }
    }

    public func remove(_ id: Int) { state.withLock { _ = Self.remove(id, &$0) } }

    /// Open connections, in all and from `address`; connections closed for others and refused.
    public var count: Int { state.withLock { $0.entries.count } }
    public func count(address: String) -> Int { state.withLock { $0.perAddress[address, default: 0] } }
    public var evictions: Int { state.withLock { $0.evictions } }
    public var refusals: Int { state.withLock { $0.refusals } }

    private static func oldestIdle(_ state: State, where matches: (Entry) -> Bool) -> Int? {
        state.entries.filter { !$0.value.busy && matches($0.value) }.min { $0.value.idleSince < $1.value.idleSince }?
            .key
    }

    private static func remove(_ id: Int, _ state: inout State) -> Entry? {
        guard let entry = state.entries.removeValue(forKey: id) else { return nil }
        let left = state.perAddress[entry.address, default: 1] - 1
        state.perAddress[entry.address] = left > 0 ? left : nil
        return entry
    }
}

/// One connection's guard, in its pipeline after the HTTP decoder: it takes over the
/// connection's place in the table from the login gate (`GatedHTTP1Channel`, which took it as
/// the connection was accepted), keeps its busy or idle state there, and closes it at its
/// deadline, the first request's head's counted from the connection's opening.
final class ConnectionGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let table: ConnectionTable
    private var id: Int?
    private let headerDeadline: NIODeadline
    /// Requests whose head was read and whose response has not ended.
    private var inFlight = 0
    /// A request's head was read and its body is not yet whole.
    private var reading = false
    private var deadline: Scheduled<Void>?

    init(place: ConnectionPlace) {
        table = place.table
        id = place.id
        headerDeadline = place.headerDeadline
    }

    func handlerAdded(context: ChannelHandlerContext) {
        deadline = context.eventLoop.assumeIsolated().scheduleTask(deadline: headerDeadline) {
            context.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            inFlight += 1
            reading = true
            if inFlight == 1, let id { table.setBusy(id, true) }
            arm(context, seconds: table.limits.bodySeconds)
        case .end:
            reading = false
            // The response may take as long as it needs (a live stream lasts the page's life).
            disarm()
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            inFlight = max(0, inFlight - 1)
            if reading {
                arm(context, seconds: table.limits.bodySeconds)
            } else if inFlight == 0 {
                if let id { table.setBusy(id, false) }
                arm(context, seconds: table.limits.idleSeconds)
            }
        }
        context.write(data, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        disarm()
        if let id { table.remove(id) }
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        disarm()
        if let id { table.remove(id) }
        id = nil
    }

    private func arm(_ context: ChannelHandlerContext, seconds: Double) {
        disarm()
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(seconds * 1000))) {
            context.close(promise: nil)
        }
    }

    private func disarm() {
        deadline?.cancel()
        deadline = nil
    }
}

@available(*, unavailable)
extension ConnectionGuardHandler: Sendable {}

/// Open files for the connections: each connection is one descriptor, and lineup-web keeps
/// `reserve` more for itself (the accounts file, the log, requests to lineupd, its event
/// loops). Without room for them, accept() fails with EMFILE and nothing new gets in.
public enum DescriptorBudget {
    public static let reserve = 256

    /// Raises the soft limit on open files as far as the hard one allows, to fit `connections`;
    /// returns the limit and how many connections it fits.
    public static func raise(toFit connections: Int) -> (limit: Int, connections: Int) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return (0, connections) }
        let wanted = rlim_t(connections + reserve)
        if limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = min(wanted, limit.rlim_max)
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        let soft = Int(clamping: limit.rlim_cur)
        return (soft, max(1, min(connections, soft - reserve)))
    }
}
