import Glibc
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

// The login gate: a login the page would refuse anyway is refused from its first bytes, before
// any HTTP parsing, on the event loop that read it. Issue 33: a flood of logins from 250
// addresses, each sent again as soon as it was answered, was parsed, routed, limited and
// answered in full, every refusal a request on Swift's pool beside the trainer's own (the
// page's p99 108 ms under the flood, against 50 ms wanted). Refused here, it costs one read, a
// lookup, a timer and a canned answer. A new connection gets its place in the table and the
// gate, nothing more: the HTTP pipeline (decoder, encoder, the page's guard, the stream Swift's
// pool reads) is built only once the gate lets the connection go on, so a refused login never
// has one built and torn down (the flood's connections each cost a debug build about 1 ms of a
// core to accept and set up, and the trainer's new connection waited behind them).

/// Whether a login from `address`, from a browser the page does not remember, would be
/// refused whatever its name and password, and with what answer: `WebState.loginRefusal`.
typealias LoginRefusal = @Sendable (_ address: String) -> WebError?

/// A new connection's whole pipeline at first. A connection whose first bytes are not
/// `POST /api/login` goes on at once: its HTTP pipeline is built (`build`), what it sent is
/// handed to it, and this handler leaves. A login's head is read (at most `headLimit` bytes);
/// without a `lineup_device` cookie (a remembered browser has its own bucket and its own line,
/// so it always goes on) and refused by `refusal`, its answer is written after `wait` seconds
/// and the connection closed; what it sends meanwhile is read and dropped, never parsed (its
/// body is never waited for). Until it goes on, the gate holds the connection's place in the
/// table (`ConnectionTable`, idle) and its deadline for a request's head, which the page's
/// guard takes over with the place.
final class LoginGate: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    static let login = Array("POST /api/login".utf8)
    static let headEnd = Array("\r\n\r\n".utf8)
    static let deviceCookie = Array((WebApp.deviceCookieName + "=").utf8)
    /// A login's head longer than this goes on to the HTTP decoder (and its own limits).
    static let headLimit = 4096

    private let refusal: LoginRefusal
    private let wait: @Sendable () -> Double
    private let place: ConnectionPlace
    private let build: (any Channel) -> EventLoopFuture<HTTP1Channel.Value>
    /// The connection's HTTP stream once built, nil when it never is (refused, or closed
    /// before it went on): Swift's pool waits on it (`GatedHTTP1Channel.handle`).
    private var decided: EventLoopPromise<HTTP1Channel.Value?>?
    private var buffered: ByteBuffer?
    private var state = State.reading
    private var answer: Scheduled<Void>?
    private var deadline: Scheduled<Void>?

    private enum State {
        case reading, building, refused, handedOver
    }

    init(
        refusal: @escaping LoginRefusal, wait: @escaping @Sendable () -> Double, place: ConnectionPlace,
        decided: EventLoopPromise<HTTP1Channel.Value?>,
        build: @escaping (any Channel) -> EventLoopFuture<HTTP1Channel.Value>
    ) {
        self.refusal = refusal
        self.wait = wait
        self.place = place
        self.decided = decided
        self.build = build
    }

    func handlerAdded(context: ChannelHandlerContext) {
        deadline = context.eventLoop.assumeIsolated().scheduleTask(deadline: place.headerDeadline) {
            context.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Refused: the rest of the request is read and dropped, so that closing after the
        // answer sends no reset that could take the answer with it.
        guard state != .refused else { return }
        var bytes = unwrapInboundIn(data)
        if buffered == nil {
            buffered = bytes
        } else {
            buffered!.writeBuffer(&bytes)
        }
        // Its pipeline being built: kept for it.
        guard state == .reading else { return }
        switch Self.look(at: buffered!) {
        case .wait:
            return
        case .goOn:
            goOn(context)
        case .login:
            let address = context.channel.remoteAddress?.ipAddress ?? "unknown"
            guard let error = refusal(address) else {
                goOn(context)
                return
            }
            refuse(context, error)
        }
    }

    enum Look: Equatable {
        /// Not enough bytes yet to tell.
        case wait
        /// Not a login, a login too long to look at, or a remembered browser's: to the decoder.
        case goOn
        /// A login's whole head, from a browser the page does not remember.
        case login
    }

    /// What the first bytes of a connection are, as far as the gate cares.
    static func look(at buffer: ByteBuffer) -> Look { buffer.withUnsafeReadableBytes { look(at: $0) } }

    /// The same over raw bytes, compared with C's `memcmp` and `memchr`: every connection's
    /// first bytes pass here, and in a debug build a byte at a time through `ByteBufferView`
    /// cost each of a flood's refused logins about 0.05 ms, a tenth of its event loop's time.
    static func look(at bytes: UnsafeRawBufferPointer) -> Look {
        guard let base = bytes.baseAddress else { return .wait }
        let known = min(bytes.count, login.count + 1)
        if memcmp(base, login, min(known, login.count)) != 0 { return .goOn }
        guard known == login.count + 1 else { return .wait }
        // `/api/login` itself (or with a query), not a longer path.
        let next = bytes[login.count]
        guard next == UInt8(ascii: " ") || next == UInt8(ascii: "?") else { return .goOn }
        let window = UnsafeRawBufferPointer(rebasing: bytes.prefix(headLimit))
        guard let end = firstIndex(of: headEnd, in: window) else { return bytes.count >= headLimit ? .goOn : .wait }
        return firstIndex(of: deviceCookie, in: UnsafeRawBufferPointer(rebasing: window[..<end])) == nil
            ? .login : .goOn
    }

    /// Where `needle` starts in `bytes`.
    static func firstIndex(of needle: [UInt8], in bytes: UnsafeRawBufferPointer) -> Int? {
        guard let base = bytes.baseAddress, !needle.isEmpty, bytes.count >= needle.count else { return nil }
        let last = bytes.count - needle.count
        var from = 0
        while from <= last {
            guard let hit = memchr(base + from, Int32(needle[0]), last - from + 1) else { return nil }
            let i = base.distance(to: UnsafeRawPointer(hit))
            if memcmp(base + i, needle, needle.count) == 0 { return i }
            from = i + 1
        }
        return nil
    }

    /// Builds the HTTP pipeline behind the gate, hands it what was read, and leaves.
    private func goOn(_ context: ChannelHandlerContext) {
        state = .building
        build(context.channel).assumeIsolated().whenComplete { result in
            switch result {
            case .success(let http):
                // The page's guard has the connection's place and deadline from here.
                self.state = .handedOver
                self.deadline?.cancel()
                self.deadline = nil
                self.decide(http)
                let bytes = self.buffered
                self.buffered = nil
                // Handed on before leaving: a handler that has left the pipeline can pass nothing on.
                if let bytes {
                    context.fireChannelRead(self.wrapInboundOut(bytes))
                    context.fireChannelReadComplete()
                }
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            case .failure:
                context.close(promise: nil)
            }
        }
    }

    private func decide(_ http: HTTP1Channel.Value?) {
        decided?.succeed(http)
        decided = nil
    }

    private func refuse(_ context: ChannelHandlerContext, _ error: WebError) {
        state = .refused
        buffered = nil
        // Nothing for Swift's pool to do with it.
        decide(nil)
        let text = Self.answer(error)
        let loop = context.eventLoop.assumeIsolated()
        answer = loop.scheduleTask(in: .milliseconds(Int64(wait() * 1000))) {
            context.writeAndFlush(self.wrapOutboundOut(ByteBuffer(string: text))).whenComplete { _ in
                context.close(promise: nil)
            }
        }
    }

    /// The whole HTTP answer, as the page's own refusal would be (`WebError.response`, the
    /// security headers of `GuardMiddleware`), with `Connection: close`.
    static func answer(_ error: WebError) -> String {
        let body = error.bodyText
        var text = "HTTP/1.1 \(error.status.code) \(error.status.reasonPhrase)\r\n"
        text += "Content-Type: application/json; charset=utf-8\r\nCache-Control: no-store\r\n"
        for field in error.headers { text += "\(field.name.rawName): \(field.value)\r\n" }
        for (name, value) in GuardMiddleware.securityHeaders { text += "\(name.rawName): \(value)\r\n" }
        text += "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body
        return text
    }

    func channelInactive(context: ChannelHandlerContext) {
        end()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { end() }

    /// Closed, or gone on: the timers stop; closed before it went on, its place is given back
    /// and Swift's pool told there is nothing to serve.
    private func end() {
        answer?.cancel()
        answer = nil
        deadline?.cancel()
        deadline = nil
        guard state != .handedOver else { return }
        place.table.remove(place.id)
        decide(nil)
    }
}

@available(*, unavailable)
extension LoginGate: Sendable {}

/// A connection's place in the page's table (`ConnectionTable`), taken as it was accepted,
/// and the end of its time to send a request's head (`ConnectionLimits.headerSeconds` from then).
struct ConnectionPlace: Sendable {
    let table: ConnectionTable
    let id: Int
    let headerDeadline: NIODeadline
}

/// Hummingbird's HTTP/1 connection behind the login gate. Each new connection, before it is
/// registered or read: over the table's caps, it is closed there and then (nothing built, no
/// task on Swift's pool); else it gets its place and the gate alone (`LoginGate`), which builds
/// the HTTP pipeline when the connection goes on.
struct GatedHTTP1Channel: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        let channel: any Channel
        /// The connection's HTTP stream once the gate let it go on; nil: it never did.
        let http: EventLoopFuture<HTTP1Channel.Value?>
    }

    let responder: HTTPChannelHandler.Responder
    /// Hummingbird's HTTP/1 settings, without the page's guard (each connection has its own).
    let configuration: HTTP1Channel.Configuration
    let table: ConnectionTable
    let refusal: LoginRefusal
    let wait: @Sendable () -> Double

    /// A connection over a cap, closed before anything was built for it.
    struct Refused: Error {}

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let opened = NIODeadline.now()
        let address = channel.remoteAddress?.ipAddress ?? "unknown"
        guard
            case .admitted(let id, let evicted) = table.admit(address: address, close: { channel.close(promise: nil) })
        else {
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(Refused())
        }
        evicted?()
        let place = ConnectionPlace(
            table: table, id: id, headerDeadline: opened + .milliseconds(Int64(table.limits.headerSeconds * 1000)))
        let (responder, configuration, refusal, wait) = (responder, configuration, refusal, wait)
        let decided = channel.eventLoop.makePromise(of: HTTP1Channel.Value?.self)
        do {
            try channel.pipeline.syncOperations.addHandler(
                LoginGate(refusal: refusal, wait: wait, place: place, decided: decided) { channel in
                    var http = configuration
                    http.additionalChannelHandlers = { [ConnectionGuardHandler(place: place)] }
                    return HTTP1Channel(responder: responder, configuration: http).setup(
                        channel: channel, logger: logger)
                })
        } catch {
            table.remove(id)
            decided.succeed(nil)
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(error)
        }
        return channel.eventLoop.makeSucceededFuture(Value(channel: channel, http: decided.futureResult))
    }

    func handle(value: Value, logger: Logger) async {
        guard let http = try? await value.http.get() else { return }
        await HTTP1Channel(responder: responder, configuration: configuration).handle(value: http, logger: logger)
    }
}

