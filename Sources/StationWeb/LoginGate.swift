import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

// The login gate: a login the page would refuse anyway is refused from its first bytes, before
// any HTTP parsing, on the event loop that read it. Issue 33: a flood of logins from 250
// addresses, each sent again as soon as it was answered, was parsed, routed, limited and
// answered in full, every refusal a request on Swift's pool beside the trainer's own (the
// page's p99 108 ms under the flood, against 50 ms wanted). Refused here, it costs one read, a
// lookup, a timer and a canned answer.

/// Whether a login from `address`, from a browser the page does not remember, would be
/// refused whatever its name and password, and with what answer: `WebState.loginRefusal`.
typealias LoginRefusal = @Sendable (_ address: String) -> WebError?

/// First in each connection's pipeline, before the HTTP decoder. A connection whose first bytes
/// are not `POST /api/login` goes on at once (this handler leaves its pipeline). A login's head
/// is read (at most `headLimit` bytes); without a `lineup_device` cookie (a remembered browser
/// has its own bucket and its own line, so it always goes on) and refused by `refusal`, its
/// answer is written after `wait` seconds and the connection closed; what it sends meanwhile is
/// read and dropped, never parsed (its body is never waited for).
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
    private var buffered: ByteBuffer?
    private var refused = false
    private var answer: Scheduled<Void>?

    init(refusal: @escaping LoginRefusal, wait: @escaping @Sendable () -> Double) {
        self.refusal = refusal
        self.wait = wait
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Refused: the rest of the request is read and dropped, so that closing after the
        // answer sends no reset that could take the answer with it.
        guard !refused else { return }
        var bytes = unwrapInboundIn(data)
        if buffered == nil {
            buffered = bytes
        } else {
            buffered!.writeBuffer(&bytes)
        }
        switch Self.look(at: buffered!.readableBytesView) {
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
    static func look(at bytes: ByteBufferView) -> Look {
        let start = bytes.startIndex
        let known = min(bytes.count, login.count + 1)
        for i in 0..<min(known, login.count) where bytes[start + i] != login[i] { return .goOn }
        guard known == login.count + 1 else { return .wait }
        // `/api/login` itself (or with a query), not a longer path.
        let next = bytes[start + login.count]
        guard next == UInt8(ascii: " ") || next == UInt8(ascii: "?") else { return .goOn }
        guard let end = firstIndex(of: headEnd, in: bytes, limit: headLimit) else {
            return bytes.count >= headLimit ? .goOn : .wait
        }
        return firstIndex(of: deviceCookie, in: bytes[start..<end], limit: headLimit) == nil ? .login : .goOn
    }

    /// Where `needle` starts in the first `limit` bytes of `bytes`.
    static func firstIndex(of needle: [UInt8], in bytes: ByteBufferView, limit: Int) -> Int? {
        let end = min(bytes.endIndex, bytes.startIndex + limit)
        guard end - bytes.startIndex >= needle.count else { return nil }
        var i = bytes.startIndex
        while i + needle.count <= end {
            if bytes[i] == needle[0] {
                var matched = true
                for j in 1..<needle.count where bytes[i + j] != needle[j] {
                    matched = false
                    break
                }
                if matched { return i }
            }
            i += 1
        }
        return nil
    }

    private func goOn(_ context: ChannelHandlerContext) {
        let bytes = buffered
        buffered = nil
        // Handed on before leaving: a handler that has left the pipeline can pass nothing on.
        if let bytes { context.fireChannelRead(wrapInboundOut(bytes)) }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    private func refuse(_ context: ChannelHandlerContext, _ error: WebError) {
        refused = true
        buffered = nil
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
        answer?.cancel()
        answer = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        answer?.cancel()
        answer = nil
    }
}

@available(*, unavailable)
extension LoginGate: Sendable {}

/// Hummingbird's HTTP/1 connection with the login gate in front of its decoder.
struct GatedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value
    let http: HTTP1Channel
    let refusal: LoginRefusal
    let wait: @Sendable () -> Double

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let (refusal, wait) = (refusal, wait)
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(LoginGate(refusal: refusal, wait: wait), position: .first)
        }.flatMap { http.setup(channel: channel, logger: logger) }
    }

    func handle(value: Value, logger: Logger) async {
        await http.handle(value: value, logger: logger)
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
