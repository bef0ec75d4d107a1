import MallocInterposerSwift

#if canImport(Glibc)
    import Glibc
#endif

// Whether ordo-one's malloc interposer counts this process's allocations: linked, it must
// still come before libc's malloc, which only LD_PRELOAD guarantees. Exit 0 when it counts.
MallocInterposerSwift.initialize()
MallocInterposerSwift.hook()
// strdup allocates inside libc, where the optimiser cannot remove it.
let copy = strdup(CommandLine.arguments.first ?? "lineup-malloc-check")
free(copy)
MallocInterposerSwift.unhook()
let count = MallocInterposerSwift.getStatistics().mallocCount
print("malloc interposer: \(count > 0 ? "counts allocations" : "counts nothing") (\(count) counted)")
exit(count > 0 ? 0 : 1)
