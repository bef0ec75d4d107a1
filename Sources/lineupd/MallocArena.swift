import Glibc

/// One malloc arena for the whole daemon, so that a station running a session every few
/// minutes for months does not grow (issue 24).
///
/// The hot thread locks the daemon's memory as it is touched (`mlockall` with MCL_FUTURE and
/// MCL_ONFAULT, `HotLoop.makeCurrentThreadRealtime`), so that a page fault cannot delay a
/// click. glibc gives threads arenas of their own (up to 8 a core), and gives a thread
/// arena's freed top back with `madvise(MADV_DONTNEED)`, which the kernel refuses on locked
/// pages: each such arena stays resident at the most it ever held. lineupd starts four threads
/// a session (each segment's hot loop and log feeder), which spread over a dozen arenas, and
/// each one's peak crept up session after session. The main arena gives its top back with
/// `brk`, which locked memory allows. Measured with `lineup-bench sessions --cycles 1000`
/// (debug build, as root so memory is locked): 12 arenas, +1.75 to +1.89 MB of anonymous
/// memory from the 100th session to the 1,000th, 2.5 MB resident in one arena that malloc
/// counted 1.6 MB; one arena, +0.86 MB. The rest was the log's page caches filling
/// (`StationService.logCacheKibibytes`) and graduation's array (`ProgramProgress.read`).
///
/// The hot path never allocates (`lineup-bench click` counts it), so sharing the one
/// arena's lock costs it nothing; the threads that do allocate (the control socket, the log's
/// feeder and writer) do so at a session's pace, not an edge's.
func useOneMallocArena() {
    // Swift's Glibc module leaves out malloc.h: mallopt is looked up in the C library itself.
    typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
    let mArenaMax: Int32 = -8  // M_ARENA_MAX in glibc's malloc.h
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "mallopt") else { return }
    // 0 only for a parameter glibc does not know; it takes M_ARENA_MAX at any positive value.
    _ = unsafeBitCast(symbol, to: Mallopt.self)(mArenaMax, 1)
}
