import ArgumentParser
import Figures
import Foundation
import LabLink
import LabStore
import ReadingRows
import SessionLog

#if canImport(Glibc)
    import Glibc
#endif

/// `lineup-sync lab-link`: the lab store's client for lineupctl (`--lab`, `lineupctl lab`), which
/// links no PostgreSQL client, SwiftNIO or TLS and starts this instead, its standard input and
/// output one socket (LabLink). Not for people: lineupctl starts it and reads what it says.
struct LabLinkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lab-link",
        abstract: "The lab store's client for lineupctl --lab (started by lineupctl, over a socket).",
        shouldDisplay: false)

    @Option(help: "The lab store: a connection file or a postgres:// address, as lineupctl --lab takes it.")
    var lab: String

    @Flag(help: "Open the store for the registry's commands (lineupctl lab), without checking its migrations.")
    var registry = false

    func run() async throws {
        // The link's own thread: the store's client bridges onto it by waiting, never on a thread
        // of the cooperative pool (LabReader+Rows.swift, `blocking`).
        let (lab, registry) = (lab, registry)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                LabLinkServer(channel: LabLinkChannel(input: 0, output: 1)).serve(lab, registry: registry)
                done.resume()
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }
}

/// Serves one lineupctl until it closes the socket: its reads, queries and calls, in order.
struct LabLinkServer: @unchecked Sendable {
    let channel: LabLinkChannel

    /// The store, opened as a researcher's reader or for the registry.
    enum Opened: Sendable {
        case reader(LabReader)
        case registry(LabStore)
        var store: LabStore {
            switch self {
            case .reader(let reader): reader.store
            case .registry(let store): store
            }
        }
    }

    /// lineupctl ended the read with a rollback: not a failure of the store's.
    struct RolledBack: Error {}

    func serve(_ address: String, registry: Bool) {
        signal(SIGPIPE, SIG_IGN)
        let connection: LabConnection
        do {
            connection = try LabConnection.argument(address)
        } catch {
            // A connection file that cannot be used is bad input (status 2), as lineup-sync's own.
            try? refuse(error, status: 2)
            return
        }
        let opened: Opened
        do {
            opened = try waitFor { () async throws -> Opened in
                registry
                    ? .registry(try await LabStore.connect(connection)) : .reader(try await LabReader.open(connection))
            }
        } catch {
            try? refuse(error)
            return
        }
        defer { _ = try? waitFor { await opened.store.close() } }
        do {
            try answer([labLinkVersion])
            while let (kind, payload) = try channel.receive() {
                switch kind {
                case .begin:
                    guard case .reader(let reader) = opened else {
                        throw LabLinkError.malformed("read of the registry")
                    }
                    try read(reader)
                case .call:
                    do {
                        try call(try decode(LabCall.self, payload), opened)
                    } catch let error as LabLinkError {
                        throw error
                    } catch {
                        try refuse(error)
                    }
                default: throw LabLinkError.malformed("\(kind) frame")
                }
            }
        } catch {
            // lineupctl went away or sent what it should not: nobody is left to tell.
        }
    }

    /// One read, in the store's one transaction, until lineupctl commits or rolls it back.
    func read(_ reader: LabReader) throws {
        do {
            try reader.readRows { (scanner: inout LabRowScanner) throws -> Void in
                try answer([])
                while true {
                    guard let (kind, payload) = try channel.receive() else { throw LabLinkError.client("gone") }
                    switch kind {
                    case .scan:
                        let scan = try decode(LabLinkScan.self, payload)
                        do {
                            try scanner.scan(ReadingSQL(stringLiteral: scan.sql), scan.values) { row in
                                try row.linked().bytes.withUnsafeBytes { try channel.send(.row, $0) }
                            }
                        } catch let error as LabLinkError {
                            throw error
                        } catch {
                            try refuse(error)
                            continue
                        }
                        try answer([])
                    case .hasTable:
                        try answer([try scanner.hasTable(String(decoding: payload, as: UTF8.self)) ? 1 : 0])
                    case .badRow:
                        let words = try decode([String].self, payload)
                        guard words.count == 4 else { throw LabLinkError.malformed("bad row") }
                        try scanner.badRow(BadRow(table: words[0], id: words[1], problem: words[2], reason: words[3]))
                        try answer([])
                    case .commit: return
                    case .rollback: throw RolledBack()
                    default: throw LabLinkError.malformed("\(kind) frame in a read")
                    }
                }
            }
            try answer([])
        } catch is RolledBack {
            try answer([])
        } catch let error as LabLinkError {
            throw error
        } catch {
            try refuse(error)
        }
    }

    /// A call of the store's own: its result as JSON, or its output streamed.
    func call(_ call: LabCall, _ opened: Opened) throws {
        let registry = LabRegistry(store: opened.store)
        // The readings' calls need the reader (the registry's open checks no migrations).
        func openedReader() throws -> LabReader {
            guard case .reader(let reader) = opened else { throw LabLinkError.malformed("reading of the registry") }
            return reader
        }
        switch call {
        case .place:
            try answer(json: "the lab store \(opened.store.display)")
        case .export(let table, let format, let wire):
            guard let table = ExportTable(rawValue: table), let format = ExportFormat(rawValue: format) else {
                throw LabLinkError.malformed("export")
            }
            let (filter, reader, channel) = (try wire.filter, try openedReader(), channel)
            _ = try waitFor {
                // The sink is made by the one task that writes it; lineupctl gone stops it quietly.
                let sink = ByteSink { bytes in (try? channel.send(.output, bytes)) != nil }
                try await reader.export(table, format: format, filter: filter, to: sink)
            }
            try answer([])
        case .dogs: try answer(json: try waitFor { try await registry.dogs() })
        case .samples: try answer(json: try waitFor { try await registry.samples() })
        case .mergeDogs(let keep, let merged, let why):
            try answer(json: try waitFor { try await registry.mergeDogs(keep: keep, merged: merged, why: why) })
        case .undoMerge(let merge, let why):
            try answer(json: try waitFor { try await registry.undoMerge(merge, why: why) })
        }
    }

    func decode<T: Decodable>(_ type: T.Type, _ payload: [UInt8]) throws -> T {
        do {
            return try LabLinkJSON.decoder.decode(type, from: Data(payload))
        } catch {
            throw LabLinkError.malformed("request (\(error))")
        }
    }

    func answer(_ payload: [UInt8]) throws {
        try channel.send(.done, payload)
        try channel.flush()
    }

    func answer<T: Encodable>(json value: T) throws {
        try channel.send(.done, json: value)
        try channel.flush()
    }

    /// The failure lineupctl says in one line: the store's own words, and the exit status.
    func refuse(_ error: any Error, status: UInt8 = 1) throws {
        try channel.send(.failure, [status] + Array(String(describing: error).utf8))
        try channel.flush()
    }
}

/// Where the store's client leaves its result for the link's thread waiting on it.
private final class Outcome<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}

/// Runs the store's asynchronous client to its end from the link's thread.
func waitFor<T>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Outcome<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { outcome.result = .success(try await work()) } catch { outcome.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try outcome.result!.get()
}
