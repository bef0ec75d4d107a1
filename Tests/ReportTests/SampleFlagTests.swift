import Report
import Testing
import TrainingEngine

/// The report's sample flag, each of its three conditions at a hand-computed boundary.
@Suite struct SampleFlagTests {
    @Test func aControlTheDogsFindIsFlagged() {
        // 12 of 40 (Wilson 95 %: 18.1-45.6 %) against 5 % for the rest; odds 0.43 against 0.05.
        #expect(SampleFlag.flags(rate: Proportion(successes: 12, trials: 40), rest: 0.05))
    }

    @Test func fewerThanFivePresentationsAreNeverFlagged() {
        #expect(!SampleFlag.flags(rate: Proportion(successes: 4, trials: 4), rest: 0))
        #expect(SampleFlag.flags(rate: Proportion(successes: 5, trials: 5), rest: 0))
    }

    @Test func theIntervalMustClearTheRest() {
        // 3 of 10: the lower end is 10.8 %. Odds 0.43 are over twice 0.15's (0.18) either way.
        #expect(!SampleFlag.flags(rate: Proportion(successes: 3, trials: 10), rest: 0.15))
        #expect(SampleFlag.flags(rate: Proportion(successes: 3, trials: 10), rest: 0.10))
    }

    @Test func aSmallExcessOnABigLogIsNotFlagged() {
        // 400 of 1000 (lower end 37 %) is surely above 30 %, but its odds (0.67) are not twice
        // the rest's (0.43 × 2 = 0.86); 460 of 1000 (odds 0.85) is not either, 470 (0.89) is.
        #expect(!SampleFlag.flags(rate: Proportion(successes: 400, trials: 1000), rest: 0.3))
        #expect(!SampleFlag.flags(rate: Proportion(successes: 460, trials: 1000), rest: 0.3))
        #expect(SampleFlag.flags(rate: Proportion(successes: 470, trials: 1000), rest: 0.3))
    }
}
