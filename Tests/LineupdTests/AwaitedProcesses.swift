import Foundation

// The test runner has one thread per core (two on the shared build machine)
// for every test at once, so a test that blocks one on a child process for seconds holds the
// other tests back. These run the same blocking helpers on a thread of their own and await
// them: the runner's threads stay free while a simulated block runs. Checks stay in the test.

/// `work` on a thread of its own, awaited.
func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// `lineupd(_:in:)`, awaited.
func lineupdAwaited(_ arguments: [String], in directory: String? = nil) async throws -> (
    status: Int32, stdout: String, stderr: String
) {
    try await onOwnThread { try lineupd(arguments, in: directory) }
}

/// `runBuilt(_:_:environment:directory:)`, awaited.
func runBuiltAwaited(
    _ tool: String, _ arguments: [String], environment: [String: String] = [:], directory: String? = nil
) async throws -> (status: Int32, stdout: String, stderr: String) {
    try await onOwnThread { try runBuilt(tool, arguments, environment: environment, directory: directory) }
}

/// `eventually(_:_:)`, awaited: the condition is polled on a thread of its own.
func eventuallyAwaited(_ seconds: Double, _ condition: @escaping @Sendable () -> Bool) async -> Bool {
    (try? await onOwnThread { eventually(seconds, condition) }) ?? false
}
