import Figures
import ReadingRows

/// `stats --familiar-novel`: per dog (by name), sensitivity and specificity on the samples it had
/// met in an earlier trial and on those new to it, over the trials a filter selects; a sample's
/// exposure counts every trial of the dog before them (`OrderedTrialScan`), counted by
/// `FamiliarNovelCounter`.
public struct FamiliarNovelReading: Reading {
    public static let name = ReadingName.familiarNovel
    public var filter: LogFilter

    public init(_ filter: LogFilter = LogFilter()) { self.filter = filter }

    public func read<Source: RowSource>(from source: Source) throws -> [FamiliarNovelRow] {
        try source.readRows { rows in
            var counter = FamiliarNovelCounter()
            try OrderedTrialScan.scan(&rows, filter) { trial, context, inScope in
                counter.add(trial, dogId: context.dogId, dog: context.dog, inScope: inScope)
            }
            return counter.rows
        }
    }
}

extension RowSource {
    /// `stats --familiar-novel` on this log or store: `FamiliarNovelReading`.
    public func familiarNovelStats(_ filter: LogFilter = LogFilter()) throws -> [FamiliarNovelRow] {
        try FamiliarNovelReading(filter).read(from: self)
    }
}
