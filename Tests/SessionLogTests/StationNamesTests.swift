import SessionLog
import Testing

/// One name per station where a person reads it (issue 32): the board's names as the session
/// logged them, the number where it logged none.
@Suite struct StationNamesTests {
    @Test func aServedSessionsNamesFollowTheBoardsOrderWithItsUnusedStations() {
        // Stations 1, 2 and 4 of a five-station board in use; 3 and 5 left out.
        let names = StationNames(
            settings: #"{"stations":"North,East,West","unused_stations":"South,Gate"}"#, numbers: [4, 1, 2])
        #expect([1, 2, 3, 4, 5].map { names.word($0) } == ["North", "East", "South", "West", "Gate"])
    }

    @Test func aSimulatedBlockIsLetteredAndALogWithoutNamesKeepsNumbers() {
        let simulated = StationNames(settings: #"{"simulated":"true"}"#, numbers: [1, 2, 3, 4, 5])
        #expect([1, 5].map { simulated.word($0) } == ["A", "E"])
        let older = StationNames(settings: #"{"seed":"4"}"#, numbers: [1, 2])
        #expect(older.name(1) == nil)
        #expect(older.word(2) == "2")
        // A list that does not fit the layout names nothing rather than the wrong station.
        let misfit = StationNames(settings: #"{"stations":"A,B"}"#, numbers: [1, 2, 3])
        #expect(misfit.name(1) == nil)
    }
}
