import ArgumentParser
import Figures
import Foundation
import LabLink
import ReadingRows
import SessionLog

/// `--lab`: the researcher's commands read the lab store instead of a log.
struct LabOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Read the lab store instead of a log: a connection file (mode 0600) or "
                + "postgres://user@host:port/database, with no password in it (it comes from ~/.pgpass).",
            valueName: "address"))
    var lab: String?

    /// A log and the store at once, refused in one line before anything is read.
    func refuseBoth(db: String?) throws {
        guard lab != nil, db != nil else { return }
        throw SessionLogError.invalidInput("give --db (a log) or --lab (the lab store), not both")
    }
}

/// Runs `body` with the lab store at `address`, reached through its client (`LabLink`: a child
/// process, so lineupctl links no PostgreSQL client or TLS), closed after it whatever happens.
func withLab<T>(_ address: String, _ body: (LabLink) throws -> T) throws -> T {
    let link = try LabLink.open(address)
    defer { link.close() }
    return try body(link)
}

/// The lab store at `address` as a source of readings (ReadingSource.swift), and how to close
/// it: the one place lineupctl makes one.
func labReadingSource(_ address: String) throws -> (ReadingSource, close: () -> Void) {
    let link = try LabLink.open(address)
    return (ReadingSource(rows: link, resolver: link, withheld: { _ in [] }, log: nil), { link.close() })
}

/// One call of the store's own with the options' filter, resolved on the store by the same
/// rules as on a log: `call` makes it from the filter.
func labRead<T: Decodable>(
    _ address: String, _ rows: RowFilterOptions, _ selection: SelectionOptions, as type: T.Type,
    _ call: (LabLinkFilter) -> LabCall
) throws -> T {
    try withLab(address) { link in
        let filter = try selection.filter(rows, link)
        return try link.call(call(LabLinkFilter(filter)), as: type)
    }
}

/// `export --lab`: the store's rows through the log's writer, streamed to standard output.
func labExport(
    _ address: String, _ table: ExportTable, format: ExportFormat, _ rows: RowFilterOptions,
    _ selection: SelectionOptions
) throws {
    try withLab(address) { link in
        let filter = try selection.filter(rows, link)
        // writeOut ends lineupctl quietly once the reader went away (`| head`); the client then
        // finds its socket closed and ends too.
        try link.stream(.export(table: table.rawValue, format: format.rawValue, filter: LabLinkFilter(filter))) {
            writeOut($0)
        }
    }
}
