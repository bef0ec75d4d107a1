import Foundation
import ReadingRows
import SessionLog

#if canImport(Glibc)
    import Glibc
#endif

/// lineupctl's reach into the lab store: the store's client runs as a child process
/// (`lineup-sync lab-link`, beside lineupctl or on PATH) and answers over one socket, so
/// lineupctl links no PostgreSQL client, SwiftNIO or TLS. The readings run here, on the rows it
/// sends (`RowSource`); the filter words resolve there, by the store's own rules.
///
/// Used from one thread at a time, as lineupctl's commands are synchronous.
public final class LabLink: @unchecked Sendable {
    let channel: LabLinkChannel
    let socket: Int32
    let child: pid_t
    private var closed = false
    /// The store in a person's words (`the lab store reader_r@host:5432/lab`), asked at open.
    public private(set) var place = "the lab store"
    /// Rows a reading left out while the child was still sending a scan's rows (`badRow`): named
    /// by the child once the scan has ended, as it listens only between requests.
    var leftOut: [BadRow] = []
    /// Whether a scan's rows are being read (`LabLinkScanner.badRow` is called from its body then).
    var scanning = false

    /// Starts the client and opens the store at `address` (a connection file or a URL): as a
    /// researcher's reader, whose migrations are checked, or (`registry`) for `lineupctl lab`.
    public static func open(_ address: String, registry: Bool = false) throws -> LabLink {
        let client = try clientPath()
        var ends: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw LabLinkError.client("no socket to it: \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, ends[1], 0)
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        let arguments = [client, "lab-link", "--lab", address] + (registry ? ["--registry"] : [])
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        // The researcher's environment (~/.pgpass, $PGPASSFILE) goes with it.
        var environment: [UnsafeMutablePointer<CChar>?] =
            ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in environment { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, client, &actions, nil, &argv, &environment)
        Glibc.close(ends[1])
        guard spawned == 0 else {
            Glibc.close(ends[0])
            throw LabLinkError.client("cannot start \(client): \(String(cString: strerror(spawned)))")
        }
        let link = LabLink(channel: LabLinkChannel(input: ends[0], output: ends[0]), socket: ends[0], child: pid)
        do {
            let version = try link.answer()
            guard version == [labLinkVersion] else {
                throw LabLinkError.version(client: client, speaks: version.first.map(Int.init) ?? 0)
            }
            link.place = try link.call(.place, as: String.self)
        } catch {
            link.close()
            throw error
        }
        return link
    }

    init(channel: LabLinkChannel, socket: Int32, child: pid_t) {
        self.channel = channel
        self.socket = socket
        self.child = child
    }

    /// Ends the child (it closes the store when its input ends) and waits for it.
    public func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(socket)
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
    }

    /// The client: `lineup-sync` in lineupctl's own directory (an installed package, a build
    /// directory), else the first on PATH.
    static func clientPath() throws -> String {
        let own =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        let directory = URL(fileURLWithPath: own).deletingLastPathComponent().path
        var candidates = [directory + "/lineup-sync"]
        for entry in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            candidates.append(entry + "/lineup-sync")
        }
        guard let found = candidates.first(where: { access($0, X_OK) == 0 }) else {
            throw LabLinkError.clientMissing(beside: own)
        }
        return found
    }

    /// Waits for the answer to the last request: its result's bytes, or the failure it names.
    /// `output` takes the bytes of a streamed answer as they come.
    func answer(
        output: (UnsafeRawBufferPointer) throws -> Void = { _ in throw LabLinkError.malformed("output") }
    ) throws -> [UInt8] {
        while true {
            guard let (kind, payload) = try channel.receive() else { throw ended() }
            switch kind {
            case .done: return payload
            case .failure:
                let status = payload.first.map { Int32($0) } ?? 1
                throw LabLinkError.refused(String(decoding: payload.dropFirst(), as: UTF8.self), status: status)
            case .output: try payload.withUnsafeBytes { try output($0) }
            default: throw LabLinkError.malformed("\(kind) frame")
            }
        }
    }

    /// The child's end as one line: its exit status or signal.
    func ended() -> LabLinkError {
        var status: Int32 = 0
        closed = true
        Glibc.close(socket)
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7f
        let how = signal == 0 ? "exit status \((status >> 8) & 0xff)" : "signal \(signal)"
        return .client("it ended (\(how)) before answering")
    }

    /// One call and its JSON result.
    public func call<T: Decodable>(_ call: LabCall, as type: T.Type) throws -> T {
        try channel.send(.call, json: call)
        try channel.flush()
        let result = try answer()
        do {
            return try LabLinkJSON.decoder.decode(type, from: Data(result))
        } catch {
            throw LabLinkError.malformed("answer (\(error))")
        }
    }

    /// One call whose answer is streamed bytes (an export), handed to `output` in order.
    public func stream(_ call: LabCall, to output: (UnsafeRawBufferPointer) throws -> Void) throws {
        try channel.send(.call, json: call)
        try channel.flush()
        _ = try answer(output: output)
    }
}

