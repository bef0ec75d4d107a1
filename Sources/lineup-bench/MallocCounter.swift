import Glibc

/// ordo-one's malloc interposer, reached at run time through its C API.
///
/// lineup-bench does not link it (lineupctl once did, and an installed lineupctl then needed
/// that Swift shared library beside it: the README's `install` left a lineupctl on the board
/// that could not start). The two benchmarks that count allocations (`click`, `engine`)
/// re-run themselves with
/// the library preloaded from the build directory, where SwiftPM builds it (the
/// `lineup-malloc-check` target depends on it); anywhere else they report "not counted".
struct MallocCounter {
    typealias Hook = @convention(c) (Int) -> Void
    private typealias Void0 = @convention(c) () -> Void
    private typealias Stats =
        @convention(c) (
            UnsafeMutablePointer<Int64>?, UnsafeMutablePointer<Int64>?, UnsafeMutablePointer<Int64>?,
            UnsafeMutablePointer<Int64>?, UnsafeMutablePointer<Int64>?, UnsafeMutablePointer<Int64>?
        ) -> Void
    private typealias SetHook = @convention(c) (Hook?) -> Void

    private let resetFunction: Void0
    private let enableFunction: Void0
    private let disableFunction: Void0
    private let statsFunction: Stats
    private let setHookFunction: SetHook

    /// The interposer if it is loaded in this process (preloaded), else nil.
    static let loaded: MallocCounter? = {
        func symbol<T>(_ name: String, as: T.Type) -> T? {
            guard let pointer = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
            return unsafeBitCast(pointer, to: T.self)
        }
        // RTLD_DEFAULT is the null handle: the process's global scope, where LD_PRELOAD puts it.
        guard let reset = symbol("malloc_interposer_reset", as: Void0.self),
            let enable = symbol("malloc_interposer_enable", as: Void0.self),
            let disable = symbol("malloc_interposer_disable", as: Void0.self),
            let stats = symbol("malloc_interposer_get_stats", as: Stats.self),
            let setHook = symbol("malloc_interposer_set_allocation_hook", as: SetHook.self)
        else { return nil }
        return MallocCounter(
            resetFunction: reset, enableFunction: enable, disableFunction: disable, statsFunction: stats,
            setHookFunction: setHook)
    }()

    func reset() { resetFunction() }
    /// Counts allocations from now on (one atomic store).
    func start() { enableFunction() }
    func stop() { disableFunction() }
    func setHook(_ hook: Hook?) { setHookFunction(hook) }

    var mallocCount: Int64 {
        // It writes all six counters: none may be null.
        var count: Int64 = 0
        var bytes: Int64 = 0
        var small: Int64 = 0
        var large: Int64 = 0
        var frees: Int64 = 0
        var freedBytes: Int64 = 0
        statsFunction(&count, &bytes, &small, &large, &frees, &freedBytes)
        return count
    }

    /// Whether it really sees this process's mallocs (it must come before libc's).
    func counts() -> Bool {
        reset()
        start()
        // strdup allocates inside libc, which the optimiser cannot see through and remove.
        let p = strdup(CommandLine.arguments.first ?? "lineup-bench")
        free(p)
        stop()
        return mallocCount > 0
    }

    /// The interposer, counting, after re-running this command with the library preloaded if
    /// needed; or why allocations cannot be counted. Returns only if it could not (or need not)
    /// re-run.
    static func preloaded() -> Result<MallocCounter, CountingUnavailable> {
        if let loaded, loaded.counts() { return .success(loaded) }
        if getenv("LINEUP_BENCH_PRELOADED") != nil {
            return .failure(CountingUnavailable("the malloc interposer is preloaded but counts nothing"))
        }
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return .failure(CountingUnavailable("cannot find the executable to re-run it")) }
        let exe = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let dir = exe.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let library = dir + "/libMallocInterposerSwift.so"
        guard access(library, R_OK) == 0 else {
            return .failure(CountingUnavailable("\(library) not found (it is built by swift build)"))
        }
        setenv("LD_PRELOAD", library, 1)
        setenv("LINEUP_BENCH_PRELOADED", "1", 1)
        let args = CommandLine.arguments.map { strdup($0) } + [nil]
        execv(exe, args)
        return .failure(CountingUnavailable("re-running with LD_PRELOAD failed (errno \(errno))"))
    }
}

/// Why allocations are not counted in this run.
struct CountingUnavailable: Error {
    var reason: String
    init(_ reason: String) { self.reason = reason }
}
