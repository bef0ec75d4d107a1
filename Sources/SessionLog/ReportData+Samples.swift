import GRDB

extension ReportData {
    /// The figures `stats --familiar-novel` and `stats --sources` give, for the report's dogs:
    /// the same functions over the same trials.
    mutating func addSampleFigures(_ db: Database, _ filter: LogFilter) throws {
        for row in try LogReader.familiarNovelStats(db, filter) { familiarNovel[row.dogId] = row }
        for row in try LogReader.confoundStats(db, filter) { confound[row.dogId, default: []].append(row) }
    }
}
