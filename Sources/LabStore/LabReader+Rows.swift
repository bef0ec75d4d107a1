import Foundation
import PostgresNIO
import ReadingRows

/// The lab store as a `RowSource` for the readings (Sources/Readings): the one place LabStore
/// holds what a reading needs of PostgreSQL. A read is one REPEATABLE READ transaction, so its
/// queries see one snapshot; rows stream as they arrive (`LabStore.stream`, its deadline).
///
/// The readings are synchronous, as lineupctl's commands are; the store's client is not. Each
/// statement is run to its end here, its rows handed to the reading on the client's task while
/// the reading's thread waits (`blocking`): the only bridge between the two.
extension LabReader: RowSource {
    public func readRows<T>(_ body: (inout LabRowScanner) throws -> T) throws -> T {
        let store = store
        try blocking { _ = try await store.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") }
        var scanner = LabRowScanner(reader: self)
        do {
            let result = try body(&scanner)
            try blocking { _ = try await store.execute("COMMIT") }
            return result
        } catch {
            _ = try? blocking { _ = try await store.execute("ROLLBACK") }
            throw error
        }
    }
}

/// The queries of one read of the store.
public struct LabRowScanner: RowScanner {
    let reader: LabReader

    public var dialect: SQLDialect { .postgres }

    public var place: String { "the lab store \(reader.store.display)" }

    public mutating func scan(_ query: ReadingSQL, _ binds: [SQLValue], _ body: (LabRow) throws -> Void) throws {
        var bindings = PostgresBindings(capacity: binds.count)
        for value in binds {
            switch value {
            case .text(let text): bindings.append(text)
            case .integer(let integer): bindings.append(integer)
            }
        }
        let statement = PostgresQuery(unsafeSQL: query.text(in: .postgres), binds: bindings)
        let store = reader.store
        try withoutActuallyEscaping(body) { body in
            let handOver = HandOver(body)
            // The client's task may outlive the wait by a moment: it must not hold `body` then.
            defer { handOver.body = nil }
            try blocking {
                var row = LabRow()
                try await store.stream(statement) { cells in
                    row.cells.removeAll(keepingCapacity: true)
                    for cell in cells { row.cells.append(cell) }
                    try handOver.body?(row)
                }
            }
        }
    }

    /// A row a store migrated before v9 may hold: left out and named once (LabReader+Damage.swift).
    public func badRow(_ row: BadRow) throws {
        reader.damage.leaveOut(store: reader.store.display, row.row, because: row.reason)
    }

    /// Every table: `LabReader.open` refused a store lacking a migration this build reads through.
    public func hasTable(_ name: String) throws -> Bool { true }

    /// None: lineup-sync holds a running double-blind session's rows back until it ends
    /// (`Visibility.withheld(from: .labReader)`).
    public func refuseWithheld(session id: String) throws {}
}

/// One row of the store's answer, its cells by column.
public struct LabRow: ReadingRow {
    var cells: [PostgresCell] = []

    public func text(_ column: Int) throws -> String? { try cells[column].decode(String?.self) }

    public func integer(_ column: Int) throws -> Int64? { try cells[column].decode(Int64?.self) }

    public func double(_ column: Int) throws -> Double? { try cells[column].decode(Double?.self) }

    public func withBytes<T>(_ column: Int, _ body: (UnsafeRawBufferPointer?) throws -> T) throws -> T {
        guard let buffer = cells[column].bytes else { return try body(nil) }
        return try buffer.withUnsafeReadableBytes { bytes in
            // An empty text is not NULL: the decoder tells them apart by the address.
            if bytes.baseAddress != nil { return try body(bytes) }
            return try withUnsafeBytes(of: 0) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<0])) }
        }
    }
}

/// A reading's row handler, called on the client's task while the reading's thread waits in
/// `blocking` for that task's end: never at once from two threads.
private final class HandOver: @unchecked Sendable {
    var body: ((LabRow) throws -> Void)?
    init(_ body: @escaping (LabRow) throws -> Void) { self.body = body }
}

/// Where the client's task leaves its result for the thread waiting on it.
private final class Outcome<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}

/// Runs `work` on the store's client to its end and waits for it on this thread (never a thread
/// of the cooperative pool's own: lineupctl's and lineup-bench's commands run on the main one).
private func blocking<T>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Outcome<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { outcome.result = .success(try await work()) } catch { outcome.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try outcome.result!.get()
}
