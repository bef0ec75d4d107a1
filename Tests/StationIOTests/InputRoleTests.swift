import Testing

@testable import StationIO

/// An input line's role as `lineupctl selftest` prints it: a station by its board's name, as
/// everywhere a person reads one (issue 32: it printed `station 1` beside `→ station North`).
@Suite struct InputRoleTests {
    @Test func aStationIsNamedAsTheBoardNamesIt() {
        let names = ["North", "East", "West"]
        #expect(InputRole.station(0).described(stationNames: names) == "station North")
        #expect(InputRole.station(2).described(stationNames: names) == "station West")
        #expect(InputRole.clicker.described(stationNames: names) == "clicker button")
        // A board that named fewer stations than it has lines: the number stands in.
        #expect(InputRole.station(3).described(stationNames: names) == "station 4")
    }
}
