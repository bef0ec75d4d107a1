import Foundation
import Glibc
import StationConfig
import Synchronization

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

    public var description: String {
        switch self {
        case .deviceUnavailable: return "audio device unavailable"
        case .writeFailed(let e): return "write failed: \(String(cString: strerror(e)))"
        }
    }
}

public enum ClickOutcome: Sendable, Hashable, BitwiseCopyable {
    case played(ClickRecord)
    case failed(edgeTimestamp: UInt64, ClickFailure)
}

/// The click through ALSA.
///
/// The device is opened and prepared, and the click rendered for it, before any reward is
/// due. `click(edgeTimestamp:)` runs on the hot thread: it writes the rendered frames with no
/// allocation, no file access and no lock. A click longer than the device's buffer is
/// finished by `continueClick()` when the stream's descriptors say it can take more.
///
/// Underruns and suspends are recovered in place. A device that vanishes (a USB DAC pulled
/// out) is handed to a supervisor thread that closes it and reopens with back-off; rewards
/// in between fail, each reported, and the station goes on.
public final class ClickPlayer: @unchecked Sendable {
    public typealias Opener = @Sendable () throws(StationIOError) -> any PCMDevice

    /// A device with the click rendered for its negotiated format.
    final class Prepared: @unchecked Sendable {
        let device: any PCMDevice
        let frames: UnsafeMutableBufferPointer<Int16>
        let base: UnsafeMutablePointer<Int16>
        let frameCount: Int
        let channels: Int

        /// The cues, in `CueSound`'s order: base and frame count.
        let cues: [(base: UnsafeMutablePointer<Int16>, frames: Int)]

        init(device: any PCMDevice, sound: ClickSound) {
            self.device = device
            let n = device.negotiated
            let rendered = ClickRendering.render(sound, rate: n.rate, channels: n.channels)
            base = .allocate(capacity: max(1, rendered.count))
            base.initialize(repeating: 0, count: max(1, rendered.count))
            frames = UnsafeMutableBufferPointer(start: base, count: max(1, rendered.count))
            _ = frames.initialize(from: rendered)
            channels = n.channels
            frameCount = rendered.count / max(1, n.channels)
            cues = CueSound.allCases.map { cue in
                let samples = ClickRendering.render(cue, rate: n.rate, channels: n.channels)
                let cueBase = UnsafeMutablePointer<Int16>.allocate(capacity: max(1, samples.count))
                cueBase.initialize(repeating: 0, count: max(1, samples.count))
                _ = UnsafeMutableBufferPointer(start: cueBase, count: max(1, samples.count)).initialize(from: samples)
                return (cueBase, samples.count / max(1, n.channels))
            }
        }

        deinit {
            base.deallocate()
            for cue in cues { cue.base.deallocate() }
        }
    }

    /// What the hot thread and the audio supervisor thread share: only atomics, a semaphore,
    /// and status behind locks the hot thread never takes.
    final class Shared: @unchecked Sendable {
        let sound: ClickSound
        let opener: Opener
        let backoff: (first: Double, last: Double)
        // Hand-over slots, lock-free: each holds one retained object's address or 0.
        let reopened = Atomic<UInt>(0)
        let lost = Atomic<UInt>(0)
        // A POSIX semaphore at a fixed address: posting it never blocks or allocates.
        let wake: UnsafeMutablePointer<sem_t> = .allocate(capacity: 1)
        let stopping = Atomic<Bool>(false)
        let finished = Atomic<Bool>(false)
        let failures = Atomic<UInt64>(0)
        let recoveredXruns = Atomic<UInt64>(0)
        let truncated = Atomic<UInt64>(0)
        let reopenCount = Atomic<UInt64>(0)
        let available = Atomic<Bool>(false)
        let lastProblem = Mutex<String?>(nil)
        let negotiatedNow = Mutex<NegotiatedAudio?>(nil)

