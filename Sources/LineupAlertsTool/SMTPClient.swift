import Alerts
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// Why a message was not taken: one line naming the server and the step.
struct SMTPError: Error, CustomStringConvertible {
    var server: String
    var problem: String
    var description: String { "e-mail through \(server): \(problem)" }
}

/// A small SMTP submission client (RFC 6409 with STARTTLS, RFC 3207; AUTH PLAIN or LOGIN,
/// RFC 4954) over SwiftNIO and NIOSSL: one connection per message, which is all an alert needs.
struct SMTPClient {
    var settings: AlertsConfig.Email
    /// The name given in EHLO.
    var hostName: String
    /// For the whole conversation, connection included.
    var timeout: Double = 30

    var serverName: String { "\(settings.server):\(settings.port)" }

    func send(_ message: MailMessage) async throws {
        let lines = AsyncThrowingStream<String, any Error>.makeStream()
        let broke = FirstError()
        let channel: any Channel
        do {
            let tls = settings.security == .tls ? try tlsHandlerMaker() : nil
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.seconds(Int64(timeout)))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let tls { try channel.pipeline.syncOperations.addHandler(try tls()) }
                        try channel.pipeline.syncOperations.addHandler(
                            LineHandler(continuation: lines.continuation, broke: broke))
                    }
                }
                .connect(host: settings.server, port: settings.port).get()
        } catch {
            throw SMTPError(server: serverName, problem: "cannot connect: \(error)")
        }
        let conversation = Conversation(
            channel: channel, lines: lines.stream.makeAsyncIterator(), server: serverName, broke: broke)
        let began = ContinuousClock.now
        let timer = Task {
            try await Task.sleep(for: .seconds(timeout))
            channel.close(promise: nil)
        }
        defer {
            timer.cancel()
            channel.close(promise: nil)
        }
        do {
            try await talk(conversation, message)
        } catch {
            // The timer closes the connection: whatever step that broke, the reason is the time.
            if ContinuousClock.now - began >= .seconds(timeout) {
                throw SMTPError(server: serverName, problem: "no answer within \(Int(timeout)) s")
            }
            // A failed handshake closes the channel: the write after it only says "closed".
            let cause = broke.error ?? error
            throw cause as? SMTPError ?? SMTPError(server: serverName, problem: tlsFailure(cause) ?? "\(cause)")
        }
    }

    /// Makes a TLS handler for the server (its certificate checked against `ca_file` or the
    /// system's roots, and its name when it is a host name).
    func tlsHandlerMaker() throws -> @Sendable () throws -> NIOSSLClientHandler {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let ca = settings.caFile { configuration.trustRoots = .file(ca) }
        let context = try NIOSSLContext(configuration: configuration)
        let server = settings.server
        let isAddress = server.contains(":") || server.allSatisfy { $0.isNumber || $0 == "." }
        return { try NIOSSLClientHandler(context: context, serverHostname: isAddress ? nil : server) }
    }

    /// A TLS failure in one sentence (as LabStore says the store's), or nil for any other error.
    func tlsFailure(_ error: any Error) -> String? {
        if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname {
            return "TLS: the server's certificate does not name \(settings.server): nothing was sent"
        }
        guard let ssl = error as? NIOSSLError else { return nil }
        if case .handshakeFailed(let failure) = ssl, "\(failure)".contains("CERTIFICATE_VERIFY_FAILED") {
            // BoringSSL says only that the check failed, not which part of it.
            let by = settings.caFile.map { "the CA in ca_file \($0)" } ?? "a CA this machine trusts (or set ca_file)"
            return "TLS: the server's certificate is not signed by \(by), or is out of date: nothing was sent"
        }
        return "TLS failed: \(ssl)"
    }

    private func talk(_ c: Conversation, _ message: MailMessage) async throws {
        try await c.expect(220, "the greeting")
        var extensions = try await c.command("EHLO \(hostName)", expect: 250)
        if settings.security == .starttls {
            guard extensions.contains(where: { $0.uppercased().hasPrefix("STARTTLS") }) else {
                throw SMTPError(
                    server: serverName, problem: "the server offers no STARTTLS: nothing was sent in the clear")
            }
            _ = try await c.command("STARTTLS", expect: 220)
            let make = try tlsHandlerMaker()
            try await c.channel.eventLoop.submit {
                try c.channel.pipeline.syncOperations.addHandler(try make(), position: .first)
            }.get()
            extensions = try await c.command("EHLO \(hostName)", expect: 250)
        }
        if let user = settings.user, let password = settings.password {
            let auth = extensions.first { $0.uppercased().hasPrefix("AUTH") }?.uppercased() ?? ""
            if auth.contains("PLAIN") || !auth.contains("LOGIN") {
                let token = Data("\0\(user)\0\(password)".utf8).base64EncodedString()
                _ = try await c.command("AUTH PLAIN \(token)", expect: 235, shown: "AUTH PLAIN")
            } else {
                _ = try await c.command("AUTH LOGIN", expect: 334)
                _ = try await c.command(Data(user.utf8).base64EncodedString(), expect: 334, shown: "the user")
                _ = try await c.command(Data(password.utf8).base64EncodedString(), expect: 235, shown: "the password")
            }
        }
        _ = try await c.command("MAIL FROM:<\(message.from)>", expect: 250)
        for to in message.to { _ = try await c.command("RCPT TO:<\(to)>", expect: 250, 251) }
        _ = try await c.command("DATA", expect: 354)
        _ = try await c.command(message.data, expect: 250, shown: "the message", terminated: true)
        _ = try? await c.command("QUIT", expect: 221)
    }
}

