import CStationShim
import Glibc

/// The station's clock: CLOCK_MONOTONIC in nanoseconds, the clock the kernel stamps GPIO
/// edges with and ALSA is asked to stamp its trigger with, so the three can be subtracted.
public enum MonotonicClock {
    @inline(__always)
    public static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// Sleeps until `deadline` on the monotonic clock (for simulated hardware, never the hot path).
    public static func sleep(until deadline: UInt64) {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }
}

/// Wall-clock time in nanoseconds since 1970, recorded beside monotonic times so logs
/// from several stations can be merged.
public enum WallClock {
    public static func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) &* 1_000_000_000 &+ Int64(ts.tv_nsec)
    }
}

/// A non-blocking eventfd, or -errno (Glibc's module does not export eventfd).
public func makeEventFD() -> Int32 { lineup_eventfd() }
