import Figures
import Testing

@Suite struct ProportionTests {
    @Test func ehmannSensitivityAndSpecificity() {
        // Ehmann 2012: 71 of 100 targets found, 372 of 400 controls passed.
        let sensitivity = Proportion(successes: 71, trials: 100)
        let specificity = Proportion(successes: 372, trials: 400)
        #expect(sensitivity.value == 0.71)
        #expect(specificity.value == 0.93)
        // Hand-computed Wilson bounds (z = 1.96): 0.6146 to 0.7899 and 0.9007 to 0.9511.
        #expect(abs((sensitivity.lower ?? 0) - 0.6146) < 0.0005)
        #expect(abs((sensitivity.upper ?? 0) - 0.7899) < 0.0005)
        #expect(abs((specificity.lower ?? 0) - 0.9007) < 0.0005)
        #expect(abs((specificity.upper ?? 0) - 0.9511) < 0.0005)
    }

    @Test func noTrialsHasNoValue() {
        let empty = Proportion(successes: 0, trials: 0)
        #expect(empty.value == nil && empty.lower == nil && empty.upper == nil)
    }

    @Test func boundsStayInsideZeroAndOne() {
        #expect(Proportion(successes: 0, trials: 5).lower == 0)
        #expect(Proportion(successes: 5, trials: 5).upper == 1)
    }
}
