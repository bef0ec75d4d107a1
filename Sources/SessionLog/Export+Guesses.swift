import Figures
import Foundation
import TrainingEngine

// `export --what guesses`: one row per handler's guess, raw enough that every figure of
// `stats --guesses` can be recomputed from it (docs/figures.md, "The handler's guess"). The
// rows are those `stats --guesses` counts, in its order, aborted trials included; the columns
// that need a rule (stations, targets, before the first indication, false alerts) are computed
// by the counter's own code from the trial's row, on a log and on the lab store alike.

/// What a guess's query selects, in this order, from a log or the lab store.
public enum GuessInput: Int, CaseIterable {
    case guessId, sessionId, dog, handler, trialId, guessedTrialId, trialNumber, guessedStation, outcome, time
    case monoNs, startedMonoNs, latencyNs, layout, seen

    /// The SQL of each input, in `LogReader.guessRows`'s names for the tables (the lab store's
    /// query names them alike).
    public static let selection = [
        "g.id", "s.id", "d.name", "h.code", "t.id", "g.trial_id", "t.number", "g.station", "t.outcome", "g.wall_ns",
        "g.mono_ns", "t.started_mono_ns", "t.latency_ns", "t.layout", "t.seen",
    ]

    /// Whether the input is read as an integer (else as text).
    public var isInteger: Bool {
        switch self {
        case .trialNumber, .guessedStation, .time, .monoNs, .startedMonoNs, .latencyNs: true
        default: false
        }
    }

    /// The columns written, each an input as it is or computed from the trial.
    static let columns: [ExportColumn] = [
        ExportColumn(name: "guess_id", expression: "", style: .text),
        ExportColumn(name: "session_id", expression: "", style: .text),
        ExportColumn(name: "dog", expression: "", style: .text),
        ExportColumn(name: "handler", expression: "", style: .text),
        // The trial as it stands after corrections, and the one the guess was made for.
        ExportColumn(name: "trial_id", expression: "", style: .text),
        ExportColumn(name: "guessed_trial_id", expression: "", style: .text),
        ExportColumn(name: "trial_number", expression: "", style: .integer),
        ExportColumn(name: "guessed_station", expression: "", style: .integer),
        ExportColumn(name: "stations", expression: "", style: .integer),
        ExportColumn(name: "target_stations", expression: "", style: .text),
        ExportColumn(name: "outcome", expression: "", style: .text),
        ExportColumn(name: "time", expression: "", style: .isoTime),
        ExportColumn(name: "mono_ns", expression: "", style: .integer),
        ExportColumn(name: "before_indication", expression: "", style: .integer),
        ExportColumn(name: "false_alert_stations", expression: "", style: .text),
    ]
}

extension ExportQuery {
    /// The guesses' WITH clause on a log without `handler_guess` (older than the guess): an
    /// empty table of that name, so the export is its header alone.
    static let noGuesses = LogReader.guessChain.replacingOccurrences(
        of: "WITH RECURSIVE ",
        with: """
            WITH RECURSIVE handler_guess(id, session_id, trial_id, trial_number, station, mono_ns, wall_ns) AS (
                SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL WHERE 0),\n
            """)
}

/// A guess's row as the export writes it.
public struct GuessExportRow: ExportRow {
    enum Cell {
        case null
        case integer(Int64)
        case text([UInt8])
    }
    var cells: [Cell] = []

    public func isNull(_ column: Int) -> Bool {
        if case .null = cells[column] { return true }
        return false
    }

    public func int64(_ column: Int) -> Int64 {
        if case .integer(let value) = cells[column] { return value }
        return 0
    }

    /// A guess's row has no real column (`GuessInput.columns`): never asked.
    public func double(_ column: Int) -> Double {
        if case .integer(let value) = cells[column] { return Double(value) }
        return 0
    }

    public func withText(_ column: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        if case .text(let bytes) = cells[column] { bytes.withUnsafeBufferPointer(body) }
    }
}

/// Turns each selected row (`GuessInput`'s columns, from a log or the store) into the row the
/// export writes, the trial decoded by `TrialRowDecoder` as `GuessCounter` decodes it.
public struct GuessExportRows {
    private var decoder = TrialRowDecoder(samples: false)

    public init() {}

    public mutating func row(_ selected: some ExportRow) throws -> GuessExportRow {
        func cell(_ input: GuessInput) -> GuessExportRow.Cell {
            if selected.isNull(input.rawValue) { return .null }
            if input.isInteger { return .integer(selected.int64(input.rawValue)) }
            var bytes: [UInt8] = []
            selected.withText(input.rawValue) { bytes = Array($0) }
            return .text(bytes)
        }
        func text(_ input: GuessInput) -> [UInt8]? {
            if case .text(let bytes) = cell(input) { return bytes }
            return nil
        }
        let outcome = String(decoding: text(.outcome) ?? [], as: UTF8.self)
        let latency: Int64? =
            selected.isNull(GuessInput.latencyNs.rawValue) ? nil : selected.int64(GuessInput.latencyNs.rawValue)
        let layout = text(.layout) ?? []
        let seen = text(.seen)
        let decoded = layout.withUnsafeBytes { layoutBytes in
            guard let seen else {
                return decoder.trial(outcome: outcome, latencyNs: latency, layout: layoutBytes, seen: nil)
            }
            return seen.withUnsafeBytes {
                decoder.trial(outcome: outcome, latencyNs: latency, layout: layoutBytes, seen: $0)
            }
        }
        guard let trial = decoded else {
            throw LogLimits.badLayout(trial: String(decoding: text(.trialId) ?? [], as: UTF8.self))
        }
        func list(_ stations: [Int]) -> GuessExportRow.Cell {
            .text(Array(stations.map(String.init).joined(separator: " | ").utf8))
        }
        let before = GuessTally.beforeIndication(
            guessedAtMonoNs: selected.int64(GuessInput.monoNs.rawValue),
            startedMonoNs: selected.int64(GuessInput.startedMonoNs.rawValue), latencyNs: trial.latencyNs)
        return GuessExportRow(cells: [
            cell(.guessId), cell(.sessionId), cell(.dog), cell(.handler), cell(.trialId), cell(.guessedTrialId),
            cell(.trialNumber), cell(.guessedStation), .integer(Int64(trial.stations.count)),
            list(trial.stations.filter { $0.kind == .target }.map(\.station)), cell(.outcome), cell(.time),
            cell(.monoNs), .integer(before ? 1 : 0),
            // Unknown (null) for a trial logged before the log kept what each station saw.
            trial.hasStationData ? list(GuessTally.falseAlertStations(in: trial)) : .null,
        ])
    }
}
