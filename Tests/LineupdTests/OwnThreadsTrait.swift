import TestThreads
import Testing

extension SuiteTrait where Self == OwnThreads {
    /// Runs each test of the suite off the cooperative pool (TestThreads' `OwnThreads`), as
    /// many at once as the machine has cores.
    static var ownThreads: Self { OwnThreads(slots: .perCore) }
}
