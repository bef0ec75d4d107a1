import Figures
import Foundation
import GRDB
import GRDBSQLite

#if canImport(Glibc)
    import Glibc
#endif

/// A buffered writer to a file descriptor: exports write a million rows, so bytes are
/// gathered in 64 KiB and written with one `write(2)` each. Or, given a chunk handler, each
/// full buffer is handed to it instead (lineup-web streams an export into its response).
public final class ByteSink {
    private let fd: Int32
    private let chunk: ((UnsafeRawBufferPointer) throws -> Bool)?
    fileprivate var buffer: [UInt8]
    private let limit: Int
    /// Set once the reader went away (`| head`): the export stops quietly.
    public private(set) var closedByReader = false

    public init(fd: Int32 = STDOUT_FILENO, capacity: Int = 1 << 16) {
        self.fd = fd
        chunk = nil
        limit = capacity
        buffer = []
        buffer.reserveCapacity(capacity + 4_096)
    }

    /// A sink that hands each chunk (about `capacity` bytes, whole rows; the bytes the
    /// descriptor would get, in the same order) to `chunk`, which must copy what it keeps.
    /// `chunk` returns false once its reader went away: the export then stops quietly, as on
    /// EPIPE.
    public init(capacity: Int = 1 << 16, chunk: @escaping (UnsafeRawBufferPointer) throws -> Bool) {
        fd = -1
        self.chunk = chunk
        limit = capacity
        buffer = []
        buffer.reserveCapacity(capacity + 4_096)
    }

    func append(_ text: String) {
        var text = text
        text.withUTF8 { buffer.append(contentsOf: $0) }
    }

    func append(int value: Int64) {
        if value < 0 { buffer.append(UInt8(ascii: "-")) }
        append(unsigned: value.magnitude)
    }

    /// Swift's shortest form that reads back as the same Double (`1000.0`, `1e-07`).
    func append(real value: Double) {
        append(value.description)
    }

