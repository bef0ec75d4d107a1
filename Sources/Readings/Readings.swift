import ReadingRows

/// A researcher's reading, defined once: its queries (written for both dialects,
/// `ReadingSQL`), how their rows are decoded, and the counter from Figures that makes the
/// answer. It runs on any `RowSource`: a station's log, a merged one, or the lab store.
public protocol Reading: Sendable {
    associatedtype Answer: Sendable
    /// Its entry in `ReadingName`, the one list.
    static var name: ReadingName { get }
    func read<Source: RowSource>(from source: Source) throws -> Answer
}

/// Every reading defined here, one case each: the list the parity suite
/// (Tests/LabStoreTests/ReadingParityTests.swift) runs on the lab store and on the merged log, so
/// a reading added here and not there fails to compile (its switch is exhaustive).
///
/// Not yet here, still one query per store (docs/architecture.md, "Readings"): `export`'s tables.
public enum ReadingName: String, CaseIterable, Sendable {
    /// `stats --by dog|session|sample|station`, with every filter: `StatsReading`.
    case stats
    /// `stats --guesses [--by session]`, with every filter: `GuessReading`.
    case guesses
    /// `stats --sources`, with every filter: `SourcesReading`.
    case sources
    /// `stats --familiar-novel`, with every filter: `FamiliarNovelReading`.
    case familiarNovel
    /// `stats --threshold [--threshold-by session|dog|conditions]`, with every filter: `ThresholdReading`.
    case threshold
    /// `report`, with every filter: `ReportReading`.
    case report
}
