import Foundation
import GRDB
import TrainingEngine

#if canImport(Glibc)
    import Glibc
#endif

/// When something happened, on both clocks: monotonic nanoseconds order events on one
/// station (and match the kernel's edge timestamps), wall-clock nanoseconds since 1970
/// (UTC) place them in the calendar and across stations.
public struct LogTime: Sendable, Hashable, Codable {
    public var monoNs: Int64
    public var wallNs: Int64

    public init(monoNs: Int64, wallNs: Int64) {
        self.monoNs = monoNs
        self.wallNs = wallNs
    }

    /// Both clocks read now.
    public static func now() -> LogTime {
        LogTime(monoNs: readClock(CLOCK_MONOTONIC), wallNs: readClock(CLOCK_REALTIME))
    }

    private static func readClock(_ clock: clockid_t) -> Int64 {
        var ts = timespec()
        clock_gettime(clock, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}

extension UUID {
    /// The form stored in the log: lower-case text, readable in `sqlite3` and exports.
    var logText: String { uuidString.lowercased() }

    /// A version 7 UUID (RFC 9562): `wallNs` in milliseconds in its first 48 bits, 74 random
    /// bits after. Ids made in time order sort in time order, so each commit adds them to the
    /// last page of an index on them rather than to a random page.
    public static func timeOrdered(wallNs: Int64) -> UUID {
        var generator = SystemRandomNumberGenerator()
        let millis = UInt64(clamping: max(0, wallNs / 1_000_000))
        let high: UInt64 = generator.next()
        let low: UInt64 = generator.next()
        func byte(_ value: UInt64, _ shift: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: value >> shift) }
        return UUID(
            uuid: (
                byte(millis, 40), byte(millis, 32), byte(millis, 24), byte(millis, 16), byte(millis, 8),
                byte(millis, 0),
                0x70 | (byte(high, 0) & 0x0F), byte(high, 8),  // version 7
                0x80 | (byte(low, 0) & 0x3F), byte(low, 8),  // variant 10
                byte(low, 16), byte(low, 24), byte(low, 32), byte(low, 40), byte(low, 48), byte(low, 56)
            ))
    }
}

/// A record that can be appended to the log in a transaction.
public protocol AppendableRecord: Sendable {
    func append(to db: Database) throws
}

// Each table is written through one GRDB record (RegistryRecords, SessionRecords, TrialRecords
// and EventRecords.swift), its coding keys spelled as the schema spells the columns (Schema.swift). Only `insert` is ever called, never `save` or an upsert:
// the log is append-only and its triggers refuse UPDATE and DELETE. Ids go in as lower-case
// UUID text (`logText`), not as GRDB's default 16-byte blob, as the log has always held them.
// The one exception is the hot event insert, kept hand-written (see `LoggedEvent.append`).
