import Alerts
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Why a request did not get a 2xx: one line naming the URL's host and what happened. The URL
/// itself is never shown: a webhook's or a dead-man's URL is its secret.
struct HTTPSendError: Error, CustomStringConvertible {
    var host: String
    var problem: String
    var description: String { "\(host): \(problem)" }
}

/// Webhooks and the dead-man pings over AsyncHTTPClient (its shared client: the system's CA
/// roots for https).
enum HTTPSender {
    static let timeout: TimeAmount = .seconds(20)

    static func send(_ notice: AlertNotice, to hook: AlertsConfig.Webhook) async throws {
        guard let url = URL(string: hook.url) else { throw HTTPSendError(host: hook.url, problem: "not a URL") }
        var target = hook.url
        var method = HTTPMethod.POST
        var topic: String?
        switch hook.format {
        case .json, .slack: break
        case .ntfy:
            // ntfy's JSON publishing goes to the server's root, the topic in the body.
            topic = url.lastPathComponent
            target = hook.url.hasSuffix("/") ? String(hook.url.dropLast()) : hook.url
            target = String(target.dropLast(url.lastPathComponent.count))
        case .matrix:
            // The room's send endpoint takes a PUT with a transaction id of the sender's.
            method = .PUT
            target = (hook.url.hasSuffix("/") ? hook.url : hook.url + "/") + UUID().uuidString
        }
        let body = AlertFormats.webhookBody(notice, format: hook.format, topic: topic)
        try await request(target, method: method, body: body, contentType: "application/json", token: hook.token)
    }

    /// A healthchecks-style ping: GET the URL when all is well, POST to `URL/fail` with what is wrong.
    static func ping(_ ping: DeadManPing, url: String, station: String) async throws {
        switch ping {
        case .success:
            try await request(url, method: .GET, body: nil, contentType: nil, token: nil)
        case .failure:
            let base = url.hasSuffix("/") ? String(url.dropLast()) : url
            try await request(
                base + "/fail", method: .POST, body: Data(AlertFormats.deadManBody(ping, station: station).utf8),
                contentType: "text/plain; charset=utf-8", token: nil)
        }
    }

    static func request(_ url: String, method: HTTPMethod, body: Data?, contentType: String?, token: String?)
        async throws
    {
        let host = URL(string: url)?.host ?? "the URL"
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let contentType { request.headers.add(name: "Content-Type", value: contentType) }
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        request.headers.add(name: "User-Agent", value: "lineup-alerts")
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response: HTTPClientResponse
        do {
            response = try await HTTPClient.shared.execute(request, timeout: timeout)
        } catch {
            throw HTTPSendError(host: host, problem: "\(error)")
        }
        // Read (and drop) the body so the connection can be reused.
        _ = try? await response.body.collect(upTo: 64 * 1024)
        guard (200..<300).contains(response.status.code) else {
            throw HTTPSendError(host: host, problem: "answered \(response.status.code) \(response.status.reasonPhrase)")
        }
    }
}
