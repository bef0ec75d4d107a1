import Foundation
import TrainingEngine

// The control socket's wire protocol, shared by lineupd (ControlServer) and lineupctl
// (ControlClient) so the two can never disagree. One JSON object per line, each way:
//
//   → {"v":1,"id":7,"request":"session-start","dog":"Rex","program":"study","step":"discriminate/2",...}
//   ← {"v":1,"id":7,"ok":true,"result":{"session":"3f2a9c1e"}}
//   ← {"v":1,"id":7,"ok":false,"error":{"code":"session-running","message":"..."}}
//
// After a successful `watch` reply the connection only streams: one event object per line,
// as lineupd writes them, until either side closes.

/// The protocol's fixed numbers.
public enum ControlProtocol {
    /// Bumped on any change an older peer would misread.
    public static let version = 1
    /// The longest line either side accepts, without its newline. A request is far shorter;
    /// the bound keeps a confused or hostile peer from growing the daemon's memory.
    public static let maxLineBytes = 64 * 1024
    public static let defaultSocketPath = "/run/lineup/control.sock"
    /// The group whose members may control the station.
    public static let defaultGroup = "lineup"
    /// Where lineupctl looks when `--socket` is not given.
    public static let socketEnvironmentVariable = "LINEUP_SOCKET"
}

/// `session-start`'s result.
public struct SessionStarted: Sendable, Codable, Hashable {
    public var session: String
    /// The mode the step fixes, and what the trainer does next, in words.
    public var mode: TrainingMode?
    public var message: String?
    /// One line the trainer should read (the log's disk is nearly full); nil when all is well.
    public var warning: String?
    /// True when the session's conditions were recorded: an older lineupd, which drops the
    /// request's conditions unread, leaves it out, and lineupctl says so.
    public var conditionsRecorded: Bool?
    public init(session: String, warning: String? = nil) {
        self.session = session
        self.warning = warning
    }
}

/// `layout`'s result.
public struct LayoutReply: Sendable, Codable, Hashable {
    public var view: ClientView
    public var stations: [LayoutEntry]
    public init(view: ClientView, stations: [LayoutEntry]) {
        self.view = view
        self.stations = stations
    }
}

/// The result of the requests that add to the log: the new row's id.
public struct Added: Sendable, Codable, Hashable {
    public var id: String
    public init(id: String) { self.id = id }
}

/// The result of requests that only say "done" (`abort`, `session-end`, `watch`, `simulate`).
public struct Done: Sendable, Codable, Hashable {
    public init() {}
}

// MARK: - Encoding and decoding lines

extension ControlProtocol {
    /// A request as one line, newline included: the call's fields beside `v`, `id` and
    /// `request`, as a script would type them.
    public static func encode<C: ControlCall>(_ call: C, id: Int) -> Data {
        var data = (try? makeEncoder().encode(RequestEnvelope(id: id, call: call))) ?? Data()
        data.append(0x0A)
        return data
    }

    /// A successful reply as one line, newline included.
    public static func encodeReply<R: Encodable>(id: Int?, result: R) -> Data {
        guard var data = try? makeEncoder().encode(ReplyEnvelope(id: id, result: result, error: nil)) else {
            // Only a result that cannot be encoded lands here; tell the client rather than hang it.
            return encodeReply(id: id, error: ControlRefusal(.failed, "lineupd could not encode its reply"))
        }
        data.append(0x0A)
        return data
    }

