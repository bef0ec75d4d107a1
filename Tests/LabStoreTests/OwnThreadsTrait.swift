import TestThreads
import Testing

extension SuiteTrait where Self == OwnThreads {
    /// Runs each test of the suite off the cooperative pool (TestThreads' `OwnThreads`), all at
    /// once unless `LINEUP_TESTS_AT_ONCE` bounds them.
    static var ownThreads: Self { OwnThreads(slots: .allAtOnce) }
}
