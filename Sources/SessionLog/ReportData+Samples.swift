import GRDB

extension ReportData {
    /// The figures `stats --familiar-novel` and `stats --sources` give, for the report's dogs:
    /// the same counters over the same trials, in one pass (the report reads every trial).
    mutating func addSampleFigures(_ db: Database, _ filter: LogFilter) throws {
        var familiarNovel = FamiliarNovelCounter()
        var confound = ConfoundCounter()
        try LogReader.scanExposedTrials(db, filter) { exposed in
            familiarNovel.add(exposed)
            if exposed.inScope { confound.add(exposed.trial, dogId: exposed.dogId, dog: exposed.dog) }
        }
        for row in familiarNovel.rows { self.familiarNovel[row.dogId] = row }
        for row in try confound.rows(db) { self.confound[row.dogId, default: []].append(row) }
    }
}
