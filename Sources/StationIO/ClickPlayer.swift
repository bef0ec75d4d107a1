import Foundation
import Glibc
import StationConfig
import Synchronization

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
        /// How long after a click is handed its stream must have played some of it: two
        /// periods (the driver may see its position move only once a period), and 10 ms more
        /// for the DMA to start.
        let checkAfter: UInt64

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
            checkAfter = UInt64(2 * n.periodFrames) * 1_000_000_000 / UInt64(max(1, n.rate)) + 10_000_000
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
        /// The sound's health for `status`: the fault of the run of failing clicks going on
        /// (`SoundFault`'s raw value, 0: none), and how many runs since start.
        let soundFaultNow = Atomic<UInt8>(0)
        let soundFaultRuns = Atomic<UInt64>(0)
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
    /// Whether the clicks sound: kept on the hot thread (`SoundHealth.swift`).
    private var health = SoundHealth()
    /// Each change of the sound's health (a run of failing clicks, its end), for the log's
    /// consumer; pushed on the hot thread only.
    public let soundReports = EventRing<SoundReport>(capacity: 64)

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
            soundFailed(.error, errno: 0, edge: edgeTimestamp, at: MonotonicClock.now())
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
            deviceLost(edgeTimestamp, errno: ENODEV)
            return .failed(edgeTimestamp: edgeTimestamp, .deviceUnavailable)
        case .other:
            _ = device.prepare()
        }
        let first = min(out.frameCount, device.negotiated.bufferFrames)
        var written = device.write(out.base, count: first)
        if written < 0, recover(device, error: Int32(-written)) {
            written = device.write(out.base, count: first)
        }
        let handed = MonotonicClock.now()
        if written <= 0 {
            let err = Int32(-written)
            if Self.isFatal(err) {
                deviceLost(edgeTimestamp, errno: err, at: handed)
                return .failed(edgeTimestamp: edgeTimestamp, .deviceUnavailable)
            }
            shared.failures.add(1, ordering: .relaxed)
            // The stream was just prepared, its whole buffer free: taking nothing is the
            // device's failure, not a full buffer's.
            let taken = written == 0 || err == EAGAIN
            soundFailed(taken ? .notTaken : .error, errno: taken ? 0 : err, edge: edgeTimestamp, at: handed)
            setRight(out)
            return .failed(edgeTimestamp: edgeTimestamp, taken ? .notTaken : .writeFailed(errno: err))
        }
        let (trigger, delay) = device.triggerAndDelay()
        writing = out.base
        writingClick = true
        writeOffset = written
        writeRemaining = out.frameCount - written
        // Checked from the loop's deadlines, once the click should be playing.
        health.checkEdge = edgeTimestamp
        health.queued = delay
        health.checkAt = handed &+ out.checkAfter
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
            deviceLost(0, errno: ENODEV)
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
        // The cue cut the click being checked: the stream's advance is judged from here.
        if health.checkAt != .max { health.queued = device.triggerAndDelay().delay }
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
            health.queued += written
        } else if written == -Int(EAGAIN) {
            return
        } else if written == 0 {
            // Writable, yet it took nothing: a device that stopped taking frames (and its
            // descriptors would wake the loop at once, for ever). The rest is lost.
            shared.truncated.add(1, ordering: .relaxed)
            writeRemaining = 0
            if writingClick {
                soundFailed(.notTaken, errno: 0, edge: health.checkEdge, at: MonotonicClock.now())
                setRight(out)
            } else {
                _ = out.device.drop()
                _ = out.device.prepare()
            }
        } else {
            // Fell behind mid-click: the rest is lost; the stream is made ready for the next.
            shared.truncated.add(1, ordering: .relaxed)
            writeRemaining = 0
            let err = Int32(-written)
            if Self.isFatal(err) {
                deviceLost(writingClick ? health.checkEdge : 0, errno: err)
            } else {
                _ = out.device.prepare()
            }
        }
    }

    // MARK: Sound health

    /// When the last click's stream is due to be checked (`.max`: none due). Hot thread only.
    public var streamCheckDue: UInt64 { health.checkAt }

    /// Checks that the last click's stream played some of it, once it should have: on the hot
    /// thread, after the click, from the loop's deadlines (ALSA's calls on one stream are not
    /// to be made from two threads, and its thread-safe plugins take a lock). Returns whether
    /// it made a report.
    @discardableResult
    public func checkStream(now: UInt64) -> Bool {
        guard health.checkAt <= now else { return false }
        health.checkAt = .max
        guard let out = current else { return false }
        let device = out.device
        let state = device.state
        if state == .disconnected {
            return deviceLost(health.checkEdge, errno: ENODEV, at: now)
        }
        let delay = state == .running || state == .draining ? device.triggerAndDelay().delay : 0
        if health.advanced(state: state, delay: delay) {
            guard health.failingInARow > 0 else { return false }
            health.failingInARow = 0
            shared.soundFaultNow.store(0, ordering: .relaxed)
            soundReports.push(
                SoundReport(
                    kind: .recovered, fault: health.fault, errno: 0, clickEdge: health.checkEdge, timestamp: now))
            return true
        }
        // The click did not sound: a failed reward, found late.
        shared.failures.add(1, ordering: .relaxed)
        let reported = soundFailed(.stalled, errno: 0, edge: health.checkEdge, at: now)
        setRight(out)
        return reported
    }

    /// A click that did not sound. The first of a run is counted and reported; the rest of
    /// the run only keeps `status` saying what fails now.
    @discardableResult
    private func soundFailed(_ fault: SoundFault, errno err: Int32, edge: UInt64, at now: UInt64) -> Bool {
        health.checkAt = .max
        health.failingInARow += 1
        health.fault = fault
        shared.soundFaultNow.store(fault.rawValue, ordering: .relaxed)
        guard health.failingInARow == 1 else { return false }
        shared.soundFaultRuns.add(1, ordering: .relaxed)
        soundReports.push(SoundReport(kind: .failed, fault: fault, errno: err, clickEdge: edge, timestamp: now))
        return true
    }

    /// Sets a failing stream right for the next click: in place the first time (drop and
    /// prepare), then by reopening it on the supervisor thread, since a stream whose DMA
    /// stopped may only restart from a fresh open.
    private func setRight(_ out: Prepared) {
        writeRemaining = 0
        if health.failingInARow >= 2 {
            handOver()
        } else {
            _ = out.device.drop()
            _ = out.device.prepare()
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

    /// Counts the failed click, reports the fault if it starts a run, and hands the device
    /// over; returns whether it reported.
    @discardableResult
    private func deviceLost(_ edgeTimestamp: UInt64, errno err: Int32, at now: UInt64 = MonotonicClock.now()) -> Bool {
        shared.failures.add(1, ordering: .relaxed)
        let reported = soundFailed(.error, errno: err, edge: edgeTimestamp, at: now)
        handOver()
        return reported
    }

    /// The device goes to the supervisor thread, which closes and reopens it.
    private func handOver() {
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
    /// The fault of the run of failing clicks going on, or nil while the clicks sound.
    public var soundFault: SoundFault? { SoundFault(rawValue: shared.soundFaultNow.load(ordering: .relaxed)) }
    /// Runs of failing clicks since start (each counted once, however many clicks it failed).
    public var soundFaults: UInt64 { shared.soundFaultRuns.load(ordering: .relaxed) }
    /// What the device agreed to, once one has been opened.
    public var negotiated: NegotiatedAudio? { shared.negotiatedNow.withLock { $0 } }
}
