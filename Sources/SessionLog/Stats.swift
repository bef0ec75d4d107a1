import Figures
import GRDB
import GRDBSQLite
import TrainingEngine

/// A trial row's compact text (`trial.layout`, `trial.seen`) into the trial the figures
/// count, the same from SQLite's column bytes or PostgreSQL's; its buffers are reused from
/// row to row.
public struct TrialRowDecoder {
    /// Whether sample ids are materialised (only `--by sample` and the report need them).
    public let samples: Bool
    var slots: [StationInLayout] = []
    var seen: [StationSeen] = []

    public init(samples: Bool) { self.samples = samples }

    /// `outcome` as the log spells it; an outcome lineup does not know counts as aborted, as
    /// `stats` always has. Trials of a log older than schema v3 have no `seen`: they are scored
    /// trials without station data, never counted by another rule.
    ///
    /// nil when the layout is not one a station writes (a station out of `LogLimits`, a run
    /// of digits no station has): the caller names the trial, before anything is sized by it.
    public mutating func trial(
        outcome: String, latencyNs: Int64?, layout: UnsafeRawBufferPointer?, seen seenText: UnsafeRawBufferPointer?
    ) -> ScoredTrial? {
        guard
            LogReader.parseLayout(
                layout?.baseAddress?.assumingMemoryBound(to: UInt8.self), layout?.count ?? 0, into: &slots,
                samples: samples)
        else { return nil }
        let hasSeen =
            seenText != nil
            && LogReader.parseSeen(
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

extension LogReader {
    /// Every trial (after corrections) matching `filter`, as the figures count it, oldest
    /// session first. Straight from SQLite's column accessors: GRDB rows per trial would cost
    /// more than the query itself. Sample ids are only read when `samples` is set, each
    /// session's settings (once a session) when `settings` is.
    static func scanTrials(
        _ db: Database, _ filter: LogFilter, samples: Bool, settings: Bool = false,
        _ body: (ScoredTrial, TrialContext) throws -> Void
    ) throws {
        let statement = try db.makeStatement(
            sql: """
                SELECT t.outcome, t.latency_ns, t.layout, t.seen, s.dog_id, d.name, s.id, s.wall_ns, t.id, s.settings
                FROM trial_current t JOIN session s ON s.id = t.session_id JOIN dog d ON d.id = s.dog_id
                WHERE (?1 IS NULL OR s.dog_id = ?1) AND (?2 IS NULL OR s.id = ?2)
                    AND (?3 IS NULL OR t.wall_ns >= ?3) AND (?4 IS NULL OR t.wall_ns < ?4)
                    AND \(filter.sessionCondition(from: 5))
                """)
        try statement.setArguments(
            StatementArguments(
                [
                    filter.dogId.databaseValue, filter.sessionId.databaseValue, filter.since.databaseValue,
                    filter.until.databaseValue,
                ] + filter.sessionArguments))
        let sqlite = statement.sqliteStatement
        func text(_ column: Int32) -> String {
            guard let bytes = sqlite3_column_text(sqlite, column) else { return "" }
            return String(
                decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(sqlite, column))),
                as: UTF8.self)
        }
        var decoder = TrialRowDecoder(samples: samples)
        var settingsOf: [String: String] = [:]
        func bytes(_ column: Int32) -> UnsafeRawBufferPointer? {
            guard sqlite3_column_type(sqlite, column) != SQLITE_NULL else { return nil }
            // The text pointer first: SQLite counts bytes of the value as last converted.
            let base = sqlite3_column_text(sqlite, column)
            return UnsafeRawBufferPointer(start: base, count: Int(sqlite3_column_bytes(sqlite, column)))
        }
        while true {
            let rc = sqlite3_step(sqlite)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else {
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: rc), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
            }
            let latency: Int64? = sqlite3_column_type(sqlite, 1) == SQLITE_NULL ? nil : sqlite3_column_int64(sqlite, 1)
            guard let trial = decoder.trial(outcome: text(0), latencyNs: latency, layout: bytes(2), seen: bytes(3))
            else { throw LogLimits.badLayout(trial: text(8)) }
            let session = text(6)
            var sessionSettings: String? = nil
            if settings {
                if settingsOf[session] == nil { settingsOf[session] = text(9) }
                sessionSettings = settingsOf[session]
            }
            try body(
                trial,
                TrialContext(
                    dogId: text(4), dog: text(5), sessionId: session, sessionWallNs: sqlite3_column_int64(sqlite, 7),
                    sessionSettings: sessionSettings))
        }
    }

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
    /// False, with `slots` unusable, when a station is not a number in `LogLimits.stations` or
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
                guard bytes[index] >= 48, bytes[index] <= 57, station <= LogLimits.stations.upperBound else {
                    return false
                }
                station = station * 10 + Int(bytes[index] &- 48)
                digits += 1
                index += 1
            }
            guard digits > 0, LogLimits.stations.contains(station), slots.count < LogLimits.stations.count else {
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

/// A prevalence as the person typed it, checked: one message naming the flag, never a crash.
public func checkPrevalence(_ value: Double, flag: String = "--prevalence") throws -> Double {
    guard value.isFinite, value > 0, value < 1 else {
        throw SessionLogError.invalidInput(
            "\(flag) \(value): a prevalence is a share strictly between 0 and 1 (0.01 is 1 in 100)")
    }
    return value
}
