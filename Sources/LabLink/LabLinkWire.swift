import Figures
import Foundation
import ReadingRows
import SessionLog
import TrainingEngine

#if canImport(Glibc)
    import Glibc
#endif

// lineupctl reads the lab store through a child process (`lineup-sync lab-link`, which links the
// store's client and its TLS; lineupctl links neither): one Unix socket, the child's standard
// input and output, carrying frames of a kind byte, a 4-byte big-endian length and a payload.
// lineupctl asks (a read, a query and its parameters, a call); the child answers with rows,
// output bytes, `done` (with the call's result) or a failure naming what went wrong.

/// The link's version: the child says its own first, and lineupctl refuses another (a lineupctl
/// and a lineup-sync from two builds).
public let labLinkVersion: UInt8 = 3

/// What a frame carries.
public enum LabLinkKind: UInt8, Sendable {
    // lineupctl to the child.
    /// Begin one consistent read (the store's REPEATABLE READ transaction).
    case begin = 0x42
    /// A query of the read: `LabLinkScan` as JSON.
    case scan = 0x53
    /// Whether the store has a table: its name.
    case hasTable = 0x48
    /// A row no station writes, left out and named once by the child: `[row, reason]` as JSON.
    case badRow = 0x58
    /// End the read: commit, or roll back after a failure.
    case commit = 0x4D
    case rollback = 0x52
    /// One of the store's own readings or the registry's commands: `LabCall` as JSON.
    case call = 0x43
    // The child to lineupctl.
    /// One row of a scan (`LabLinkRowWriter`).
    case row = 0x72
    /// Bytes of an export or a report, in order.
    case output = 0x6F
    /// The request is answered: its result as JSON, or nothing.
    case done = 0x64
    /// The request failed: an exit status byte, then the one line that says why.
    case failure = 0x65
}

/// A query of a read: the store's SQL (`SQLDialect.postgres`) and its parameters.
public struct LabLinkScan: Codable, Sendable {
    public var sql: String
    public var binds: [LabLinkBind]

    public init(sql: String, binds: [SQLValue]) {
        self.sql = sql
        self.binds = binds.map {
            switch $0 {
            case .text(let text): .text(text)
            case .integer(let integer): .integer(integer)
            }
        }
    }

    public var values: [SQLValue] {
        binds.map {
            switch $0 {
            case .text(let text): .text(text)
            case .integer(let integer): .integer(integer)
            }
        }
    }
}

/// `SQLValue` on the wire.
public enum LabLinkBind: Codable, Sendable {
    case text(String?)
    case integer(Int64?)
}

/// `LogFilter` on the wire: every field, so the child selects exactly the rows lineupctl chose.
public struct LabLinkFilter: Codable, Sendable {
    var dogId, sessionId, trialId, eventKind, mode, program, phase, step, handler: String?
    var since, until: Int64?
    var newestFirst: Bool

    public init(_ filter: LogFilter) {
        dogId = filter.dogId
        sessionId = filter.sessionId
        trialId = filter.trialId
        eventKind = filter.eventKind?.rawValue
        since = filter.since
        until = filter.until
        newestFirst = filter.newestFirst
        mode = filter.mode?.rawValue
        program = filter.program
        phase = filter.phase
        step = filter.step
        handler = filter.handler
    }

    public var filter: LogFilter {
        get throws {
            var filter = LogFilter(
                dogId: dogId, sessionId: sessionId, trialId: trialId, since: since, until: until, program: program,
                phase: phase, step: step, handler: handler)
            filter.newestFirst = newestFirst
            if let eventKind {
                guard let kind = EventKind(rawValue: eventKind) else { throw LabLinkError.malformed("event kind") }
                filter.eventKind = kind
            }
            if let mode {
                guard let chosen = TrainingMode(rawValue: mode) else { throw LabLinkError.malformed("mode") }
                filter.mode = chosen
            }
            return filter
        }
    }
}

/// What lineupctl asks of the store besides the readings' rows: its name, `export` (not yet in
/// Sources/Readings), and the registry's commands (`lineupctl lab`).
public enum LabCall: Codable, Sendable {
    /// The store in a person's words, as a refusal names it (`RowScanner.place`).
    case place
    /// Streamed as output: the table and format by their names.
    case export(table: String, format: String, filter: LabLinkFilter)
    case dogs
    case samples
    case mergeDogs(keep: String, merged: String, why: String)
    case undoMerge(merge: String, why: String)
}

/// Why the lab store could not be read through the child, in one line.
public enum LabLinkError: Error, Equatable, CustomStringConvertible {
    /// The child said why (the store's own message) and with which exit status.
    case refused(String, status: Int32)
    /// No client beside lineupctl nor on PATH.
    case clientMissing(beside: String)
    /// The child could not be started, or ended before answering.
    case client(String)
    /// A frame or a value the other side should not have sent.
    case malformed(String)
    /// The client speaks another version of the link.
    case version(client: String, speaks: Int)