/// One SMTP conversation: commands out, replies (`250-...`, `250 ...`) in.
private final class Conversation: @unchecked Sendable {
    let channel: any Channel
    var lines: AsyncThrowingStream<String, any Error>.AsyncIterator
    let server: String
    let broke: FirstError

    init(
        channel: any Channel, lines: AsyncThrowingStream<String, any Error>.AsyncIterator, server: String,
        broke: FirstError
    ) {
        self.channel = channel
        self.lines = lines
        self.server = server
        self.broke = broke
    }

    func expect(_ code: Int, _ step: String) async throws { _ = try await reply([code], step) }

    func reply(_ codes: [Int], _ step: String) async throws -> [String] {
        var texts: [String] = []
        while true {
            guard let line = try await lines.next() else {
                throw SMTPError(server: server, problem: "the server closed the connection at \(step)")
            }
            let code = Int(line.prefix(3)) ?? 0
            texts.append(String(line.dropFirst(4)))
            if line.count < 4 || line[line.index(line.startIndex, offsetBy: 3)] != "-" {
                guard codes.contains(code) else {
                    throw SMTPError(server: server, problem: "\(step) was refused: \(line)")
                }
                return texts
            }
        }
    }

    /// Sends a command (a line, or DATA's text, which ends with its own dot line) and reads its reply.
    func command(_ text: String, expect codes: Int..., shown: String? = nil, terminated: Bool = false) async throws
        -> [String]
    {
        let wire = terminated ? text : text + "\r\n"
        try await channel.writeAndFlush(ByteBuffer(string: wire)).get()
        return try await reply(codes, shown ?? String(text.prefix(while: { $0 != " " && $0 != "\r" })))
    }
}

/// Bytes in, CRLF-ended lines out, into the conversation's stream.
private final class LineHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let continuation: AsyncThrowingStream<String, any Error>.Continuation
    let broke: FirstError
    var pending: [UInt8] = []

    init(continuation: AsyncThrowingStream<String, any Error>.Continuation, broke: FirstError) {
        self.continuation = continuation
        self.broke = broke
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        pending += buffer.readBytes(length: buffer.readableBytes) ?? []
        while let newline = pending.firstIndex(of: 0x0A) {
            var line = Array(pending[..<newline])
            pending.removeSubrange(...newline)
            if line.last == 0x0D { line.removeLast() }
            continuation.yield(String(decoding: line, as: UTF8.self))
        }
        if pending.count > 64 * 1024 {
            continuation.finish(throwing: SMTPError(server: "", problem: "a reply line too long"))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        continuation.finish()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        broke.keep(error)
        continuation.finish(throwing: error)
        context.close(promise: nil)
    }
}

/// The first error the channel caught (a TLS handshake refused, a certificate not trusted): what
/// the person needs, where the step that failed after it would only say the channel closed.
final class FirstError: Sendable {
    private let first = Mutex<(any Error)?>(nil)

    func keep(_ error: any Error) { first.withLock { $0 = $0 ?? error } }
    var error: (any Error)? { first.withLock { $0 } }
}
