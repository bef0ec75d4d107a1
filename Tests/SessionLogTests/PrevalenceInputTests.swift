import Testing

@testable import SessionLog

/// The prevalence the researcher types (`stats --prevalence`), checked before any figure.
struct PrevalenceInputTests {
    @Test("a prevalence outside (0, 1) is one message naming the flag")
    func badPrevalence() throws {
        for bad in [0, 1, -0.2, 1.5, Double.nan, Double.infinity] {
            #expect(throws: SessionLogError.self) { try checkPrevalence(bad) }
            do {
                _ = try checkPrevalence(bad)
            } catch {
                #expect("\(error)".hasPrefix("--prevalence "), "\(error)")
                #expect("\(error)".contains("strictly between 0 and 1"))
            }
        }
        #expect(try checkPrevalence(0.01) == 0.01)
    }
}
