import Foundation

// A fault event's `detail` (the log feeder writes it, `EventDetail.encode` in SessionLog): here,
// beneath both stores, because the report names each fault by it (`FaultDetail.name`) on a
// station's log and on the lab store alike.

/// A fault's: a sensor's (`stuck`, `chatter`, ...), a click that could not sound, an input that
/// cannot be read (`read`: failed or abandoned, with errno and why), or the writer's own
/// (`fault`, e.g. `log-events-dropped`).
public struct FaultDetail: Sendable, Hashable, Codable {
    public var sensor: String?
    public var clickFailed: String?
    public var read: String?
    public var errno: Int32?
    public var why: String?
    public var fault: String?
    public var droppedEvents: Int?
    /// The names of the fields the detail carries, sorted: what a fault of a shape this reader
    /// does not know is named by.
    public var fields: [String] = []

    enum CodingKeys: String, CodingKey {
        case sensor, read, errno, why, fault
        case clickFailed = "click_failed"
        case droppedEvents = "dropped_events"
    }

    public init(
        sensor: String? = nil, clickFailed: String? = nil, read: String? = nil, errno: Int32? = nil,
        why: String? = nil, fault: String? = nil, droppedEvents: Int? = nil
    ) {
        self.sensor = sensor
        self.clickFailed = clickFailed
        self.read = read
        self.errno = errno
        self.why = why
        self.fault = fault
        self.droppedEvents = droppedEvents
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        sensor = try c.decodeIfPresent(String.self, forKey: .sensor)
        clickFailed = try c.decodeIfPresent(String.self, forKey: .clickFailed)
        read = try c.decodeIfPresent(String.self, forKey: .read)
        errno = try c.number(.errno)
        why = try c.decodeIfPresent(String.self, forKey: .why)
        fault = try c.decodeIfPresent(String.self, forKey: .fault)
        droppedEvents = try c.number(.droppedEvents)
        fields = try decoder.container(keyedBy: DetailKey.self).allKeys.map(\.stringValue).sorted()
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(sensor, forKey: .sensor)
        try c.encodeIfPresent(clickFailed, forKey: .clickFailed)
        try c.encodeIfPresent(read, forKey: .read)
        try c.encodeIfPresent(errno, forKey: .errno)
        try c.encodeIfPresent(why, forKey: .why)
        try c.encodeIfPresent(fault, forKey: .fault)
        try c.encodeIfPresent(droppedEvents, forKey: .droppedEvents)
    }
}

/// Any key, to list the fields a detail carries.
struct DetailKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

// Older logs (the feeder's string maps, before the typed details) wrote flags as `"true"` and
// numbers as strings: every detail type reads both spellings by these two (SessionLog's
// EventDetail.swift for the other kinds).
extension KeyedDecodingContainer {
    /// A flag written `true` or `"true"` (and `false` or `"false"`).
    public func flag(_ key: Key) throws -> Bool? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let flag = try? decode(Bool.self, forKey: key) { return flag }
        switch try decode(String.self, forKey: key) {
        case "true": return true
        case "false": return false
        default:
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "not true or false")
        }
    }

    /// A number written as a number or as a string (`3` or `"3"`).
    public func number<Number: Decodable & LosslessStringConvertible>(_ key: Key) throws -> Number? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let number = try? decode(Number.self, forKey: key) { return number }
        let text = try decode(String.self, forKey: key)
        guard let number = Number(text) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "\"\(text)\" is not a number")
        }
        return number
    }
}

extension FaultDetail {
    /// What a fault event's detail says failed, as the report counts faults by it; a sensor's
    /// fault names its station as the session's board does, its number beside it (`sensor stuck
    /// at station East (2)`, `station` from `StationNames.said`), so a flagged station stands
    /// out. A detail that cannot be read is counted as a plain `fault` rather than failing the
    /// report.
    public static func name(_ detail: String?, station: String? = nil) -> String {
        guard let detail, let fault = try? JSONDecoder().decode(FaultDetail.self, from: Data(detail.utf8)) else {
            return "fault"
        }
        if let name = fault.fault { return name }
        if let sensor = fault.sensor {
            return "sensor \(sensor)" + (station.map { " at station \($0)" } ?? "")
        }
        if fault.clickFailed != nil { return "click-failed" }
        if fault.read != nil { return "unreadable" }  // an input that could not be read, not its errno
        return fault.fields.first ?? "fault"
    }
}
