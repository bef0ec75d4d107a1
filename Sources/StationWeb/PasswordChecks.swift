import Foundation
import Glibc

/// The page's password checks (bcrypt, about 0.1 s of a Pi's core each): one at a time, on a
/// thread of their own at a low priority (`nice`), resting after each check `defaultRest` times
/// as long as it used the core, so all of them together take at most a fifth of one core and
/// never the page's threads.
/// A flood of logins then waits here, or is refused when `waitingLimit` are already waiting,
/// while the pages of those logged in and the click path keep their cores (issue 33: 250
/// addresses sending logins kept bcrypt on every core, and the page's Click went from 2 ms
/// to 360 ms). A name that does not exist waits in the same line and costs the same check
/// (`UserStore.check`), so its time tells nothing from outside.
///
/// A browser the page remembers for the name it logs in as goes in a line of its own, served
/// first: a flood of strangers' logins delays a known browser by at most one check.
public final class PasswordChecks: @unchecked Sendable {
    /// Checks waiting in each line; one more is refused at once (503, Retry-After).
    public let waitingLimit: Int
    /// Rest after each check, as a multiple of the processor time it used. Processor time, not
    /// the time it took: on a busy board a check that waited seconds for a core used no more of
    /// it, and resting that long too made the next login wait twice over.
    public let rest: Double
    /// The checks' budget: 4, at most a fifth of one core for every login there is, wanted or
    /// not. Half a core (a rest of 1) left the page's median loads twice as slow under the
    /// 250-address login flood as a tenth did (19.4 and 18.2 ms against 8.5 and 11.4 ms, with
    /// lineup-web's processor use 0.61 and 0.54 cores against 0.40, load 19; docs/web.md). A
    /// check itself is not slowed: a login alone on the station is checked at once, and only the
    /// next one waits out the rest (0.4 s after a Pi's 0.1 s check).
    public static let defaultRest = 4.0

    /// The checks thread's nice value: below the page's threads (0), so they come first when
    /// both want a core, but not so far below that a trainer's login starves while lineup-web's
    /// own threads are busy (in the unit, CPUWeight sets lineup-web's share of the board and the
    /// nice value orders its threads within it). Measured with two busy loops at nice 0 beside
    /// lineup-web (debug, load 19): a right password took 4.5 to 8.1 s at nice 19, 3.1 to 6.7 s
    /// at 10, 1.1 to 1.9 s at 5, 1.1 to 1.3 s at 0; under the 250-address login flood the page's
    /// median was 17 ms at 5 and 14 ms at 19 (docs/web.md, "Password checks"). The rest after
    /// each check bounds what the checks take whatever their priority.
    public static let nice: Int32 = 5

    private let condition = NSCondition()
    private var remembered: [() -> Void] = []
    private var others: [() -> Void] = []
    private var started = false

    /// `rest` nil: `defaultRest`. Decided here, not in a default argument: Swift copies a default
    /// argument's value into each caller, and an incremental build kept the old one there.
    public init(waitingLimit: Int = 32, rest: Double? = nil) {
        self.waitingLimit = waitingLimit
        self.rest = rest ?? Self.defaultRest
    }

    /// `work`'s result once its turn came, or nil when its line was full (nothing was run).
    public func run<T: Sendable>(remembered isRemembered: Bool, _ work: @escaping @Sendable () -> T) async -> T? {
        await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
            condition.lock()
            defer { condition.unlock() }
            let count = isRemembered ? remembered.count : others.count
            guard count < waitingLimit else {
                continuation.resume(returning: nil)
                return
            }
            let job = { continuation.resume(returning: work()) }
            if isRemembered { remembered.append(job) } else { others.append(job) }
            startIfNeeded()
            condition.signal()
        }
    }

    /// Whether a check in that line would be refused now (its line full).
    public func isFull(remembered isRemembered: Bool) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return (isRemembered ? remembered.count : others.count) >= waitingLimit
    }

    /// Checks waiting now, in both lines.
    public var waiting: Int {
        condition.lock()
        defer { condition.unlock() }
        return remembered.count + others.count
    }

    private func startIfNeeded() {
        guard !started else { return }
        started = true
        let thread = Thread { [self] in
            // On Linux the nice value is each thread's own: this lowers this thread only.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Self.nice)
            while true {
                condition.lock()
                while remembered.isEmpty && others.isEmpty { condition.wait() }
                let job = remembered.isEmpty ? others.removeFirst() : remembered.removeFirst()
                condition.unlock()
                let start = Self.threadCPUSeconds()
                job()
                let used = Self.threadCPUSeconds() - start
                if rest > 0 { Thread.sleep(forTimeInterval: used * rest) }
            }
        }
        thread.name = "lineup-web logins"
        thread.start()
    }

    /// Processor time this thread has used, in seconds.
    public static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
