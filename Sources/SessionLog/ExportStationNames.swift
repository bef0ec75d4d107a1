import Figures
import Foundation

/// A station's name in the exports (issue 32): `RowWriter` writes each name column as the name
/// `StationNames` gives the station's number from the row's session's settings and its trial's
/// stations (for an event outside a trial, or of a trial with no stations, its session's over
/// all its trials). One rule for the log's export and the lab store's, so both write the same
/// bytes.
///
/// The names cost no SQL beside each row: a session's settings are read once per session
/// (`settings`), a trial's stations come from its row (the trials' `station_N_kind`, never NULL
/// where the trial has station N) or are read once per trial (`stations`: a log's events; the
/// lab store's events select them beside the row, joined once per trial), and a number's name is
/// worked out once per session and set of stations. Selecting the settings and the station list
/// again beside each row (correlated subqueries) made the log's export of events 14 % slower
/// and of trials 17 %.
public struct StationNameRows {
    /// Where a name column's station number is.
    enum Number {
        /// Not a name.
        case none
        /// In its own cell (`ExportStyle.stationName`).
        case own
        /// In another column's cell (`ExportStyle.stationNameOf`).
        case at(Int)
        /// Station `station`, where the trial has it: where column `column` is not NULL
        /// (`ExportStyle.trialStationName`).
        case present(station: Int, column: Int)
    }

    /// Where a row's stations (its trial's) come from.
    public enum Stations {
        /// From the row: station N where the trial's `station_N_kind` is not NULL (the trials).
        case kinds
        /// Selected after the written columns, as bits (bit N: station N; the lab store's events).
        case selected
        /// `lookUp`, once per trial (a log's events).
        case lookedUp
    }

    let numbers: [Number]
    /// Whether any column is a name (only the trials' and events' exports have them).
    public let any: Bool
    let sessionColumn: Int?
    let trialColumn: Int?
    let stationSource: Stations
    let kindColumns: [(station: Int, column: Int)]
    let selectedColumn: Int
    /// A session's settings (JSON) by its id; nil where it has none or there is no such session.
    var settings: (String) throws -> String?
    /// The stations of a trial (bits: 1 << N for station N), and where it has none (or the row
    /// has no trial) its session's over all its trials. Only for `.lookedUp`.
    var lookUp: (_ trial: String?, _ session: String?) throws -> UInt64

    // The row before's session and trial, and the names they gave: rows come trial by trial.
    private var started = false
    private var lastSession: [UInt8]? = nil
    private var lastTrial: [UInt8]? = nil
    private var lastStations: UInt64 = 0
    private var names = Names(StationNames(settings: nil, numbers: []))
    private var known: [Key: Names] = [:]

    private struct Key: Hashable {
        var session: String?
        var stations: UInt64
    }

    /// A session's names, each station's written once as bytes.
    struct Names {
        let rule: StationNames
        let bytes: [[UInt8]]

        init(_ rule: StationNames) {
            self.rule = rule
            bytes = (0...LogLimits.stations.upperBound).map { Array(rule.name($0).utf8) }
        }

        func withName(_ number: Int64, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
            if number >= 0 && number < bytes.count {
                bytes[Int(number)].withUnsafeBufferPointer { body($0) }
            } else {
                var name = rule.name(Int(truncatingIfNeeded: number))
                name.withUTF8 { body($0) }
            }
        }
    }

    /// `columns` as `table`'s export has them; `stations`: where each row's stations come from
    /// (`.selected`: after the columns); `settings` and `lookUp` as above.
    public init(
        _ table: ExportTable, columns: [ExportColumn], stations: Stations,
        settings: @escaping (String) throws -> String?,
        lookUp: @escaping (_ trial: String?, _ session: String?) throws -> UInt64 = { _, _ in 0 }
    ) {
        func index(_ name: String) -> Int? { columns.firstIndex { $0.name == name } }
        numbers = columns.map { column in
            switch column.style {
            case .stationName: return .own
            case .stationNameOf(let other): return index(other).map { .at($0) } ?? .none
            case .trialStationName(let station):
                return index("station_\(station)_kind").map { .present(station: station, column: $0) } ?? .none
            default: return .none
            }
        }
        any = numbers.contains {
            if case .none = $0 { return false }
            return true
        }
        sessionColumn = index("session_id")
        trialColumn = table == .trials ? nil : index("trial_id")
        stationSource = stations
        kindColumns = columns.indices.compactMap { column in
            let name = columns[column].name
            guard name.hasPrefix("station_"), name.hasSuffix("_kind"),
                let station = Int(name.dropFirst("station_".count).dropLast("_kind".count))
            else { return nil }
            return (station, column)
        }
        selectedColumn = columns.count
        self.settings = settings
        self.lookUp = lookUp
    }

    /// Takes the row's session and trial: called once per row, before its names are written.
    mutating func advance(_ row: some ExportRow) throws {
        let sameSession = Self.same(row, sessionColumn, &lastSession)
        let sessionChanged = !started || !sameSession
        var stations: UInt64
        switch stationSource {
        case .kinds:
            stations = 0
            for (station, column) in kindColumns where !row.isNull(column) { stations |= 1 << UInt64(station) }
        case .selected:
            stations = row.isNull(selectedColumn) ? 0 : UInt64(bitPattern: row.int64(selectedColumn))
        case .lookedUp:
            let sameTrial = Self.same(row, trialColumn, &lastTrial)
            let trialChanged = !started || !sameTrial
            stations =
                sessionChanged || trialChanged
                ? try lookUp(lastTrial.map { String(decoding: $0, as: UTF8.self) }, sessionId) : lastStations
        }
        guard sessionChanged || stations != lastStations else { return }
        started = true
        lastStations = stations
        let key = Key(session: sessionId, stations: stations)
        if let found = known[key] {
            names = found
            return
        }
        let numbers = (0..<64).filter { stations & (1 << UInt64($0)) != 0 }
        names = Names(StationNames(settings: try key.session.flatMap(settings), numbers: numbers))
        known[key] = names
    }

    private var sessionId: String? { lastSession.map { String(decoding: $0, as: UTF8.self) } }

    /// Hands the name in column `column` of the row (after `advance`) to `body`; nothing for a
    /// NULL (no station, or a trial without this one).
    @inline(__always) func withName(
        _ column: Int, _ row: some ExportRow, _ body: (UnsafeBufferPointer<UInt8>) -> Void
    ) {
        switch numbers[column] {
        case .none: return
        case .own: if !row.isNull(column) { names.withName(row.int64(column), body) }
        case .at(let other): if !row.isNull(other) { names.withName(row.int64(other), body) }
        case .present(let station, let other): if !row.isNull(other) { names.withName(Int64(station), body) }
        }
    }

    /// Whether the row's text in `column` is `last` (nil: NULL); if not, `last` becomes it.
    static func same(_ row: some ExportRow, _ column: Int?, _ last: inout [UInt8]?) -> Bool {
        guard let column, !row.isNull(column) else {
            defer { last = nil }
            return last == nil
        }
        var equal = false
        row.withText(column) { bytes in
            if let known = last, known.count == bytes.count,
                bytes.isEmpty
                    || known.withUnsafeBufferPointer({ memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 })
            {
                equal = true
            } else {
                last = Array(bytes)
            }
        }
        return equal
    }
}
