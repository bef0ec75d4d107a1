import Foundation

/// The webhook formats labs ask for.
public enum WebhookFormat: String, Sendable, Hashable, CaseIterable {
    /// Our own JSON object (below), for a lab's own receiver.
    case json
    /// ntfy's JSON publishing: POSTed to the server's root with the topic in the body.
    case ntfy
    /// Slack's and Mattermost's incoming webhooks: `{"text": ...}`.
    case slack
    /// A Matrix room: `m.room.message` PUT to the room's send endpoint with a transaction id.
    case matrix
}

/// What each channel sends for a notice. Pure, so the formats are tested byte for byte.
public enum AlertFormats {
    /// `[lineup] Station A: station B's sensor is stuck`, `[lineup] Station A: resolved: ...`.
    public static func subject(_ notice: AlertNotice) -> String {
        let lead =
            switch notice.kind {
            case .alert: ""
            case .reminder: "still: "
            case .resolved: "resolved: "
            }
        return "[lineup] \(notice.station): \(lead)\(notice.title)"
    }

    /// The text of an e-mail or a chat message: what, when, since when.
    public static func body(_ notice: AlertNotice) -> String {
        var lines = [notice.message, ""]
        lines.append("Station: \(notice.station)")
        switch notice.kind {
        case .alert:
            lines.append("Time: \(AlertText.time(notice.at))")
        case .reminder:
            lines.append("Time: \(AlertText.time(notice.at)), so since \(AlertText.time(notice.since))")
        case .resolved:
            lines.append(
                "Time: \(AlertText.time(notice.at)) (it began at \(AlertText.time(notice.since)), "
                    + "\(AlertText.duration(notice.at.timeIntervalSince(notice.since))) before)")
        }
        lines.append("Alert: \(notice.rule.rawValue) (docs/alerts.md says what to do)")
        return lines.joined(separator: "\n")
    }

    /// The plain JSON object: one key per field, times in ISO 8601.
    public struct Plain: Codable, Hashable {
        public var station: String
        public var state: String
        public var rule: String
        public var key: String
        public var title: String
        public var message: String
        public var at: String
        public var since: String
    }

    /// The request body for `format`; `topic` is ntfy's (from the URL).
    public static func webhookBody(_ notice: AlertNotice, format: WebhookFormat, topic: String? = nil) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let text = subject(notice) + "\n" + body(notice)
        func encode(_ object: [String: AnyEncodable]) -> Data { (try? encoder.encode(object)) ?? Data() }
        switch format {
        case .json:
            let plain = Plain(
                station: notice.station, state: notice.kind.rawValue, rule: notice.rule.rawValue, key: notice.key,
                title: notice.title, message: notice.message, at: AlertText.iso(notice.at),
                since: AlertText.iso(notice.since))
            return (try? encoder.encode(plain)) ?? Data()
        case .ntfy:
            // Priorities: 4 (high) for trouble, 3 (default) for a reminder or a resolved.
            return encode([
                "topic": .string(topic ?? ""), "title": .string(subject(notice)), "message": .string(body(notice)),
                "priority": .int(notice.kind == .alert ? 4 : 3),
                "tags": .strings([notice.kind == .resolved ? "white_check_mark" : "warning"]),
            ])
        case .slack:
            return encode(["text": .string(text)])
        case .matrix:
            return encode(["msgtype": .string("m.text"), "body": .string(text)])
        }
    }

    /// A healthchecks-style ping's body on failure: what is wrong, one line each.
    public static func deadManBody(_ ping: DeadManPing, station: String) -> String {
        switch ping {
        case .success: "\(station): all well"
        case .failure(let text): text
        }
    }
}

/// The few JSON values the chat formats need.
public enum AnyEncodable: Encodable, Hashable {
    case string(String)
    case int(Int)
    case strings([String])

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .string(let s): try c.encode(s)
        case .int(let n): try c.encode(n)
        case .strings(let list): try c.encode(list)
        }
    }
}