extension LabLink: FilterResolving {
    // The filter words by their one definition (`FilterWords`), on the rows the child sends.
    public func resolveDog(_ text: String) throws -> String { try FilterWords(self).dog(text) }
    public func resolveSession(_ text: String) throws -> String { try FilterWords(self).session(text) }
    public func resolveProgram(_ name: String) throws -> String { try FilterWords(self).program(name) }
    public func resolveHandler(_ code: String) throws -> String { try FilterWords(self).handler(code) }
    public func resolveStep(_ text: String) throws -> (phase: String, step: String?) {
        try FilterWords(self).step(text)
    }
}

extension LabLink: RowSource {
    /// One read: the child's REPEATABLE READ transaction, committed after `body`, rolled back
    /// when it fails.
    public func readRows<T>(_ body: (inout LabLinkScanner) throws -> T) throws -> T {
        try channel.send(.begin)
        try channel.flush()
        _ = try answer()
        var scanner = LabLinkScanner(link: self)
        let result: T
        do {
            result = try body(&scanner)
        } catch {
            // The store's failure is the one said; a failure to roll back after it is not.
            if (try? channel.send(.rollback)) != nil, (try? channel.flush()) != nil { _ = try? answer() }
            throw error
        }
        try channel.send(.commit)
        try channel.flush()
        _ = try answer()
        return result
    }
}

/// The queries of one read, run by the child; the rows come back one frame each.
public struct LabLinkScanner: RowScanner {
    let link: LabLink

    public var dialect: SQLDialect { .postgres }

    /// Asked of the child once per link (`LabCall.place`).
    public var place: String { link.place }

    public mutating func scan(_ query: ReadingSQL, _ binds: [SQLValue], _ body: (LabLinkRow) throws -> Void) throws {
        try link.channel.send(.scan, json: LabLinkScan(sql: query.text(in: .postgres), binds: binds))
        try link.channel.flush()
        link.scanning = true
        defer { link.scanning = false }
        // A reading that fails on a row stops reading: the rest of the answer is read and dropped,
        // so the read stays in step, and its failure is the one said.
        var failure: (any Error)?
        while true {
            guard let (kind, payload) = try link.channel.receive() else { throw link.ended() }
            switch kind {
            case .row:
                guard failure == nil else { continue }
                do { try body(try LabLinkRow(payload)) } catch { failure = error }
            case .done:
                if let failure {
                    link.leftOut.removeAll()
                    throw failure
                }
                link.scanning = false
                try nameLeftOut()
                return
            case .failure:
                link.leftOut.removeAll()
                if let failure { throw failure }
                let status = payload.first.map { Int32($0) } ?? 1
                throw LabLinkError.refused(String(decoding: payload.dropFirst(), as: UTF8.self), status: status)
            default: throw LabLinkError.malformed("\(kind) frame")
            }
        }
    }

    /// Named once by the child, on standard error, as the store's reader names it. A row found
    /// inside a scan is named when the scan ends: the child is sending the scan's rows until then,
    /// and the next frame to come is one of them, not the answer to this.
    public func badRow(_ row: BadRow) throws {
        link.leftOut.append(row)
        if !link.scanning { try nameLeftOut() }
    }

