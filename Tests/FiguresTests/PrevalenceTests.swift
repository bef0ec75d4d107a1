import Figures
import Testing

/// PPV and NPV at a prevalence (docs/figures.md, "PPV and NPV at a prevalence"): its worked
/// example and its edges (the message for a prevalence outside (0, 1) is SessionLog's).
struct PrevalenceTests {
    @Test("the worked example: Se 45/50, Sp 95/100 at a prevalence of 1 %")
    func workedExample() throws {
        let v = try #require(
            predictiveValues(
                sensitivity: Proportion(successes: 45, trials: 50), specificity: Proportion(successes: 95, trials: 100),
                prevalence: 0.01))
        // Computed apart (Python, statistics.NormalDist) from the formulas of docs/figures.md.
        #expect(abs(predictiveValueZ - 2.2364766445577895) < 1e-8)
        #expect(abs(try #require(v.ppv) - 0.15384615384615374) < 1e-12)
        #expect(abs(try #require(v.ppvLower) - 0.05891584814330381) < 1e-8)
        #expect(abs(try #require(v.ppvUpper) - 0.33512185215680146) < 1e-8)
        #expect(abs(try #require(v.npv) - 0.9989378651088688) < 1e-12)
        #expect(abs(try #require(v.npvLower) - 0.9973115755911193) < 1e-8)
        #expect(abs(try #require(v.npvUpper) - 0.9995998421412144) < 1e-8)
    }

    @Test("the lineup's own PPV is found again at the lineup's prevalence")
    func lineupPrevalence() throws {
        // 40 targets (36 hit) and 160 controls (16 alerted): at prevalence 40/200 Bayes' theorem
        // gives back hits / indications = 36 / 52.
        let v = try #require(
            predictiveValues(
                sensitivity: Proportion(successes: 36, trials: 40),
                specificity: Proportion(successes: 144, trials: 160), prevalence: 0.2))
        #expect(abs(try #require(v.ppv) - 36.0 / 52) < 1e-12)
        #expect(try #require(v.ppvLower) < 36.0 / 52)
        #expect(try #require(v.ppvUpper) > 36.0 / 52)
    }

    @Test("undefined where Bayes' theorem divides by nothing, and nil without counts")
    func edges() throws {
        // Se 0 and Sp 1: no indication is expected at all, so PPV has no value; its interval has.
        let v = try #require(
            predictiveValues(
                sensitivity: Proportion(successes: 0, trials: 10), specificity: Proportion(successes: 10, trials: 10),
                prevalence: 0.5))
        #expect(v.ppv == nil)
        #expect(v.ppvLower == 0)
        #expect(try #require(v.ppvUpper) > 0)
        #expect(
            predictiveValues(
                sensitivity: Proportion(successes: 0, trials: 0), specificity: Proportion(successes: 3, trials: 4),
                prevalence: 0.1) == nil)
    }
}
