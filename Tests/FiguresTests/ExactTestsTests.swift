import Figures
import Testing

/// The exact tests behind the flags, from plain counts: a dog's exposure to a sample (novelty),
/// Fisher's exact test (familiar against novel) and the binomial tail (the handler's guesses).
@Suite struct ExactTestsTests {
    @Test func exposureCountsEarlierTrialsOfTheSameDog() {
        let exposures = Exposure.before([
            ExposureTrial(dogId: "rex", samples: ["t1", "c1"]),
            ExposureTrial(dogId: "aino", samples: ["t1", "c2"]),
            ExposureTrial(dogId: "rex", samples: ["t1", "c1", "c1"]),
            ExposureTrial(dogId: "rex", samples: ["t2", "c1"]),
        ])
        #expect(exposures[0] == [0, 0])
        // Another dog's trials do not count: t1 is novel to Aino.
        #expect(exposures[1] == [0, 0])
        #expect(exposures[2] == [1, 1, 1])
        // c1 stood twice in the third trial: one more trial, not two.
        #expect(exposures[3] == [0, 2])
    }

    /// Known values: R's `fisher.test(matrix(c(3, 1, 1, 3), 2))` (the lady tasting tea) gives
    /// 0.4857; Wikipedia's dieting example (1, 9 against 11, 3) gives 0.002759.
    @Test func fisherExactTestMatchesR() throws {
        #expect(abs(try #require(fisherExactTest(3, 1, 1, 3)) - 0.485714) < 1e-6)
        #expect(abs(try #require(fisherExactTest(1, 9, 11, 3)) - 0.0027594) < 1e-7)
        #expect(abs(try #require(fisherExactTest(5, 5, 5, 5)) - 1) < 1e-12)
        #expect(fisherExactTest(0, 0, 3, 4) == nil)
    }

    @Test("the exact binomial tail against sums done with rationals, large n included")
    func binomialTail() {
        #expect(abs(binomialUpperTail(successes: 3, trials: 5, probability: 0.2) - 0.05792) < 1e-14)
        #expect(abs(binomialUpperTail(successes: 10, trials: 10, probability: 0.2) - 1.024e-7) < 1e-20)
        // C(2000, 1000) overflows a double: only the log-space sum gets this right.
        #expect(abs(binomialUpperTail(successes: 1000, trials: 2000, probability: 0.5) - 0.5089195055729272) < 1e-10)
        #expect(binomialUpperTail(successes: 0, trials: 7, probability: 0.3) == 1)
        #expect(binomialUpperTail(successes: 1, trials: 7, probability: 0) == 0)
    }
}
