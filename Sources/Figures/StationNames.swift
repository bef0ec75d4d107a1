import Foundation
import StationConfig

/// A station as a person reads it (its board's name) with the number the log keeps for it
/// (from 1, in the board's order).
public struct NamedStation: Sendable, Hashable, Comparable, Codable {
    public var number: Int
    public var name: String

    public init(number: Int, name: String) {
        self.number = number
        self.name = name
    }

    /// `2:B`: one per station of a reading, even where two sessions gave one number two names
    /// (a board renamed, or two boards in the lab store). `stats --by station`'s `group_id`
    /// and the report's `data-station`.
    public var id: String { "\(number):\(name)" }

    public static func < (a: NamedStation, b: NamedStation) -> Bool { (a.number, a.name) < (b.number, b.name) }
}

/// A station's name where a person reads it (issue 32: letters in `layout`, status and the page
/// but numbers in `session show`, `trials`, `events`, `stats --by station` and the report). The
/// log keeps the board's number (from 1) everywhere; the name is the board's, as the session
/// logged it. Every reading that names a station (SessionLog's listings, `stats`' grouping, the
/// report's assembly, on a log or on the lab store) asks this one rule.
///
/// The rule: a session's `settings.stations` lists its stations' names in the board's order,
/// which is the order of their numbers, and `settings.unused_stations` the board's other
/// stations, which hold the numbers left free. A station the session named nothing (a session
/// logged before names were kept, a list that does not fit its stations) has the name a board
/// file gives a station it does not name: A for 1, B for 2, ... (`StationSpec.defaultName`),
/// which is also every shipped board's and the simulated board's. docs/session-log.md says so.
public struct StationNames: Sendable, Hashable {
    private var byNumber: [Int: String]

    /// `settings` is the session's settings JSON; `numbers` the session's stations (a trial's
    /// layout), in any order.
    public init(settings: String?, numbers: [Int]) {
        byNumber = [:]
        let object = settings.flatMap { $0.data(using: .utf8) }.flatMap {
            try? JSONSerialization.jsonObject(with: $0) as? [String: Any]
        }
        let sorted = Array(Set(numbers)).sorted()
        guard let listed = object?["stations"] as? String else { return }
        let names = listed.split(separator: ",").map(String.init)
        guard !names.isEmpty, names.count == sorted.count else { return }
        byNumber = Dictionary(uniqueKeysWithValues: zip(sorted, names))
        let unused = (object?["unused_stations"] as? String ?? "").split(separator: ",").map(String.init)
        let free = Array(1...(sorted.count + unused.count)).filter { byNumber[$0] == nil }
        if free.count == unused.count { for (n, name) in zip(free, unused) { byNumber[n] = name } }
    }

    /// A session's names when its stations' numbers are not at hand (a fault logged before its
    /// session's first trial, a session with none): a session that left no board station unused
    /// (`unused_stations` empty, or absent as in a simulated block) used them all, numbered 1 to
    /// N; one that left some unused chose which, so its list cannot be placed and the defaults
    /// stand in, as for any list that does not fit.
    public init(settings: String?) {
        let object = settings.flatMap { $0.data(using: .utf8) }.flatMap {
            try? JSONSerialization.jsonObject(with: $0) as? [String: Any]
        }
        let count = (object?["stations"] as? String)?.split(separator: ",").count ?? 0
        let unused = (object?["unused_stations"] as? String ?? "").split(separator: ",")
        self.init(settings: settings, numbers: unused.isEmpty && count > 0 ? Array(1...count) : [])
    }

    /// The station's name: the one its session logged, else the board's default.
    public func name(_ number: Int) -> String { byNumber[number] ?? StationSpec.defaultName(number: number) }

    /// The station with its name.
    public func station(_ number: Int) -> NamedStation { NamedStation(number: number, name: name(number)) }

    /// Whether the session logged a name for it (false: the default stands in).
    public func logged(_ number: Int) -> Bool { byNumber[number] != nil }

    /// `B (2)`: the station's name, as the trainer reads it, and the log's number beside it,
    /// where a sentence names one (a refused correction, the report's faults).
    public func said(_ number: Int) -> String { "\(name(number)) (\(number))" }
}