    public var description: String {
        switch self {
        case .refused(let message, _): message
        case .clientMissing(let beside):
            "--lab reads the lab store through lineup-sync, found neither beside \(beside) nor on PATH: "
                + "install lineup's package, or build it beside lineupctl (swift build --product lineup-sync)"
        case .client(let reason): "the lab store's client (lineup-sync): \(reason)"
        case .malformed(let what): "the lab store's client (lineup-sync) sent a malformed \(what)"
        case .version(let client, let speaks):
            "the lab store's client \(client) speaks version \(speaks) of lineupctl's link, this lineupctl "
                + "version \(labLinkVersion): install lineupctl and lineup-sync from one package or build"
        }
    }

    /// The exit status a command ends with for it.
    public var status: Int32 {
        if case .refused(_, let status) = self { return status }
        return 1
    }
}

/// Frames over one socket, read through a buffer; written with MSG_NOSIGNAL, so a peer gone
/// away is an error here and never a SIGPIPE. Used by one thread at a time: lineupctl's, or the
/// child's link thread and the store client's task while that thread waits for it.
public final class LabLinkChannel: @unchecked Sendable {
    let input: Int32
    let output: Int32
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)
    private var start = 0
    private var end = 0
    private var pending: [UInt8] = []

    public init(input: Int32, output: Int32) {
        self.input = input
        self.output = output
        pending.reserveCapacity(1 << 16 + 64)
    }

    /// Queues a frame; `flush` (or a full queue) sends it.
    public func send(_ kind: LabLinkKind, _ payload: UnsafeRawBufferPointer) throws {
        pending.append(kind.rawValue)
        let count = UInt32(payload.count)
        for shift in stride(from: 24, through: 0, by: -8) { pending.append(UInt8(truncatingIfNeeded: count >> shift)) }
        pending.append(contentsOf: payload)
        if pending.count >= 1 << 16 { try flush() }
    }

    public func send(_ kind: LabLinkKind, _ payload: [UInt8] = []) throws {
        try payload.withUnsafeBytes { try send(kind, $0) }
    }

    public func send<T: Encodable>(_ kind: LabLinkKind, json value: T) throws {
        try send(kind, Array(try LabLinkJSON.encoder.encode(value)))
    }

    public func flush() throws {
        var sent = 0
        while sent < pending.count {
            let n = pending.withUnsafeBytes { bytes in
                Glibc.send(output, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            }
            if n < 0 {
                if errno == EINTR { continue }
                pending.removeAll(keepingCapacity: true)
                throw LabLinkError.client("the other end went away (\(String(cString: strerror(errno))))")
            }
            sent += n
        }
        pending.removeAll(keepingCapacity: true)
    }

    /// The next frame, nil at the end of the stream (the other side closed it).
    public func receive() throws -> (kind: LabLinkKind, payload: [UInt8])? {
        guard let header = try take(5) else { return nil }
        guard let kind = LabLinkKind(rawValue: header[0]) else { throw LabLinkError.malformed("frame") }
        let count = header[1...4].reduce(0) { $0 << 8 | Int($1) }
        if count == 0 { return (kind, []) }
        guard let payload = try take(count) else { throw LabLinkError.client("the stream ended inside a frame") }
        return (kind, payload)
    }

    /// `count` bytes, nil when the stream ends before the first of them.
    private func take(_ count: Int) throws -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count {
            if start == end {
                let n = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress!, $0.count) }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw LabLinkError.client("reading its answer: \(String(cString: strerror(errno)))")
                }
                if n == 0 {
                    if out.isEmpty { return nil }
                    throw LabLinkError.client("the stream ended inside a frame")
                }
                start = 0
                end = n
            }
            let used = min(count - out.count, end - start)
            out.append(contentsOf: buffer[start..<start + used])
            start += used
        }
        return out
    }
}

/// One JSON form for both sides; a figure that is not a number (an infinite ratio) travels as a word.
public enum LabLinkJSON {
    public static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        return encoder
    }

    public static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        return decoder
    }
}

/// A row's cells as the child writes them: a count, then each cell NULL, an integer or bytes.
public struct LabLinkRowWriter {
    public private(set) var bytes: [UInt8] = []

    public init(columns: Int) {
        bytes.reserveCapacity(256)
        bytes.append(UInt8(truncatingIfNeeded: columns >> 8))
        bytes.append(UInt8(truncatingIfNeeded: columns))
    }

    public mutating func appendNull() { bytes.append(0) }

    /// A floating-point column (a dilution factor, a room's temperature): its IEEE 754 bits.
    public mutating func append(double: Double) {
        bytes.append(3)
        let bits = double.bitPattern
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: bits >> shift)) }
    }

    public mutating func append(integer: Int64) {
        bytes.append(1)
        let bits = UInt64(bitPattern: integer)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: bits >> shift)) }
    }

    public mutating func append(bytes cell: UnsafeRawBufferPointer) {
        bytes.append(2)
        let count = UInt32(cell.count)
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: count >> shift)) }
        bytes.append(contentsOf: cell)
    }
}