extension WebState {
    func waitBeforeRefusing() async {
        let wait = refusalWait()
        guard wait > 0 else { return }
        try? await Task.sleep(for: .milliseconds(Int(wait * 1000)))
    }

    /// This refusal's wait: `refusedLoginWait` to half as long again, at random. Each the same,
    /// a flood's logins came back all together, one wave a second, and the trainer's connection
    /// waited in the kernel's queue to be accepted behind the whole wave (issue 33).
    public func refusalWait() -> Double {
        refusedLoginWait > 0 ? refusedLoginWait * Double.random(in: 1..<1.5) : 0
    }

    /// The gate's question, decided by the same rules as the login itself (`WebApp.login`): a
    /// browser the page does not remember is refused when its address's bucket is empty
    /// (`LoginLimiter.addressWait`; 429, Retry-After from that bucket) or, with a token left,
    /// when the password checks' line for such browsers is full (503). Nothing is taken from a
    /// bucket: a refused login checks no password.
    func loginRefusal(address: String) -> WebError? {
        if let wait = limiter.addressWait(address: address, now: now()) { return .rateLimited(seconds: wait) }
        if checks.isFull(remembered: false) { return .checksBusy }
        return nil
    }
}

extension WebError {
    /// A login refused by the login limit, `seconds` before a try may pass.
    static func rateLimited(seconds wait: Double) -> WebError {
        let seconds = Int(wait.rounded(.up))
        var error = WebError(
            .tooManyRequests, "rate-limited",
            "too many login attempts from this address or for this name: try again in \(seconds) s")
        error.headers[.retryAfter] = "\(seconds)"
        return error
    }

    /// A login refused because the password checks' line is full.
    static var checksBusy: WebError {
        var error = WebError(
            .serviceUnavailable, "busy", "the station is checking too many logins: try again in a few seconds")
        error.headers[.retryAfter] = "5"
        return error
    }
}