    func append(unsigned value: UInt64) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for 20 digits
        var count = 0
        var rest = value
        withUnsafeMutableBytes(of: &digits) { raw in
            repeat {
                raw[23 - count] = UInt8(truncatingIfNeeded: 48 + rest % 10)
                rest /= 10
                count += 1
            } while rest > 0
            buffer.append(contentsOf: raw[(24 - count)...])
        }
    }

    /// Writes what is buffered once the buffer is full.
    @inline(__always) func flushIfFull() throws {
        if buffer.count >= limit { try flush() }
    }

    /// Writes what is buffered.
    public func flush() throws {
        if let chunk {
            if !buffer.isEmpty && !closedByReader {
                closedByReader = !(try buffer.withUnsafeBytes { try chunk($0) })
            }
            buffer.removeAll(keepingCapacity: true)
            return
        }
        var offset = 0
        while offset < buffer.count && !closedByReader {
            let written = buffer.withUnsafeBytes { raw in
                write(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EPIPE {
                    closedByReader = true
                    break
                }
                throw SessionLogError.invalidInput("cannot write the export: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// One row of an export as its source hands it over: SQLite's column accessors, or a row of
/// the lab store. Text is the column's UTF-8 bytes; integers are read only from integer columns.
public protocol ExportRow {
    func isNull(_ column: Int) -> Bool
    func int64(_ column: Int) -> Int64
    /// Read only from real columns (`ExportStyle.real`).
    func double(_ column: Int) -> Double
    /// The text's bytes, handed to `body` (nil for NULL).
    func withText(_ column: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Void)
}

/// A row at SQLite's statement cursor.
struct SQLiteExportRow: ExportRow {
    let statement: OpaquePointer

    @inline(__always) func isNull(_ column: Int) -> Bool {
        sqlite3_column_type(statement, Int32(column)) == SQLITE_NULL
    }

    @inline(__always) func int64(_ column: Int) -> Int64 { sqlite3_column_int64(statement, Int32(column)) }

    @inline(__always) func double(_ column: Int) -> Double { sqlite3_column_double(statement, Int32(column)) }

    @inline(__always) func withText(_ column: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        guard let text = sqlite3_column_text(statement, Int32(column)) else { return }
        body(UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(statement, Int32(column)))))
    }
}

/// Formats rows into the sink's buffer, from either source: one formatter, so a log's export
/// and the lab store's are the same bytes for the same rows.
public struct RowWriter {
    let columns: [ExportColumn]
    let format: ExportFormat
    let sink: ByteSink
    var iso: ISOTimeFormatter
    // Pre-encoded `"name":` keys for JSON Lines.
    let keys: [[UInt8]]
    /// How each column is written, worked out once from its style.
    let cells: [Cell]
    /// The station names of the rows, where a column is a name (`StationNameRows`).
    var names: StationNameRows?

    enum Cell {
        case integer, unsigned, isoTime, real, text, name
    }

    public init(
        columns: [ExportColumn], format: ExportFormat, sink: ByteSink, timeZone: TimeZone,
        names: StationNameRows? = nil
    ) {
        self.columns = columns
        self.format = format
        self.sink = sink
        iso = ISOTimeFormatter(timeZone: timeZone)
        keys = columns.map { Array("\"\($0.name)\":".utf8) }
        cells = columns.map {
            switch $0.style {
            case .integer: .integer
            case .unsigned: .unsigned
            case .isoTime: .isoTime
            case .real: .real
            case .text: .text
            case .stationName, .stationNameOf, .trialStationName: .name
            }
        }
        self.names = names
        precondition(
            names?.any == true || !cells.contains { if case .name = $0 { true } else { false } },
            "an export with station names is written with its StationNameRows")
    }

    /// The CSV header (JSON Lines has none).
    public func writeHeader() {
        guard format == .csv else { return }
        for (index, column) in columns.enumerated() {
            if index > 0 { sink.buffer.append(UInt8(ascii: ",")) }
            sink.append(column.name)
        }
        sink.buffer.append(13)
        sink.buffer.append(10)
    }

    /// One row; false once the sink's reader went away (the export stops quietly).
    @inline(__always) public mutating func write(_ row: some ExportRow) throws -> Bool {
        if names != nil { try names!.advance(row) }
        if format == .csv { writeCSVRow(row) } else { writeJSONRow(row) }
        try sink.flushIfFull()
        return !sink.closedByReader
    }

    mutating func write(_ statement: OpaquePointer) throws -> Int { try write(statement) { $0 } }

    /// The rows `make` turns each selected row into (a guess's, computed from its trial's).
    mutating func write<Row: ExportRow>(_ statement: OpaquePointer, _ make: (SQLiteExportRow) throws -> Row) throws
        -> Int
    {
        writeHeader()
        var count = 0
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else {
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: rc),
                    message: String(cString: sqlite3_errmsg(sqlite3_db_handle(statement))))
            }
            count += 1
            if !(try write(try make(SQLiteExportRow(statement: statement)))) { break }
        }
        return count
    }

    private mutating func writeCSVRow(_ row: some ExportRow) {
        for index in cells.indices {
            if index > 0 { sink.buffer.append(UInt8(ascii: ",")) }
            if case .name = cells[index] {
                names?.withName(index, row) { appendCSVText($0) }
                continue
            }
            if row.isNull(index) { continue }
            switch cells[index] {
            case .integer: sink.append(int: row.int64(index))
            case .unsigned: sink.append(unsigned: UInt64(bitPattern: row.int64(index)))
            case .isoTime: iso.append(wallNs: row.int64(index), to: &sink.buffer)
            case .real: sink.append(real: row.double(index))
            case .text: row.withText(index) { appendCSVText($0) }
            case .name: break
            }
        }
        sink.buffer.append(13)
        sink.buffer.append(10)
    }

    private func appendCSVText(_ bytes: UnsafeBufferPointer<UInt8>) {
        // RFC 4180: quote a field holding a comma, a quote or a line break; double quotes.
        let needsQuotes = bytes.contains { (byte: UInt8) -> Bool in
            byte == 44 || byte == 34 || byte == 10 || byte == 13
        }
        if !needsQuotes {
            sink.buffer.append(contentsOf: bytes)
            return
        }
        sink.buffer.append(34)
        for byte in bytes {
            if byte == 34 { sink.buffer.append(34) }
            sink.buffer.append(byte)
        }
        sink.buffer.append(34)
    }

    private mutating func writeJSONRow(_ row: some ExportRow) {
        sink.buffer.append(UInt8(ascii: "{"))
        for index in cells.indices {
            if index > 0 { sink.buffer.append(UInt8(ascii: ",")) }
            sink.buffer.append(contentsOf: keys[index])
            if case .name = cells[index] {
                var wrote = false
                names?.withName(index, row) {
                    appendJSONString($0)
                    wrote = true
                }
                if !wrote { sink.append("null") }
                continue
            }
            if row.isNull(index) {
                sink.append("null")
                continue
            }
            switch cells[index] {
            case .integer: sink.append(int: row.int64(index))
            case .unsigned: sink.append(unsigned: UInt64(bitPattern: row.int64(index)))
            // The log's CHECKs keep every real finite, so the JSON number is always valid.
            case .real: sink.append(real: row.double(index))
            case .isoTime:
                sink.buffer.append(34)
                iso.append(wallNs: row.int64(index), to: &sink.buffer)
                sink.buffer.append(34)
            case .name: break
            case .text:
                var wrote = false
                row.withText(index) {
                    appendJSONString($0)
                    wrote = true
                }
                if !wrote { sink.append("null") }
            }
        }
        sink.buffer.append(UInt8(ascii: "}"))
        sink.buffer.append(10)
    }

    private func appendJSONString(_ bytes: UnsafeBufferPointer<UInt8>) {
        let hex = Array("0123456789abcdef".utf8)
        sink.buffer.append(34)
        for byte in bytes {
            switch byte {
            case 34: sink.append("\\\"")
            case 92: sink.append("\\\\")
            case 10: sink.append("\\n")
            case 13: sink.append("\\r")
            case 9: sink.append("\\t")
            case 0..<32:
                sink.append("\\u00")
                sink.buffer.append(hex[Int(byte >> 4)])
                sink.buffer.append(hex[Int(byte & 15)])
            default: sink.buffer.append(byte)
            }
        }
        sink.buffer.append(34)
    }
}