        init(sound: ClickSound, opener: @escaping Opener, backoff: (Double, Double)) {
            self.sound = sound
            self.opener = opener
            self.backoff = backoff
            sem_init(wake, 0, 0)
        }

        deinit {
            for bits in [reopened.exchange(0, ordering: .acquiring), lost.exchange(0, ordering: .acquiring)] {
                if let raw = UnsafeRawPointer(bitPattern: bits) { Unmanaged<Prepared>.fromOpaque(raw).release() }
            }
            sem_destroy(wake)
            wake.deallocate()
        }

        /// The supervisor thread: closes vanished devices and reopens with back-off.
        func supervise() {
            defer { finished.store(true, ordering: .releasing) }
            while !stopping.load(ordering: .relaxed) {
                while sem_wait(wake) != 0 && errno == EINTR {}
                if stopping.load(ordering: .relaxed) { return }
                let deadBits = lost.exchange(0, ordering: .acquiring)
                if let raw = UnsafeRawPointer(bitPattern: deadBits) {
                    Unmanaged<Prepared>.fromOpaque(raw).release()  // closes the vanished device
                }
                guard available.load(ordering: .relaxed) == false, reopened.load(ordering: .relaxed) == 0 else {
                    continue
                }
                var wait = backoff.first
                while !stopping.load(ordering: .relaxed) {
                    reopenCount.add(1, ordering: .relaxed)
                    do {
                        let device = try opener()
                        let prepared = Prepared(device: device, sound: sound)
                        negotiatedNow.withLock { $0 = device.negotiated }
                        lastProblem.withLock { $0 = nil }
                        reopened.store(
                            UInt(bitPattern: Unmanaged.passRetained(prepared).toOpaque()), ordering: .releasing)
                        available.store(true, ordering: .relaxed)
                        break
                    } catch {
                        lastProblem.withLock { $0 = error.message }
                        let until = MonotonicClock.now() + UInt64(wait * 1e9)
                        // Wakes early only to stop.
                        while MonotonicClock.now() < until && !stopping.load(ordering: .relaxed) {
                            MonotonicClock.sleep(until: min(until, MonotonicClock.now() + 20_000_000))
                        }
                        wait = min(backoff.last, wait * 2)
                    }
                }
            }
        }
    }

    private let shared: Shared
    private var current: Prepared?
    private var supervisorStarted = false

    // The click (or cue) being written.
    private var writeOffset = 0
    private var writeRemaining = 0
    private var writeRecoveries: UInt8 = 0
    /// The frames being written: the click's, or a cue's.
    private var writing: UnsafeMutablePointer<Int16>?
    /// True while the frames being written are the click's: a cue never cuts a click.
    private var writingClick = false
    private let cuesFailedCount = Atomic<UInt64>(0)
    private let cuesPlayedCount = Atomic<UInt64>(0)

    /// Opens the device now. If that fails and `keepTrying` is set, starts without sound and
    /// keeps reopening in the background (a USB DAC not yet enumerated at boot); otherwise throws.
    public init(
        sound: ClickSound, opener: @escaping Opener, keepTrying: Bool = true, backoff: (Double, Double) = (0.1, 5)
    ) throws(StationIOError) {
        shared = Shared(sound: sound, opener: opener, backoff: backoff)
        do {
            let device = try opener()
            current = Prepared(device: device, sound: sound)
            shared.available.store(true, ordering: .relaxed)
            shared.negotiatedNow.withLock { $0 = device.negotiated }
        } catch {
            guard keepTrying else { throw error }
            shared.lastProblem.withLock { $0 = error.message }
        }
        let supervisor = Thread { [shared] in shared.supervise() }
        supervisor.name = "lineup-audio"
        supervisor.start()
        supervisorStarted = true
        if current == nil { sem_post(shared.wake) }
    }

    /// A click from the real ALSA library on `spec.device`.
    public convenience init(audio spec: AudioSpec, keepTrying: Bool = true) throws(StationIOError) {
        try self.init(
            sound: spec.click,
            opener: { () throws(StationIOError) -> any PCMDevice in
                try ALSAPlayback(
                    device: spec.device, rate: spec.rate, channels: spec.channels, periodFrames: spec.periodFrames,
                    periods: spec.periods)
            }, keepTrying: keepTrying)
    }

