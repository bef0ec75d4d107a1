import Figures
import StationConfig
import Testing

/// One name per station where a person reads it (issue 32): the board's names as the session
/// logged them, the board's default names where it logged none.
@Suite struct StationNamesTests {
    @Test func aServedSessionsNamesFollowTheBoardsOrderWithItsUnusedStations() {
        // Stations 1, 2 and 4 of a five-station board in use; 3 and 5 left out.
        let names = StationNames(
            settings: #"{"stations":"North,East,West","unused_stations":"South,Gate"}"#, numbers: [4, 1, 2])
        #expect([1, 2, 3, 4, 5].map { names.name($0) } == ["North", "East", "South", "West", "Gate"])
    }

    @Test func aSessionThatLoggedNoNamesHasTheBoardsDefaultNames() {
        // A simulated block logged before names were kept, and a session with no names.
        let simulated = StationNames(settings: #"{"simulated":"true"}"#, numbers: [1, 2, 3, 4, 5])
        #expect([1, 5].map { simulated.name($0) } == ["A", "E"])
        let older = StationNames(settings: #"{"seed":"4"}"#, numbers: [1, 2])
        #expect(older.name(2) == "B" && !older.logged(2))
        #expect(StationNames(settings: nil, numbers: [1]).station(1) == NamedStation(number: 1, name: "A"))
        // A list that does not fit the layout is not used: the defaults, not a wrong station.
        let misfit = StationNames(settings: #"{"stations":"North,East"}"#, numbers: [1, 2, 3])
        #expect(misfit.name(1) == "A" && !misfit.logged(1))
        // The default is the board file's for a station it does not name.
        #expect(StationSpec.defaultName(number: 26) == "Z" && StationSpec.defaultName(number: 27) == "S27")
    }
}
