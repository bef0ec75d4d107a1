import Figures
import Foundation

// The `detail` column of an event, as a type per event kind: the log feeder writes these types
// (`EventDetail.encode`) and every reader decodes them. Older logs (the feeder's string maps,
// before the types) wrote flags as `"true"` and numbers as strings; one decoder reads both
// spellings, so no reader parses a detail by hand. A click's detail is empty: its timing is in
// the click columns (`ClickTiming`).

/// A detail that cannot be read as its event kind's: which detail, and what is wrong in it.
public struct EventDetailError: Error, Equatable, CustomStringConvertible {
    public var detail: String
    public var reason: String

    public var description: String { "event detail \(detail) cannot be read: \(reason)" }
}

/// Reads an event's `detail` as one of the types below.
public enum EventDetail {
    public static func decode<Detail: Decodable>(_ type: Detail.Type, from detail: String) throws(EventDetailError)
        -> Detail
    {
        do {
            return try JSONDecoder().decode(type, from: Data(detail.utf8))
        } catch let DecodingError.dataCorrupted(context) {
            throw EventDetailError(detail: detail, reason: reason(context))
        } catch let DecodingError.typeMismatch(_, context) {
            throw EventDetailError(detail: detail, reason: reason(context))
        } catch let DecodingError.keyNotFound(key, _) {
            throw EventDetailError(detail: detail, reason: "it has no \"\(key.stringValue)\"")
        } catch let DecodingError.valueNotFound(_, context) {
            throw EventDetailError(detail: detail, reason: reason(context))
        } catch {
            throw EventDetailError(detail: detail, reason: "\(error)")
        }
    }

    /// A detail as the log keeps it: compact JSON, keys sorted, flags as booleans and numbers
    /// as numbers. The writer encodes the same types the readers decode.
    public static func encode(_ detail: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // These types hold only strings, integers, flags and finite seconds, which always encode.
        guard let data = try? encoder.encode(detail) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    static func reason(_ context: DecodingError.Context) -> String {
        guard let key = context.codingPath.last else { return "it is not a JSON object" }
        return "\"\(key.stringValue)\": \(context.debugDescription)"
    }
}

// A fault's detail is `FaultDetail` (Figures), where the report names faults by it on either
// store; the two readers of older spellings (`flag`, `number`) are there too.

/// An edge's: a raw edge the debouncer did not act on (`chatter`), or a button's edge; and
/// `known_ns`, when the station read it after deciding its timers past the edge's stamp (the
/// time it had decided up to: a descriptor that took the edge late), so the re-scorer decides
/// as the station could.
public struct EdgeDetail: Sendable, Hashable, Codable {
    public var chatter: Bool?
    public var button: String?
    public var knownNs: Int64?

    enum CodingKeys: String, CodingKey {
        case chatter, button
        case knownNs = "known_ns"
    }

    public init(chatter: Bool? = nil, button: String? = nil, knownNs: Int64? = nil) {
        self.chatter = chatter
        self.button = button
        self.knownNs = knownNs
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        chatter = try c.flag(.chatter)
        button = try c.decodeIfPresent(String.self, forKey: .button)
        knownNs = try c.number(.knownNs)
    }
}

/// A trainer's press, logged as a note: a click by hand or an error mark, with the sample at the
/// nose's station in that round.
public struct PressDetail: Sendable, Hashable, Codable {
    public enum Press: String, Sendable, Hashable {
        case manualClick = "manual_click"
        case errorMark = "error_mark"
    }

    public var press: Press
    public var sample: String?

    public init(press: Press, sample: String? = nil) {
        self.press = press
        self.sample = sample
    }

    enum CodingKeys: String, CodingKey {
        case manualClick = "manual_click"
        case errorMark = "error_mark"
        case sample
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if try c.flag(.manualClick) == true {
            press = .manualClick
        } else if try c.flag(.errorMark) == true {
            press = .errorMark
        } else {
            throw DecodingError.keyNotFound(
                CodingKeys.manualClick,
                .init(codingPath: c.codingPath, debugDescription: "neither manual_click nor error_mark"))
        }
        sample = try c.decodeIfPresent(String.self, forKey: .sample)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(true, forKey: press == .manualClick ? .manualClick : .errorMark)
        try c.encodeIfPresent(sample, forKey: .sample)
    }
}

/// A cue's: a trial's start or end, or a trainer-led repetition's start (its length) and end
/// (its clicks and errors, whether it was aborted).
public struct CueDetail: Sendable, Hashable, Codable {
    /// `trial-start`, `trial-end`, `exercise-start` or `exercise-end`.
    public var cue: String
    public var repetition: Int?
    public var seconds: Double?
    public var clicks: Int?
    public var errors: Int?
    public var aborted: Bool?

    public init(
        cue: String, repetition: Int? = nil, seconds: Double? = nil, clicks: Int? = nil, errors: Int? = nil,
        aborted: Bool? = nil
    ) {
        self.cue = cue
        self.repetition = repetition
        self.seconds = seconds
        self.clicks = clicks
        self.errors = errors
        self.aborted = aborted
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        cue = try c.decode(String.self, forKey: .cue)
        repetition = try c.number(.repetition)
        seconds = try c.number(.seconds)
        clicks = try c.number(.clicks)
        errors = try c.number(.errors)
        aborted = try c.flag(.aborted)
    }
}

/// An indication's: whether the held station was the target's.
public struct IndicationDetail: Sendable, Hashable, Codable {
    public var atTarget: Bool

    public init(atTarget: Bool) { self.atTarget = atTarget }

    enum CodingKeys: String, CodingKey { case atTarget = "at_target" }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let atTarget = try c.flag(.atTarget) else {
            throw DecodingError.keyNotFound(
                CodingKeys.atTarget, .init(codingPath: c.codingPath, debugDescription: "no at_target"))
        }
        self.atTarget = atTarget
    }
}

/// A settled note's: the level the debouncer settled at after chatter, at a station (`button`
/// empty) or at a button; and `known_ns`, when the station settled it only after deciding its
/// timers past the window's end (the time it had decided up to: chatter that came late), so the
/// re-scorer decides as the station could.
public struct SettledDetail: Sendable, Hashable, Codable {
    public var settled: Bool
    public var button: String?
    public var knownNs: Int64?

    enum CodingKeys: String, CodingKey {
        case settled, button
        case knownNs = "known_ns"
    }

    public init(settled: Bool = true, button: String? = nil, knownNs: Int64? = nil) {
        self.settled = settled
        self.button = button
        self.knownNs = knownNs
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let settled = try c.flag(.settled) else {
            throw DecodingError.keyNotFound(
                CodingKeys.settled, .init(codingPath: c.codingPath, debugDescription: "no settled"))
        }
        self.settled = settled
        // The feeder wrote an empty button for a station's edge.
        let button = try c.decodeIfPresent(String.self, forKey: .button)
        self.button = button?.isEmpty == true ? nil : button
        knownNs = try c.number(.knownNs)
    }
}
