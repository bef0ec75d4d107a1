import ArgumentParser
import Figures
import Foundation
import LabStore
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

/// Runs `body` with a reader of the lab store at `address`, closed after it whatever happens
/// (an unclosed connection traps in postgres-nio).
func withLab<T: Sendable>(_ address: String, _ body: (LabReader) throws -> T) throws -> T {
    let connection = try LabConnection.argument(address)
    let reader = try waitFor { try await LabReader.open(connection) }
    defer { _ = waitFor { await reader.close() } }
    return try body(reader)
}

/// The lab store at `address` as a source of readings (ReadingSource.swift), and how to close
/// it (an unclosed connection traps in postgres-nio): the one place lineupctl makes one.
func labReadingSource(_ address: String) throws -> (ReadingSource, close: () -> Void) {
    let connection = try LabConnection.argument(address)
    let reader = try waitFor { try await LabReader.open(connection) }
    return (
        ReadingSource(rows: reader, resolver: LabResolver(reader: reader), withheld: { _ in [] }, log: nil),
        { _ = waitFor { await reader.close() } }
    )
}

/// The filter words resolved on the lab store: `FilterWords`, the one definition a log's are too.
typealias LabResolver = FilterWords<LabReader>

extension FilterWords where Source == LabReader {
    init(reader: LabReader) { self.init(reader) }
}

/// One reading of the lab store with the options' filter, resolved on the store by the same
/// rules as on a log: `read` gets the reader and the filter.
func labRead<T: Sendable>(
    _ address: String, _ rows: RowFilterOptions, _ selection: SelectionOptions,
    _ read: @escaping @Sendable (LabReader, LogFilter) async throws -> T
) throws -> T {
    try withLab(address) { reader in
        let filter = try selection.filter(rows, LabResolver(reader: reader))
        return try waitFor { try await read(reader, filter) }
    }
}

/// `export --lab`: the store's rows through the log's writer, streamed to standard output.
func labExport(
    _ address: String, _ table: ExportTable, format: ExportFormat, _ rows: RowFilterOptions,
    _ selection: SelectionOptions
) throws {
    // The sink is made by the one task that writes it.
    _ = try labRead(address, rows, selection) { reader, filter in
        let sink = ByteSink()
        try await reader.export(table, format: format, filter: filter, to: sink)
        endIfReaderLeft(sink)
    }
}

/// Where an asynchronous read leaves its result for the synchronous command waiting on it.
private final class ResultBox<T: Sendable>: @unchecked Sendable {
    var result: Result<T, any Error>?
}

/// Runs the lab store's asynchronous client to its end from a synchronous command (lineupctl's
/// commands are synchronous; only the lab store's client is not).
func waitFor<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { box.result = .success(try await work()) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try box.result!.get()
}
