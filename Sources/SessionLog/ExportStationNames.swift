import Figures
import Foundation

/// A station's name in the exports (issue 32): each name column (`ExportStyle.stationName`)
/// selects the station's number, and the row is written with the name `StationNames` gives that
/// number from the session's settings and the trial's layout, which the query selects after the
/// exported columns (`stationNameInputs`). One rule for the log's export and the lab store's, so
/// both write the same bytes.
public struct StationNameRows {
    let isName: [Bool]
    let settings: Int
    let layout: Int
    // Rows come session by session: the names are worked out once per session and layout.
    private var cache: [String: StationNames] = [:]

    public init(columns: [ExportColumn]) {
        isName = columns.map { $0.style == .stationName }
        settings = columns.count
        layout = columns.count + 1
    }

    /// Whether any column is a name (only the trials' and events' exports have them).
    public var any: Bool { isName.contains(true) }

    /// `row` with its name columns written as names.
    public mutating func row<Base: ExportRow>(_ row: Base) -> NamedStationRow<Base> {
        let settingsText = Self.text(row, settings)
        let layoutText = Self.text(row, layout) ?? ""
        let key = (settingsText ?? "") + "\u{0}" + layoutText
        let names: StationNames
        if let known = cache[key] {
            names = known
        } else {
            let numbers = layoutText.split(separator: ",").compactMap { Int($0) }
            names = StationNames(settings: settingsText, numbers: numbers)
            cache[key] = names
        }
        return NamedStationRow(base: row, isName: isName, names: names)
    }

    static func text(_ row: some ExportRow, _ column: Int) -> String? {
        if row.isNull(column) { return nil }
        var text = ""
        row.withText(column) { text = String(decoding: $0, as: UTF8.self) }
        return text
    }
}

/// An exported row whose name columns hold a station's name instead of its number.
public struct NamedStationRow<Base: ExportRow>: ExportRow {
    let base: Base
    let isName: [Bool]
    let names: StationNames

    public func isNull(_ column: Int) -> Bool { base.isNull(column) }
    public func int64(_ column: Int) -> Int64 { base.int64(column) }
    public func double(_ column: Int) -> Double { base.double(column) }
    public func withText(_ column: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        guard isName[column] else { return base.withText(column, body) }
        var name = names.name(Int(base.int64(column)))
        name.withUTF8 { body($0) }
    }
}
