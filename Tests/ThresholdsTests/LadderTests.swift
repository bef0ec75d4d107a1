import Testing

@testable import Thresholds

/// The ladder a constant names is the one the checked initializer builds from its description.
@Suite struct LadderTests {
    @Test func theKnownHalfLogLadderIsTheCheckedOne() throws {
        let checked = try DilutionLadder(weakest: 1e-10, rungs: 16, stepsPerDecade: 2)
        #expect(DilutionLadder.halfLog16From1e10 == checked)
        #expect(DilutionLadder.halfLog16From1e10.count == 16)
        // And it passes every check the throwing initializer makes.
        #expect(try DilutionLadder(concentrations: DilutionLadder.halfLog16From1e10.concentrations) == checked)
    }
}
