import Foundation

/// A station as the lab store last heard of it: its newest heartbeat's arrival, by the store's clock.
public struct SeenStation: Sendable, Hashable {
    public var id: String
    public var name: String
    /// Nil: its log was synced but it never sent a heartbeat.
    public var lastSeen: Date?

    public init(id: String, name: String, lastSeen: Date?) {
        self.id = id
        self.name = name
        self.lastSeen = lastSeen
    }
}

/// The lab server's rule: a station not heard from (no heartbeat) for longer than `notSeenAfter`.
/// A station that never sent one is not judged: nothing says it was ever meant to.
public enum LabWatch {
    /// `now` is the store's clock, which stamped the heartbeats.
    public static func observe(_ stations: [SeenStation], notSeenAfter: Double, at now: Date) -> [AlertCondition] {
        stations.compactMap { seen in
            guard let last = seen.lastSeen, now.timeIntervalSince(last) > notSeenAfter else { return nil }
            return AlertCondition(
                key: "not seen \(seen.id)", rule: .stationNotSeen, station: seen.name,
                title: "station \(seen.name) has not been heard from",
                message:
                    "The lab has not heard from station \(seen.name) for "
                    + "\(AlertText.duration(now.timeIntervalSince(last))) (its last heartbeat came at "
                    + "\(AlertText.time(last))). The station may be off, without network, or its lineup-sync "
                    + "stopped: look at it, then `systemctl status lineup-sync.timer` there.",
                resolution: "Station \(seen.name) is heard from again.")
        }
    }
}

/// The dead-man heartbeat: what to ping on each beat. Silence is the alarm, so a station whose
/// lineupd does not answer (or a lab server whose store does not) sends nothing at all; trouble
/// that lineupd reports is sent as a failure (healthchecks' `/fail`).
public enum DeadManPing: Sendable, Hashable {
    case success
    case failure(String)

    /// Nil: stay silent.
    public static func decide(watchedAnswers: Bool, firing: [AlertCondition], failOnAlerts: Bool) -> DeadManPing? {
        guard watchedAnswers else { return nil }
        let trouble = firing.filter { $0.rule != .lineupdDown }
        if failOnAlerts, !trouble.isEmpty {
            return .failure(trouble.map { "\($0.station): \($0.title)" }.joined(separator: "\n"))
        }
        return .success
    }
}
