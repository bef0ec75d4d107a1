import Foundation
import Glibc

/// Where the page handles a login, up to its answer: a thread of its own at nice 10, not Swift's
/// pool, which serves the pages of those logged in. A login is work anyone on the network may
/// ask for without an account; a flood of them (issue 33: 250 addresses, every refusal read,
/// limited and answered) then runs after the logged-in trainer's page and Click whenever both
/// want a core, and never holds the pool's threads. The password check itself runs on
/// `PasswordChecks`' thread; this one reads the login, applies the login limit and answers.
public final class LoginThread: TaskExecutor, @unchecked Sendable {
    /// Below the page's threads (0) and above nothing else lineup-web runs but the password
    /// checks (5, within their own budget): a login waits for the page, not for bcrypt.
    public static let nice: Int32 = 10

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var started = false

    public init() {}

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        startIfNeeded()
        condition.signal()
        condition.unlock()
    }

    /// Started at the first login: a test's page that never logs in costs no thread.
    private func startIfNeeded() {
        guard !started else { return }
        started = true
        let thread = Thread { [self] in
            // On Linux the nice value is each thread's own: this lowers this thread only.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Self.nice)
            while true {
                condition.lock()
                while jobs.isEmpty { condition.wait() }
                let job = jobs.removeFirst()
                condition.unlock()
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }
        thread.name = "lineup-web login"
        thread.start()
    }
}
