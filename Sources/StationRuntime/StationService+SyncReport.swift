import Figures
import Foundation
import StationControl

// `sync-report`: lineup-sync, the station's own process that sends the log to the lab store,
// says after each run how far the store is behind. lineupd keeps only the latest, in memory:
// it has no network, and nothing of this touches the hot thread or the log.
extension StationService {
    public func reportSync(_ entry: SyncReportEntry) throws(ControlRefusal) {
        let now = Self.isoTime(Int64(Date().timeIntervalSince1970 * 1e9))
        labSync.withLock { latest in
            let ended = Self.isoTime(entry.endedWallNs)
            latest = LabSyncStatus(
                reporting: true, behindRows: entry.behindRows,
                oldestUnsynced: entry.oldestUnsyncedWallNs.map(Self.isoTime), reportedAt: now,
                // A failed run leaves the last success as it was.
                lastSuccess: entry.complete && entry.error == nil ? ended : latest.lastSuccess,
                lastError: entry.error)
        }
    }

    /// Wall nanoseconds as ISO 8601 in UTC, to the second: `ISO8601DateFormatter`'s default text,
    /// written by hand as `status`'s other times are (`ISOTimeFormatter.internetTime`): the
    /// formatter kept ICU's locale and calendar data resident (and locked) in lineupd from the
    /// first report on. `SyncReportTimeTests` compares the two.
    static func isoTime(_ wallNs: Int64) -> String {
        ISOTimeFormatter.internetTime(
            Date(timeIntervalSince1970: Double(wallNs) / 1e9), fractionalSeconds: false)
    }
}
