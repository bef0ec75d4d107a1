/// The feeder: a relay or a treat dispenser's trigger on an output line, pulsed after each
/// click (Edwards et al. 2019's automatic feeder after an indication), so an unattended rig
/// rewards by machine. The same on/off line as the buzzer's.
public typealias FeederLine = BuzzerLine

/// One pulse of the feeder: the click it followed, when its line went on and off.
public struct FeederPulse: Sendable, BitwiseCopyable, Equatable {
    /// The kernel timestamp of the edge whose click this pulse follows.
    public var clickEdge: UInt64
    /// When the line was switched on (CLOCK_MONOTONIC).
    public var onAt: UInt64
    /// When the line was switched off; 0 when it was never on (`failed`).
    public var offAt: UInt64
    /// The line could not be set: the dog was not fed by machine for this click.
    public var failed: Bool

    public init(clickEdge: UInt64, onAt: UInt64, offAt: UInt64, failed: Bool = false) {
        self.clickEdge = clickEdge
        self.onAt = onAt
        self.offAt = offAt
        self.failed = failed
    }
}

/// When the feeder's line goes on and off: pure (times come in), so it is tested in virtual
/// time, and the hot loop folds its deadline into its own poll timeout. The loop's own
/// deadline rather than a thread of the feeder's: it already wakes for the buzzer's and the
/// debouncer's deadlines without allocating or locking, and a second thread woken per click
/// would need a wake-up of its own for no gain in timing (a pulse is a relay's, milliseconds).
public struct FeederSchedule: Sendable {
    public let delay: UInt64
    public let width: UInt64
    /// When the pending pulse starts (.max: none pending).
    public private(set) var onAt: UInt64 = .max
    /// When the pulse now on ends (.max: the line is off).
    public private(set) var offAt: UInt64 = .max
    private var pulse = FeederPulse(clickEdge: 0, onAt: 0, offAt: 0)

    public enum Step: Equatable, Sendable {
        case none
        /// Switch the line on now.
        case switchOn
        /// Switch the line off now; the pulse is complete once `offAt` is filled in.
        case switchOff
    }

    /// - Parameters:
    ///   - delay: from the click to the line going on (ns).
    ///   - width: how long the line stays on (ns); at least 1.
    public init(delayNanoseconds delay: UInt64, widthNanoseconds width: UInt64) {
        self.delay = delay
        self.width = max(1, width)
    }

    /// The earliest time `due(now:)` has something to do, or `.max`.
    public var nextDeadline: UInt64 { min(onAt, offAt) }

    /// A click sounded for the edge at `clickEdge`, at `now`. One pulse at a time (the
    /// project's rule): a click while a pulse is pending or on is not fed again, since a
    /// dispenser's trigger held or retriggered mid-pulse drops one treat, not two. Returns
    /// whether a pulse was scheduled.
    public mutating func clicked(clickEdge: UInt64, at now: UInt64) -> Bool {
        guard onAt == .max && offAt == .max else { return false }
        onAt = now &+ delay
        pulse = FeederPulse(clickEdge: clickEdge, onAt: 0, offAt: 0)
        return true
    }

    /// What to do with the line at `now`.
    public mutating func due(now: UInt64) -> Step {
        if offAt <= now {
            offAt = .max
            return .switchOff
        }
        if onAt <= now {
            onAt = .max
            return .switchOn
        }
        return .none
    }

    /// The line went on at `at` (or could not be set): the pulse ends `width` later. A line
    /// that could not be set is not waited on; its pulse is returned, failed, to be logged.
    public mutating func switchedOn(at: UInt64, ok: Bool) -> FeederPulse? {
        pulse.onAt = at
        guard ok else {
            pulse.failed = true
            return pulse
        }
        offAt = at &+ width
        return nil
    }

    /// The line went off at `at`: the whole pulse, to be logged.
    public mutating func switchedOff(at: UInt64) -> FeederPulse {
        pulse.offAt = at
        return pulse
    }

    /// The line is on now (between `switchedOn` and the pulse's end).
    public var isOn: Bool { offAt != .max }
}
