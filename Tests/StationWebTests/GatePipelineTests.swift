import HummingbirdCore
import Logging
import NIOCore
import NIOEmbedded
import Testing

@testable import StationWeb

/// What a new connection costs before the login gate has decided (issue 33: each of a flood's
/// refused logins had a whole HTTP pipeline built and torn down, about 1 ms of a core in a
/// debug build, and the trainer's new connection waited behind them): its place in the table
/// and the gate alone; the HTTP pipeline only once the gate lets it go on; nothing at all over
/// a cap. On NIO's embedded channel (no sockets, no threads, virtual time).
@Suite struct GatePipelineTests {
    static func gated(_ table: ConnectionTable, refusal: WebError? = nil) -> GatedHTTP1Channel {
        GatedHTTP1Channel(
            responder: { _, _, _ in }, configuration: HTTP1Channel.Configuration(), table: table,
            refusal: { _ in refusal }, wait: { 0 })
    }

    /// A connection from `address`, set up as lineup-web sets up one it accepted, then
    /// connected (active); the setup's value, nil when it failed.
    static func accepted(_ gated: GatedHTTP1Channel, from address: String) throws -> (
        EmbeddedChannel, GatedHTTP1Channel.Value?
    ) {
        let channel = EmbeddedChannel()
        channel.remoteAddress = try SocketAddress(ipAddress: address, port: 40000)
        let value = try? gated.setup(channel: channel, logger: Logger(label: "gate-pipeline")).wait()
        if value != nil { try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 8080)).wait() }
        return (channel, value)
    }

    static func has<H: ChannelHandler>(_ channel: EmbeddedChannel, _ type: H.Type) -> Bool {
        (try? channel.pipeline.syncOperations.handler(type: type)) != nil
    }

    @Test func aRefusedLoginNeverHasAnHTTPPipelineBuilt() throws {
        let table = ConnectionTable(limits: ConnectionLimits())
        let (channel, value) = try Self.accepted(Self.gated(table, refusal: .checksBusy), from: "127.0.8.1")
        let http = try #require(value).http
        #expect(Self.has(channel, LoginGate.self))
        #expect(!Self.has(channel, ConnectionGuardHandler.self), "the HTTP pipeline was built before the gate decided")
        #expect(table.count(address: "127.0.8.1") == 1)
        try channel.writeInbound(
            ByteBuffer(string: "POST /api/login HTTP/1.1\r\nHost: station\r\nContent-Length: 100\r\n\r\n"))
        channel.embeddedEventLoop.run()
        #expect(try http.wait() == nil)
        #expect(!Self.has(channel, ConnectionGuardHandler.self), "a refused login had an HTTP pipeline built")
        let answer = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(String(buffer: answer).hasPrefix("HTTP/1.1 503 "))
        #expect(!channel.isActive)
        #expect(table.count == 0, "the refused connection kept its place")
    }

    @Test func aPagesRequestHasItsPipelineBuiltAndTheGateLeaves() throws {
        let table = ConnectionTable(limits: ConnectionLimits())
        let (channel, value) = try Self.accepted(Self.gated(table, refusal: .checksBusy), from: "127.0.8.2")
        let http = try #require(value).http
        try channel.writeInbound(ByteBuffer(string: "GET /login HTTP/1.1\r\nHost: station\r\n\r\n"))
        #expect(try http.wait() != nil)
        #expect(!Self.has(channel, LoginGate.self))
        #expect(Self.has(channel, ConnectionGuardHandler.self))
        #expect(table.count(address: "127.0.8.2") == 1)
        _ = try? channel.finish()
    }

    @Test func aConnectionOverItsAddresssCapIsClosedBeforeAnythingIsBuilt() throws {
        let table = ConnectionTable(limits: ConnectionLimits(total: 10, perAddress: 1))
        let gated = Self.gated(table)
        let (first, kept) = try Self.accepted(gated, from: "127.0.8.3")
        #expect(kept != nil)
        let (second, refused) = try Self.accepted(gated, from: "127.0.8.3")
        #expect(refused == nil, "a connection over its address's cap was set up")
        #expect(!Self.has(second, LoginGate.self))
        #expect(table.count(address: "127.0.8.3") == 1)
        _ = try? first.finish()
    }
}
