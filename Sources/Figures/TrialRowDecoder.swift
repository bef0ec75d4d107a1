import StationConfig
import TrainingEngine

// A trial row's compact columns into the trial the figures count: one decoder for a station's
// log, the lab store and every reading, beneath all of them and above no storage.

/// A trial row's compact text (`trial.layout`, `trial.seen`) into the trial the figures
/// count, the same from SQLite's column bytes or PostgreSQL's; its buffers are reused from
/// row to row.
public struct TrialRowDecoder {
    /// Whether sample ids are materialised (only `--by sample` and the report need them).
    public let samples: Bool
    var slots: [StationInLayout] = []
    var seen: [StationSeen] = []

    public init(samples: Bool) { self.samples = samples }

    /// Station numbers: a board has at most `StationConfigLoader.maximumStations` stations,
    /// numbered from 1. Every range a number read from a log or the store is checked against
    /// (SessionLog's `LogLimits.stations`) is this one.
    public static let stations = 1...StationConfigLoader.maximumStations

    /// What is wrong with a trial whose layout `trial` refuses, in full (a log's refusal) and in
    /// short (the line naming a row the lab store leaves out).
    public static let layoutProblem =
        "a layout that is not stations \(stations.lowerBound) to \(stations.upperBound) as `station:kind:sample;…`"
    public static let layoutReason = "a layout that is not stations"

    /// `outcome` as the log spells it; an outcome lineup does not know counts as aborted, as
    /// `stats` always has. Trials of a log older than schema v3 have no `seen`: they are scored
    /// trials without station data, never counted by another rule.
    ///
    /// nil when the layout is not one a station writes (a station out of `stations`, a run
    /// of digits no station has): the caller names the trial (`layoutProblem`), before
    /// anything is sized by it.
    public mutating func trial(
        outcome: String, latencyNs: Int64?, layout: UnsafeRawBufferPointer?, seen seenText: UnsafeRawBufferPointer?
    ) -> ScoredTrial? {
        guard
            Self.parseLayout(
                layout?.baseAddress?.assumingMemoryBound(to: UInt8.self), layout?.count ?? 0, into: &slots,
                samples: samples)
        else { return nil }
        let hasSeen =
            seenText != nil
            && Self.parseSeen(
                seenText?.baseAddress?.assumingMemoryBound(to: UInt8.self), seenText?.count ?? 0, into: &seen)
            && seen.count == slots.count
        return ScoredTrial(
            outcome: TrialOutcome(rawValue: outcome) ?? .aborted, latencyNs: latencyNs,
            stations: slots.enumerated().map { index, slot in
                StationObservation(
                    station: slot.station, kind: slot.kind, sample: slot.sample.isEmpty ? nil : slot.sample,
                    seen: hasSeen ? seen[index] : nil)
            })
    }
}

extension TrialRowDecoder {
    /// Parses `1:1:2000000000:0:2500000000;0:0::0:0;...` (see `trial.seen`) into `seen`;
    /// false if the text is not in that form.
    static func parseSeen(_ base: UnsafePointer<UInt8>?, _ count: Int, into seen: inout [StationSeen]) -> Bool {
        seen.removeAll(keepingCapacity: true)
        guard let base else { return false }
        let bytes = UnsafeBufferPointer(start: base, count: count)
        var index = 0
        func number() -> Int64? {
            var value: Int64 = 0
            var digits = 0
            var negative = false
            if index < count, bytes[index] == UInt8(ascii: "-") {
                negative = true
                index += 1
            }
            while index < count, bytes[index] >= 48, bytes[index] <= 57 {
                value = value &* 10 &+ Int64(bytes[index] &- 48)
                digits += 1
                index += 1
            }
            return digits == 0 ? nil : (negative ? -value : value)
        }
        func expect(_ c: Character) -> Bool {
            guard index < count, bytes[index] == c.asciiValue! else { return false }
            index += 1
            return true
        }
        while index < count {
            guard let visited = number(), expect(":"), let indicated = number(), expect(":") else { return false }
            let first = number()
            guard expect(":"), let sniffs = number(), expect(":"), let dwell = number() else { return false }
            seen.append(
                StationSeen(
                    visited: visited != 0, indicated: indicated != 0, firstIndicationNs: first, sniffs: Int(sniffs),
                    dwellNs: dwell))
            if index < count && !expect(";") { return false }
        }
        return true
    }

    /// Parses `1:target:<uuid>;2:blank:;...` into `slots`, reusing its storage. The
    /// sample id is only materialised when a sample is named.
    /// False, with `slots` unusable, when a station is not a number in `stations` or
    /// the layout names more stations than a board has: the callers refuse the row.
    static func parseLayout(
        _ base: UnsafePointer<UInt8>?, _ count: Int, into slots: inout [StationInLayout], samples: Bool = true
    ) -> Bool {
        slots.removeAll(keepingCapacity: true)
        guard let base else { return true }
        let bytes = UnsafeBufferPointer(start: base, count: count)
        var index = 0
        while index < count {
            var station = 0
            var digits = 0
            while index < count, bytes[index] != UInt8(ascii: ":") {
                // Bounded before it can overflow: a row of digits is refused, never trapped on.
                guard bytes[index] >= 48, bytes[index] <= 57, station <= Self.stations.upperBound else {
                    return false
                }
                station = station * 10 + Int(bytes[index] &- 48)
                digits += 1
                index += 1
            }
            guard digits > 0, Self.stations.contains(station), slots.count < Self.stations.count else {
                return false
            }
            index += 1
            let kindStart = index
            while index < count, bytes[index] != UInt8(ascii: ":") { index += 1 }
            let kind: SampleKind
            switch kindStart < count ? bytes[kindStart] : 0 {
            case UInt8(ascii: "t"): kind = .target
            case UInt8(ascii: "c"): kind = .control
            case UInt8(ascii: "d"): kind = .distractor
            default: kind = .blank
            }
            index += 1
            let sampleStart = index
            while index < count, bytes[index] != UInt8(ascii: ";") { index += 1 }
            let sample =
                samples && sampleStart < index
                ? String(decoding: UnsafeBufferPointer(rebasing: bytes[sampleStart..<index]), as: UTF8.self) : ""
            slots.append(StationInLayout(station: station, kind: kind, sample: sample))
            index += 1
        }
        return true
    }
}

/// One station of a trial's compact layout.
struct StationInLayout {
    var station: Int
    var kind: SampleKind
    var sample: String
}
