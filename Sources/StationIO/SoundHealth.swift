import Glibc

/// What the click path found wrong with the sound device. A clicker that stops clicking is the
/// worst failure a training station can have, and on some boards it is silent: on the Pi 5
/// with PCM512x I2S DACs the DMA can stay stopped after a stop, so writes take no frames or the
/// stream never plays what it took (raspberrypi/linux #7320, #7322).
public enum SoundFault: UInt8, Sendable, BitwiseCopyable, CaseIterable, CustomStringConvertible {
    /// A write of the click's first frames, to a freshly prepared stream, took none of them.
    case notTaken = 1
    /// The stream took the click's frames but did not play them: its delay had not fallen
    /// when they should have been playing.
    case stalled
    /// An error on the PCM the click path could not recover in place (a write refused after
    /// recovery, a vanished device, no device).
    case error

    /// Its name in the log (a `fault` event's `fault`) and in `status` (`soundFault`).
    public var name: String {
        switch self {
        case .notTaken: return "sound-not-taken"
        case .stalled: return "sound-stalled"
        case .error: return "sound-error"
        }
    }

    /// The fault `status` or the log names.
    public init?(name: String) {
        guard let fault = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = fault
    }

    public var description: String {
        switch self {
        case .notTaken: return "the sound device took none of the click's frames"
        case .stalled: return "the sound device took the click but did not play it (its stream did not advance)"
        case .error: return "the sound device failed"
        }
    }
}

/// One change of the sound's health, made on the hot thread (`ClickPlayer.soundReports`): the
/// first fault of a run of failing clicks, or the click that played again after it. A run of
/// failing clicks is one report, however long.
public struct SoundReport: Sendable, BitwiseCopyable, Equatable {
    public enum Kind: UInt8, Sendable, BitwiseCopyable { case failed, recovered }
    public var kind: Kind
    /// What failed (for `recovered`: the last fault of the run that ended).
    public var fault: SoundFault
    /// The error number, for `.error` (0 when there is none, as for a device not yet open).
    public var errno: Int32
    /// The edge of the click it was found at (CLOCK_MONOTONIC ns).
    public var clickEdge: UInt64
    /// When it was found.
    public var timestamp: UInt64
}

/// The click path's health, kept on the hot thread; what `status` reads of it, in atomics.
struct SoundHealth {
    /// Failed clicks in a row (0: healthy).
    var failingInARow = 0
    /// The last fault of the run going on.
    var fault: SoundFault = .error

    /// When the last click's stream is to be checked, or `.max`.
    var checkAt: UInt64 = .max
    /// The click's edge, and the frames its stream had queued: the delay just after the first
    /// write, plus the frames written since. A stream that plays has fewer queued at the check.
    var checkEdge: UInt64 = 0
    var queued = 0

    /// Whether the stream, seen at the check in `state` with `delay` frames queued, played
    /// anything of the click. A stream that ran dry (xrun after the click's last frame), or
    /// that was stopped, has played it; a running one must have fewer frames queued than it
    /// was given, or none (ALSA's `null` plays everything at once).
    func advanced(state: PCMState, delay: Int) -> Bool {
        switch state {
        case .running, .draining: return delay <= 0 || delay < queued
        default: return true
        }
    }
}