    deinit {
        // An init that threw never started the supervisor.
        guard supervisorStarted else { return }
        shared.stopping.store(true, ordering: .relaxed)
        sem_post(shared.wake)
        while !shared.finished.load(ordering: .acquiring) { usleep(1000) }
    }

    // MARK: Hot path

    /// Writes the click now. Returns what happened; never waits, never allocates.
    @inline(__always)
    public func click(edgeTimestamp: UInt64) -> ClickOutcome {
        if current == nil { adoptReopened() }
        guard let out = current else {
            shared.failures.add(1, ordering: .relaxed)
            return .failed(edgeTimestamp: edgeTimestamp, .deviceUnavailable)
        }
        let device = out.device
        writeRecoveries = 0
        switch device.state {
        case .prepared: break
        case .running, .draining, .xrun, .paused:
            // A click still sounding, or one that ran out: cut it and start clean.
            _ = device.drop()
            _ = device.prepare()
        case .suspended:
            if device.resume() < 0 { _ = device.prepare() }
            writeRecoveries &+= 1
        case .disconnected:
            return deviceLost(edgeTimestamp)
        case .other:
            _ = device.prepare()
        }
        let first = min(out.frameCount, device.negotiated.bufferFrames)
        var written = device.write(out.base, count: first)
        if written < 0, recover(device, error: Int32(-written)) {
            written = device.write(out.base, count: first)
        }
        let handed = MonotonicClock.now()
        if written < 0 {
            let err = Int32(-written)
            if Self.isFatal(err) { return deviceLost(edgeTimestamp) }
            shared.failures.add(1, ordering: .relaxed)
            return .failed(edgeTimestamp: edgeTimestamp, .writeFailed(errno: err))
        }
        let (trigger, delay) = device.triggerAndDelay()
        writing = out.base
        writingClick = true
        writeOffset = written
        writeRemaining = out.frameCount - written
        return .played(
            ClickRecord(
                edgeTimestamp: edgeTimestamp, handedTimestamp: handed, triggerTimestamp: trigger,
                delayFrames: Int32(clamping: delay), rate: UInt32(clamping: device.negotiated.rate),
                recoveries: writeRecoveries))
    }

    /// Sounds a cue (the trainer's timer) through the same stream. A click still sounding is
    /// never cut for a cue (the cue is skipped and counted); a click cuts a cue. Returns
    /// whether the cue was handed to ALSA. Never waits, never allocates.
    @discardableResult
    public func cue(_ cue: CueSound) -> Bool {
        if current == nil { adoptReopened() }
        guard let out = current, !(writingClick && writeRemaining > 0) else {
            cuesFailedCount.add(1, ordering: .relaxed)
            return false
        }
        let device = out.device
        switch device.state {
        case .prepared: break
        case .running, .draining, .xrun, .paused, .other:
            _ = device.drop()
            _ = device.prepare()
        case .suspended:
            if device.resume() < 0 { _ = device.prepare() }
        case .disconnected:
            _ = deviceLost(0)
            cuesFailedCount.add(1, ordering: .relaxed)
            return false
        }
        let sound = out.cues[Int(cue.rawValue)]
        let first = min(sound.frames, device.negotiated.bufferFrames)
        var written = device.write(sound.base, count: first)
        if written < 0, recover(device, error: Int32(-written)) {
            written = device.write(sound.base, count: first)
        }
        guard written >= 0 else {
            cuesFailedCount.add(1, ordering: .relaxed)
            return false
        }
        writing = sound.base
        writingClick = false
        writeOffset = written
        writeRemaining = sound.frames - written
        cuesPlayedCount.add(1, ordering: .relaxed)
        return true
    }

