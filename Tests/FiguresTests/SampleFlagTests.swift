import Figures
import Testing

/// The sample flag the report draws (`SampleFlag`, docs/figures.md "A flagged sample"), each of
/// its conditions at a boundary computed by hand (Fisher's p by the hypergeometric sum).
@Suite struct SampleFlagTests {
    func flags(_ x: Int, _ n: Int, others y: Int, _ m: Int) -> Bool {
        SampleFlag.judge(Proportion(successes: x, trials: n), others: Proportion(successes: y, trials: m)).flagged
    }

    @Test func aControlTheDogsFindIsFlagged() {
        // 12 of 40 against 10 of 200: p = 1.8 × 10⁻⁵, odds 0.43 against 0.053.
        #expect(flags(12, 40, others: 10, 200))
    }

    @Test func fewPresentationsOrFewIndicationsAreNeverFlagged() {
        // 3 of 10 against 0 of 40: p = C(10,3)/C(50,3) = 0.0061, flagged; 9 presentations or 2
        // indications are too few, whatever the test says.
        #expect(flags(3, 10, others: 0, 40))
        #expect(!flags(3, 9, others: 0, 400))
        #expect(!flags(2, 10, others: 0, 400))
    }

    @Test func theTestMustClearItsLevel() {
        // 3 of 10 against 0 of 30: p = C(10,3)/C(40,3) = 0.0121, above 0.01; against 0 of 40 it
        // is 0.0061 (below).
        #expect(!flags(3, 10, others: 0, 30))
        // 20 of 40 against 60 of 200: odds 2.3 times theirs, but p = 0.013.
        #expect(!flags(20, 40, others: 60, 200))
    }

    @Test func aSmallExcessOnABigLogIsNotFlagged() {
        // 400 of 1000 against 300 of 1000: p ≈ 1.7 × 10⁻⁶, but odds 0.67 are not twice 0.43.
        #expect(!flags(400, 1000, others: 300, 1000))
        #expect(flags(470, 1000, others: 300, 1000))
    }
}
