import Figures
import GRDB
import GRDBSQLite
import TrainingEngine

extension LogReader {
    /// Per dog (by name), sensitivity and specificity on familiar and on novel samples of the
    /// trials `filter` chooses; novelty counts every trial of the log before them.
    public func familiarNovelStats(_ filter: LogFilter = LogFilter()) throws -> [FamiliarNovelRow] {
        try read { db in
            // The report's ordered pass (the same query, order and decoder): every trial of the
            // chosen dog, or of every dog, counts toward exposure; the filter's are counted.
            var counter = FamiliarNovelCounter()
            try Self.scanReportTrials(db, filter) { trial, dogId, dog, _, inScope, _ in
                counter.add(trial, dogId: dogId, dog: dog, inScope: inScope)
            }
            return counter.rows
        }
    }
}
