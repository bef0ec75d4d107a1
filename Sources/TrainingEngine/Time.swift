// Time in the engine is monotonic nanoseconds handed in by the caller (the kernel's edge
// timestamps on the board, a virtual clock in tests and simulations). The engine never reads
// a clock, so every session can be replayed exactly.

/// Monotonic time or a duration, in nanoseconds.
public typealias Nanoseconds = UInt64

/// Nanoseconds from seconds, rounded; negative or non-finite values give zero, and a time
/// beyond `Nanoseconds.max` (about 584 years) gives `.max`: the conversion itself would trap.
@inlinable
public func nanoseconds(seconds: Double) -> Nanoseconds {
    guard seconds.isFinite, seconds > 0 else { return 0 }
    return Nanoseconds(exactly: (seconds * 1e9).rounded()) ?? .max
}

/// Nanoseconds from milliseconds, rounded; negative or non-finite values give zero.
@inlinable
public func nanoseconds(milliseconds: Double) -> Nanoseconds {
    nanoseconds(seconds: milliseconds / 1000)
}

/// Time from `start` to `end`, or zero when `end` is earlier. Edges of different lines can
/// reach the engine out of their timestamps' order (libgpiod v1 gives each line its own
/// descriptor, read one after another): an unsigned wrap would read as a whole hold reached or
/// a beam stuck for centuries.
@inlinable
public func elapsed(from start: Nanoseconds, to end: Nanoseconds) -> Nanoseconds {
    end > start ? end - start : 0
}
