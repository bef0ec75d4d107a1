import LabLink
import PostgresNIO

extension LabRow {
    /// This row as lineupctl's link carries it (`lineup-sync lab-link`): an integer or floating-point
    /// column as its value, any other as the bytes `withBytes` gives, so lineupctl's reading sees what it
    /// would see here.
    public func linked() throws -> LabLinkRowWriter {
        var writer = LabLinkRowWriter(columns: cells.count)
        for cell in cells {
            switch (cell.bytes, cell.dataType) {
            case (nil, _): writer.appendNull()
            case (_, .int2), (_, .int4), (_, .int8):
                writer.append(integer: try cell.decode(Int64.self))
            case (_, .float4), (_, .float8):
                writer.append(double: try cell.decode(Double.self))
            case (let buffer?, _):
                buffer.withUnsafeReadableBytes { writer.append(bytes: $0) }
            }
        }
        return writer
    }
}
