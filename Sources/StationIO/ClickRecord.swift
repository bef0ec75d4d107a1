import Glibc

/// What the station keeps of every click: enough to recover its onset from the log.
public struct ClickRecord: Sendable, Hashable, BitwiseCopyable {
    /// The triggering edge's kernel timestamp (CLOCK_MONOTONIC ns).
    public var edgeTimestamp: UInt64
    /// When ALSA had accepted the click's first frames.
    public var handedTimestamp: UInt64
    /// ALSA's trigger timestamp: when the stream started, so when the click's first frame
    /// began to play (the stream is stopped between clicks). 0 when the device gives none.
    public var triggerTimestamp: UInt64
    /// The delay ALSA reported just after the first write, in frames.
    public var delayFrames: Int32
    public var rate: UInt32
    /// Underruns or suspends recovered from while writing this click.
    public var recoveries: UInt8

    /// Edge to samples accepted by ALSA: what `lineup-bench click` measures.
    public var handedLatency: UInt64 { handedTimestamp &- edgeTimestamp }

    /// Edge to the stream's start: the click's onset as far as software can see it. Falls
    /// back to the handed time when the device reports no trigger timestamp.
    public var onsetLatency: UInt64 {
        triggerTimestamp >= edgeTimestamp && triggerTimestamp != 0 ? triggerTimestamp - edgeTimestamp : handedLatency
    }
}

/// Why a reward could not sound.
public enum ClickFailure: Sendable, Hashable, BitwiseCopyable, CustomStringConvertible {
    /// The audio device is gone (unplugged) or not yet reopened.
    case deviceUnavailable
    /// ALSA refused the write with this error number, after recovery was tried.
    case writeFailed(errno: Int32)
    /// The device took none of the click's frames (`SoundFault.notTaken`).
    case notTaken

    public var description: String {
        switch self {
        case .deviceUnavailable: return "audio device unavailable"
        case .writeFailed(let e): return "write failed: \(String(cString: strerror(e)))"
        case .notTaken: return "the audio device took none of the click's frames"
        }
    }
}

public enum ClickOutcome: Sendable, Hashable, BitwiseCopyable {
    case played(ClickRecord)
    case failed(edgeTimestamp: UInt64, ClickFailure)
}
