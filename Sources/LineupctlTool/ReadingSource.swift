import Foundation
import ReadingRows
import Readings
import SessionLog

/// What the researcher's readings run on, chosen once from `--db` or `--lab`: a station's log
/// (or a merged one) or the lab store, behind the one row interface (`RowSource`). A ported
/// reading (Sources/Readings) runs on `rows` with no branch on which it is.
struct ReadingSource {
    /// Where the readings' queries go.
    let rows: any RowSource
    /// The filter words (`--dog Rex`, `--step phase-3/1`) resolved on the same source.
    let resolver: any FilterResolving
    /// The running double-blind sessions a reading with this filter leaves out, said after it
    /// (`LiveDoubleBlind`, on a log).
    let withheld: (LogFilter) throws -> [WithheldSession]
    /// The log itself, for the readings not yet in Sources/Readings (docs/architecture.md,
    /// "Readings"); nil on the lab store, whose own readers still serve those.
    let log: LogReader?
}

/// Runs `body` on the source `--db` or `--lab` names, closed after it whatever happens. The
/// lab store's source comes from one function (`labReadingSource`, LabReading.swift): its rows
/// come from the store's client in a child process (LabLink), which lineupctl does not link.
/// `checking`: how much of a log is checked before it is read (`LogCheck`).
func withReadingSource<T>(
    _ log: LogOptions, _ lab: LabOptions, checking check: LogCheck = .allButEvents, _ body: (ReadingSource) throws -> T
) throws -> T {
    try lab.refuseBoth(db: log.db)
    if let address = lab.lab {
        let (source, close) = try labReadingSource(address)
        defer { close() }
        return try body(source)
    }
    let reader = try log.reader(checking: check)
    return try body(
        ReadingSource(rows: reader, resolver: reader, withheld: { try reader.withheldSessions($0) }, log: reader))
}
