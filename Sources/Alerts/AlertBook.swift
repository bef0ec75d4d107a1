import Foundation

// What is wrong at a station, and what to send about it. Pure: the time is always handed in
// (lineup-alerts passes its own clock; the tests pass virtual time), so every rule and every
// "sent once, repeated at most every N, resolved once" is decided here and tested without waiting.

/// The rules, in the words docs/alerts.md uses for them.
public enum AlertRule: String, Sendable, Codable, Hashable, CaseIterable {
    case sensor
    case sessionStalled = "session-stalled"
    case lineupdDown = "lineupd-down"
    case lineupdRestarted = "lineupd-restarted"
    case log
    case disk
    case sound
    case sync
    case stationNotSeen = "station-not-seen"
}

/// One thing wrong now, as a rule sees it.
public struct AlertCondition: Sendable, Hashable {
    /// What makes two observations the same alert: `sensor B`, `lineupd down`.
    public var key: String
    public var rule: AlertRule
    /// The station's name, as the messages give it.
    public var station: String
    /// A few words for a subject line: `station B's sensor is stuck`.
    public var title: String
    /// What is wrong and what to do, in the trainer's words.
    public var message: String
    /// What the "resolved" says.
    public var resolution: String
    /// How long it must hold before it is sent (seconds); a shorter trouble is never sent.
    public var delay: Double
    /// An event rather than a state (lineupd restarted): sent once, never repeated, no "resolved".
    public var isEvent: Bool

    public init(
        key: String, rule: AlertRule, station: String, title: String, message: String, resolution: String,
        delay: Double = 0, isEvent: Bool = false
    ) {
        self.key = key
        self.rule = rule
        self.station = station
        self.title = title
        self.message = message
        self.resolution = resolution
        self.delay = delay
        self.isEvent = isEvent
    }
}

/// One message to send.
public struct AlertNotice: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable {
        /// The first time.
        case alert
        /// Still so, after the configured interval.
        case reminder
        /// Over.
        case resolved
    }

    public var kind: Kind
    public var rule: AlertRule
    public var key: String
    public var station: String
    public var title: String
    public var message: String
    /// When this notice is sent, and when the trouble began (first seen).
    public var at: Date
    public var since: Date

    public init(
        kind: Kind, rule: AlertRule, key: String, station: String, title: String, message: String, at: Date,
        since: Date
    ) {
        self.kind = kind
        self.rule = rule
        self.key = key
        self.station = station
        self.title = title
        self.message = message
        self.at = at
        self.since = since
    }
}

/// Which alerts were sent and still hold: each condition is sent once when it has held for its
/// delay, again at most every `repeatEvery` while it holds, and followed by one "resolved".
public struct AlertBook: Sendable {
    /// Nil: never repeated.
    public var repeatEvery: Double?

    struct Held: Sendable {
        var condition: AlertCondition
        var since: Date
        var lastSent: Date?
    }

    var held: [String: Held] = [:]

    public init(repeatEvery: Double?) {
        self.repeatEvery = repeatEvery
    }

    /// The conditions sent and still holding (events excepted), by key.
    public var firing: [AlertCondition] {
        held.values.filter { $0.lastSent != nil && !$0.condition.isEvent }.map(\.condition).sorted { $0.key < $1.key }
    }

    /// Takes what the rules see now; returns what to send, the "resolved" first, then in key order.
    public mutating func update(_ conditions: [AlertCondition], at now: Date) -> [AlertNotice] {
        var notices: [AlertNotice] = []
        let present = Dictionary(conditions.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        for key in held.keys.sorted() where present[key] == nil {
            let gone = held.removeValue(forKey: key)!
            guard gone.lastSent != nil, !gone.condition.isEvent else { continue }
            let c = gone.condition
            notices.append(
                AlertNotice(
                    kind: .resolved, rule: c.rule, key: c.key, station: c.station, title: c.title,
                    message: c.resolution, at: now, since: gone.since))
        }
        for key in present.keys.sorted() {
            let condition = present[key]!
            var entry = held[key] ?? Held(condition: condition, since: now, lastSent: nil)
            entry.condition = condition
            if let last = entry.lastSent {
                if !condition.isEvent, let every = repeatEvery, now.timeIntervalSince(last) >= every {
                    entry.lastSent = now
                    notices.append(notice(.reminder, entry, at: now))
                }
            } else if now.timeIntervalSince(entry.since) >= condition.delay {
                entry.lastSent = now
                notices.append(notice(.alert, entry, at: now))
            }
            held[key] = entry
        }
        return notices
    }

    private func notice(_ kind: AlertNotice.Kind, _ entry: Held, at now: Date) -> AlertNotice {
        let c = entry.condition
        return AlertNotice(
            kind: kind, rule: c.rule, key: c.key, station: c.station, title: c.title, message: c.message, at: now,
            since: entry.since)
    }
}
