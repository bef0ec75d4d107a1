import Foundation

/// A station's name where a person reads it (issue 32: letters in `layout`, status and the page
/// but numbers in `session show`, `trials`, `events`). The log keeps the board's number (from
/// 1) everywhere; the name is the board's, as the session logged it.
///
/// The one rule: a session's `settings.stations` lists its stations' names in the board's order,
/// which is the order of their numbers; a simulated block (`settings.simulated`) ran on the
/// simulated board, whose stations are A to E. A session with neither (logged before names
/// were kept) shows its numbers.
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
        if let listed = object?["stations"] as? String {
            let names = listed.split(separator: ",").map(String.init)
            if !names.isEmpty, names.count == sorted.count {
                byNumber = Dictionary(uniqueKeysWithValues: zip(sorted, names))
                // The board's other stations (`settings.unused_stations`, in its order) hold the
                // numbers the session's stations leave free.
                let unused = (object?["unused_stations"] as? String ?? "").split(separator: ",").map(String.init)
                let free = Array(1...(sorted.count + unused.count)).filter { byNumber[$0] == nil }
                if free.count == unused.count { for (n, name) in zip(free, unused) { byNumber[n] = name } }
                return
            }
        }
        if object?["simulated"] as? String == "true" {
            for n in sorted where (1...26).contains(n) {
                byNumber[n] = String(UnicodeScalar(UInt8(64 + n)))
            }
        }
    }

    /// The station's name, or nil when the session kept none.
    public func name(_ number: Int) -> String? { byNumber[number] }

    /// The name, or the number when the session kept no name.
    public func word(_ number: Int) -> String { byNumber[number] ?? "\(number)" }
}