    /// The rows left out so far, each named by the child in one request.
    func nameLeftOut() throws {
        let rows = link.leftOut
        link.leftOut.removeAll()
        for row in rows {
            try link.channel.send(.badRow, json: [row.table, row.id, row.problem, row.reason])
            try link.channel.flush()
            _ = try link.answer()
        }
    }

    /// None, as the store's own reader: lineup-sync holds a running double-blind session's rows
    /// back until it ends (`Visibility.withheld(from: .labReader)`).
    public func refuseWithheld(session id: String) throws {}

    public func hasTable(_ name: String) throws -> Bool {
        try link.channel.send(.hasTable, Array(name.utf8))
        try link.channel.flush()
        return try link.answer() == [1]
    }
}

/// One row as the child sent it: each column NULL, an integer or bytes (the text's UTF-8).
public struct LabLinkRow: ReadingRow {
    enum Cell {
        case null
        case integer(Int64)
        case double(Double)
        case bytes(Range<Int>)
    }

    let payload: [UInt8]
    let cells: [Cell]

    init(_ payload: [UInt8]) throws {
        self.payload = payload
        guard payload.count >= 2 else { throw LabLinkError.malformed("row") }
        let columns = Int(payload[0]) << 8 | Int(payload[1])
        var cells: [Cell] = []
        cells.reserveCapacity(columns)
        var at = 2
        func number(_ width: Int) throws -> UInt64 {
            guard at + width <= payload.count else { throw LabLinkError.malformed("row") }
            defer { at += width }
            return payload[at..<at + width].reduce(0) { $0 << 8 | UInt64($1) }
        }
        for _ in 0..<columns {
            switch try number(1) {
            case 0: cells.append(.null)
            case 1: cells.append(.integer(Int64(bitPattern: try number(8))))
            case 3: cells.append(.double(Double(bitPattern: try number(8))))
            case 2:
                let count = Int(try number(4))
                guard at + count <= payload.count else { throw LabLinkError.malformed("row") }
                cells.append(.bytes(at..<at + count))
                at += count
            default: throw LabLinkError.malformed("row")
            }
        }
        self.cells = cells
    }

    func cell(_ column: Int) throws -> Cell {
        guard cells.indices.contains(column) else { throw LabLinkError.malformed("row (no column \(column))") }
        return cells[column]
    }

    public func text(_ column: Int) throws -> String? {
        switch try cell(column) {
        case .null: return nil
        case .bytes(let range): return String(decoding: payload[range], as: UTF8.self)
        case .integer, .double:
            throw LabLinkError.refused("the lab store's column \(column) is a number, read as text", status: 1)
        }
    }

    public func double(_ column: Int) throws -> Double? {
        switch try cell(column) {
        case .null: return nil
        case .double(let value): return value
        case .integer(let value): return Double(value)
        case .bytes: throw LabLinkError.refused("the lab store's column \(column) is not a number", status: 1)
        }
    }

    public func integer(_ column: Int) throws -> Int64? {
        switch try cell(column) {
        case .null: return nil
        case .integer(let value): return value
        case .bytes, .double:
            throw LabLinkError.refused("the lab store's column \(column) is not an integer", status: 1)
        }
    }

    public func withBytes<T>(_ column: Int, _ body: (UnsafeRawBufferPointer?) throws -> T) throws -> T {
        switch try cell(column) {
        case .null: return try body(nil)
        case .integer, .double:
            throw LabLinkError.refused("the lab store's column \(column) is a number, read as bytes", status: 1)
        case .bytes(let range):
            return try payload.withUnsafeBytes { all in
                // An empty text is not NULL: the decoder tells them apart by the address.
                guard let base = all.baseAddress else {
                    return try withUnsafeBytes(of: 0) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<0])) }
                }
                return try body(UnsafeRawBufferPointer(start: base + range.lowerBound, count: range.count))
            }
        }
    }
}