    /// Cues handed to ALSA, and cues that could not sound (no device, a click sounding).
    public var cuesPlayed: UInt64 { cuesPlayedCount.load(ordering: .relaxed) }
    public var cuesFailed: UInt64 { cuesFailedCount.load(ordering: .relaxed) }

    /// Whether part of a click (or cue) still waits to be written.
    public var isWritingClick: Bool { writeRemaining > 0 && current != nil }

    /// The current device's descriptors, to poll while `isWritingClick`.
    public var pollDescriptors: UnsafeMutableBufferPointer<pollfd>? { current?.device.pollDescriptors }

    /// Writes what the device can take of the click's rest. Call when its descriptors fire.
    public func continueClick() {
        guard writeRemaining > 0, let out = current, let writing, out.device.isWritable() else { return }
        let base = writing + writeOffset * out.channels
        let written = out.device.write(base, count: writeRemaining)
        if written > 0 {
            writeOffset += written
            writeRemaining -= written
        } else if written == -Int(EAGAIN) {
            return
        } else if written < 0 {
            // Fell behind mid-click: the rest is lost; the stream is made ready for the next.
            shared.truncated.add(1, ordering: .relaxed)
            writeRemaining = 0
            if Self.isFatal(Int32(-written)) { _ = deviceLost(0) } else { _ = out.device.prepare() }
        }
    }

    // MARK: Recovery

    static func isFatal(_ err: Int32) -> Bool {
        err == ENODEV || err == EBADFD || err == EIO || err == ENXIO || err == ENOTTY
    }

    private func recover(_ device: any PCMDevice, error err: Int32) -> Bool {
        switch err {
        case EPIPE:  // underrun
            shared.recoveredXruns.add(1, ordering: .relaxed)
            writeRecoveries &+= 1
            return device.prepare() == 0
        case ESTRPIPE:  // suspended: resume if the driver can, else start over
            writeRecoveries &+= 1
            return device.resume() == 0 || device.prepare() == 0
        default:
            return false
        }
    }

    private func deviceLost(_ edgeTimestamp: UInt64) -> ClickOutcome {
        shared.failures.add(1, ordering: .relaxed)
        shared.available.store(false, ordering: .relaxed)
        if let dead = current {
            // Closing the device is the supervisor's job: it may touch files and take time.
            let bits = UInt(bitPattern: Unmanaged.passRetained(dead).toOpaque())
            let previous = shared.lost.exchange(bits, ordering: .acquiringAndReleasing)
            if previous != 0 { shared.lost.store(previous, ordering: .relaxed) }  // one pending already; keep it
            current = nil
            writeRemaining = 0
        }
        sem_post(shared.wake)
        return .failed(edgeTimestamp: edgeTimestamp, .deviceUnavailable)
    }

    private func adoptReopened() {
        let bits = shared.reopened.exchange(0, ordering: .acquiring)
        guard let raw = UnsafeRawPointer(bitPattern: bits) else { return }
        current = Unmanaged<Prepared>.fromOpaque(raw).takeRetainedValue()
    }

    // MARK: Status

    /// Rewards that could not sound.
    public var failedClicks: UInt64 { shared.failures.load(ordering: .relaxed) }
    /// Underruns recovered from.
    public var recoveredUnderruns: UInt64 { shared.recoveredXruns.load(ordering: .relaxed) }
    /// Clicks cut short because the stream ran dry while they were written.
    public var truncatedClicks: UInt64 { shared.truncated.load(ordering: .relaxed) }
    /// Attempts to reopen a vanished device.
    public var reopenAttempts: UInt64 { shared.reopenCount.load(ordering: .relaxed) }
    /// Whether a device is open (or reopened and waiting to be picked up).
    public var isAvailable: Bool { shared.available.load(ordering: .relaxed) }
    /// The last reason the device could not be opened, while it cannot.
    public var problem: String? { shared.lastProblem.withLock { $0 } }
    /// What the device agreed to, once one has been opened.
    public var negotiated: NegotiatedAudio? { shared.negotiatedNow.withLock { $0 } }
}
