import Foundation
import ReadingRows
import Testing
import TrainingEngine

@testable import SessionLog

/// Listings a person reads are newest first when asked (lineupctl's default), so a limit
/// keeps the latest rows; statistics and exports read oldest first.
@Suite struct ListingTests {
    @Test func newestFirstAndTheLimitKeepsTheLatest() throws {
        let fixture = try HandFixture()
        let reader = fixture.log.reader
        var newest = LogFilter()
        newest.newestFirst = true
        #expect(try reader.trials().map(\.number) == [1, 2, 3, 4, 5])
        #expect(try reader.trials(newest).map(\.number) == [5, 4, 3, 2, 1])
        #expect(try reader.trials(newest, limit: 2).map(\.number) == [5, 4])
        #expect(try reader.trials(limit: 2).map(\.number) == [1, 2])
        let events = try reader.events(newest, limit: 2).map(\.seq)
        let all = try reader.events().map(\.seq)
        #expect(events == Array(all.suffix(2).reversed()))
        // Two sessions: the later one first.
        let later = SessionRecord(dogId: fixture.dog.id, mode: .automated)
        try fixture.log.append([later])
        let sessions = try reader.sessions(newest).map(\.id)
        #expect(sessions == [later.id.uuidString.lowercased(), fixture.session.id.uuidString.lowercased()])
        #expect(try reader.sessions().map(\.id) == sessions.reversed())
    }
}