    /// A refusal or error as one line, newline included.
    public static func encodeReply(id: Int?, error: ControlRefusal) -> Data {
        var data =
            (try? makeEncoder().encode(ReplyEnvelope<Done>(id: id, result: nil, error: error)))
            ?? Data(#"{"v":1,"id":null,"ok":false,"error":{"code":"failed","message":"unencodable"}}"#.utf8)
        data.append(0x0A)
        return data
    }

    /// Reads one request line (without its newline). On failure the refusal carries the id
    /// when it could be read, so the client can match the error to its request.
    public static func decodeRequest(_ line: Data) -> Result<(id: Int?, call: any ControlCall), DecodeFailure> {
        let decoder = JSONDecoder()
        let id = (try? decoder.decode(IdProbe.self, from: line))?.id
        func fail(_ refusal: ControlRefusal) -> Result<(id: Int?, call: any ControlCall), DecodeFailure> {
            .failure(DecodeFailure(id: id, refusal: refusal))
        }
        // The version first: a later version may name its other fields differently.
        let version: Int
        do {
            version = try decoder.decode(VersionProbe.self, from: line).v
        } catch {
            return fail(badRequest(error))
        }
        guard version == Self.version else {
            return fail(
                ControlRefusal(
                    .badVersion,
                    "protocol version \(version) is not supported; this lineupd speaks version \(Self.version)"))
        }
        let head: Head
        do {
            head = try decoder.decode(Head.self, from: line)
        } catch {
            return fail(badRequest(error))
        }
        guard let type = ControlCalls.byName[head.request] else {
            let shown = head.request.count > 40 ? String(head.request.prefix(40)) + "…" : head.request
            return fail(
                ControlRefusal(
                    .unknownRequest, "unknown request '\(shown)'; known: \(ControlCalls.names.joined(separator: ", "))")
            )
        }
        do {
            return .success((id, try decodeCall(type, from: line, decoder: decoder)))
        } catch {
            return fail(badRequest(error))
        }
    }

    /// Why a line was not a request.
    public struct DecodeFailure: Error, Sendable, Hashable {
        public var id: Int?
        public var refusal: ControlRefusal
    }

    /// Names the field a decoding error is about, so the person typing the request can fix it.
    public static func badRequest(_ error: any Error) -> ControlRefusal {
        func field(_ path: [any CodingKey], _ key: (any CodingKey)? = nil) -> String {
            let parts = (path + (key.map { [$0] } ?? [])).map { $0.intValue.map(String.init) ?? $0.stringValue }
            return parts.joined(separator: ".")
        }
        guard let error = error as? DecodingError else {
            return ControlRefusal(.badRequest, "not a request: \(error)")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return ControlRefusal(.badRequest, "missing field '\(field(context.codingPath, key))'")
        case .typeMismatch(let type, let context):
            if context.codingPath.isEmpty {
                return ControlRefusal(.badRequest, "a request is one JSON object per line")
            }
            return ControlRefusal(.badRequest, "field '\(field(context.codingPath))' should be \(describe(type))")
        case .valueNotFound(let type, let context):
            return ControlRefusal(.badRequest, "field '\(field(context.codingPath))' should be \(describe(type))")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return ControlRefusal(.badRequest, "not JSON: a request is one JSON object per line")
            }
            return ControlRefusal(.badRequest, "field '\(field(context.codingPath))' has an invalid value")
        @unknown default:
            return ControlRefusal(.badRequest, "not a request")
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is UInt64.Type: "a whole number"
        case is [Any].Type, is [String].Type: "an array"
        case is Bool.Type: "true or false"
        default: "\(type)"
        }
    }

    static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return encoder
    }
}

// MARK: - Wire shapes

/// The reply's frame. `result` is present when ok, `error` when not.
struct ReplyEnvelope<R: Encodable>: Encodable {
    var id: Int?
    var result: R?
    var error: ControlRefusal?

    enum CodingKeys: String, CodingKey { case v, id, ok, result, error }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(ControlProtocol.version, forKey: .v)
        try c.encode(id, forKey: .id)
        try c.encode(error == nil, forKey: .ok)
        if let error {
            try c.encode(error, forKey: .error)
        } else {
            try c.encode(result, forKey: .result)
        }
    }
}

/// What a client first reads from a reply line, before it knows the result's type.
public struct ReplyHead: Decodable, Sendable {
    public var v: Int
    public var id: Int?
    public var ok: Bool
    public var error: ControlRefusal?
}

struct ReplyResult<R: Decodable>: Decodable {
    var result: R
}

private struct IdProbe: Decodable {
    var id: Int?
}

private struct VersionProbe: Decodable {
    var v: Int
}

private struct Head: Decodable {
    var id: Int?
    var request: String
}

/// A request's line: the call's own fields, then the frame's, in one object.
private struct RequestEnvelope<C: ControlCall>: Encodable {
    var id: Int
    var call: C

    enum CodingKeys: String, CodingKey { case v, id, request }

    func encode(to encoder: any Encoder) throws {
        try call.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(ControlProtocol.version, forKey: .v)
        try c.encode(id, forKey: .id)
        try c.encode(C.name, forKey: .request)
    }
}

/// Decodes one call of the type the table named, from the whole request line (the frame's
/// fields are ignored by the call's own decoding).
private func decodeCall<C: ControlCall>(_ type: C.Type, from line: Data, decoder: JSONDecoder) throws -> any ControlCall
{
    try decoder.decode(C.self, from: line)
}
