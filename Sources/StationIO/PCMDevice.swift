import CALSA
import CStationShim
import Glibc

/// What the audio device agreed to; may differ from what was asked.
public struct NegotiatedAudio: Sendable, Hashable, CustomStringConvertible {
    public var device: String
    public var rate: Int
    public var channels: Int
    public var periodFrames: Int
    public var bufferFrames: Int

    /// The output buffer's length, the floor of the click's onset latency from a stopped stream.
    public var bufferMilliseconds: Double { Double(bufferFrames) * 1000 / Double(max(1, rate)) }

    public var description: String {
        "\(device): \(rate) Hz, \(channels) ch, period \(periodFrames) frames, buffer \(bufferFrames) frames ("
            + String(format2: bufferMilliseconds) + " ms)"
    }
}

extension String {
    init(format2 value: Double) {
        let hundredths = Int((value * 100).rounded())
        let fraction = abs(hundredths % 100)
        self = "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}

/// The stream's state, as ALSA reports it.
public enum PCMState: Sendable, Hashable {
    case prepared, running, xrun, draining, paused, suspended, disconnected, other
}

/// One opened, configured playback stream. The real one is `ALSAPlayback`; tests wrap it to
/// inject the failures a real device produces.
public protocol PCMDevice: AnyObject {
    var negotiated: NegotiatedAudio { get }
    var state: PCMState { get }
    /// Writes interleaved frames without waiting; returns frames taken, or -errno.
    func write(_ frames: UnsafePointer<Int16>, count: Int) -> Int
    func prepare() -> Int32
    func resume() -> Int32
    func drop() -> Int32
    /// ALSA's trigger timestamp (CLOCK_MONOTONIC ns, 0 when unknown) and the delay in frames.
    func triggerAndDelay() -> (trigger: UInt64, delay: Int)
    /// Descriptors to poll while a click is still being written.
    var pollDescriptors: UnsafeMutableBufferPointer<pollfd> { get }
    /// After poll: whether the stream can take more frames now.
    func isWritable() -> Bool
}

/// A real ALSA playback stream, opened non-blocking so the hot thread never waits on it.
public final class ALSAPlayback: PCMDevice {
    private let pcm: OpaquePointer
    private let status: OpaquePointer
    public let negotiated: NegotiatedAudio
    public let pollDescriptors: UnsafeMutableBufferPointer<pollfd>

    /// Opens `device` and asks for the given format; reads back what it got.
    public init(device: String, rate: Int, channels: Int, periodFrames: Int, periods: Int) throws(StationIOError) {
        ALSALibraryErrors.keep()
        var handle: OpaquePointer?
        var rc = snd_pcm_open(&handle, device, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK)
        guard rc == 0, let pcm = handle else {
            throw StationIOError(
                .audio, "audio device \"\(device)\": cannot open: \(Self.text(rc))\(ALSALibraryErrors.takeLast())")
        }
        func failed(_ step: String, _ rc: Int32) -> StationIOError {
            snd_pcm_close(pcm)
            return StationIOError(
                .audio, "audio device \"\(device)\": \(step): \(Self.text(rc))\(ALSALibraryErrors.takeLast())")
        }
        var hw: OpaquePointer?
        snd_pcm_hw_params_malloc(&hw)
        defer { snd_pcm_hw_params_free(hw) }
        var gotRate = UInt32(clamping: rate)
        var gotChannels = UInt32(clamping: channels)
        var gotPeriod = snd_pcm_uframes_t(periodFrames)
        var gotPeriods = UInt32(clamping: periods)
        var dir: Int32 = 0
        rc = snd_pcm_hw_params_any(pcm, hw)
        if rc < 0 { throw failed("reading its capabilities", rc) }
        rc = snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED)
        if rc < 0 { throw failed("interleaved access refused", rc) }
        rc = snd_pcm_hw_params_set_format(pcm, hw, SND_PCM_FORMAT_S16_LE)
        if rc < 0 { throw failed("16-bit samples refused", rc) }
        rc = snd_pcm_hw_params_set_channels_near(pcm, hw, &gotChannels)
        if rc < 0 { throw failed("no channel count near \(channels)", rc) }
        rc = snd_pcm_hw_params_set_rate_near(pcm, hw, &gotRate, &dir)
        if rc < 0 { throw failed("no rate near \(rate) Hz", rc) }
        rc = snd_pcm_hw_params_set_period_size_near(pcm, hw, &gotPeriod, &dir)
        if rc < 0 { throw failed("no period near \(periodFrames) frames", rc) }
        rc = snd_pcm_hw_params_set_periods_near(pcm, hw, &gotPeriods, &dir)
        if rc < 0 { throw failed("no period count near \(periods)", rc) }
        rc = snd_pcm_hw_params(pcm, hw)
        if rc < 0 { throw failed("setting the hardware parameters", rc) }
        var bufferFrames = snd_pcm_uframes_t(0)
        snd_pcm_hw_params_get_buffer_size(hw, &bufferFrames)
        snd_pcm_hw_params_get_period_size(hw, &gotPeriod, &dir)
        snd_pcm_hw_params_get_rate(hw, &gotRate, &dir)
        snd_pcm_hw_params_get_channels(hw, &gotChannels)

        var sw: OpaquePointer?
        snd_pcm_sw_params_malloc(&sw)
        defer { snd_pcm_sw_params_free(sw) }
        snd_pcm_sw_params_current(pcm, sw)
        // Start on the first frame written: the click is the stream's first sound, so the
        // trigger timestamp is its onset. Time stamps on the monotonic clock, like GPIO edges.
        snd_pcm_sw_params_set_start_threshold(pcm, sw, 1)
        snd_pcm_sw_params_set_avail_min(pcm, sw, gotPeriod)
        snd_pcm_sw_params_set_tstamp_mode(pcm, sw, SND_PCM_TSTAMP_ENABLE)
        snd_pcm_sw_params_set_tstamp_type(pcm, sw, SND_PCM_TSTAMP_TYPE_MONOTONIC)
        rc = snd_pcm_sw_params(pcm, sw)
        if rc < 0 { throw failed("setting the software parameters", rc) }
        rc = snd_pcm_prepare(pcm)
        if rc < 0 { throw failed("preparing the stream", rc) }

        var st: OpaquePointer?
        rc = snd_pcm_status_malloc(&st)
        guard rc == 0, let st else { throw failed("allocating the status", rc) }
        let count = max(0, Int(snd_pcm_poll_descriptors_count(pcm)))
        let fds = UnsafeMutableBufferPointer<pollfd>.allocate(capacity: max(1, count))
        fds.initialize(repeating: pollfd())
        let filled = count > 0 ? Int(snd_pcm_poll_descriptors(pcm, fds.baseAddress, UInt32(count))) : 0
        self.pcm = pcm
        status = st
        pollDescriptors = UnsafeMutableBufferPointer(rebasing: fds[0..<max(0, filled)])
        negotiated = NegotiatedAudio(
            device: device, rate: Int(gotRate), channels: Int(gotChannels), periodFrames: Int(gotPeriod),
            bufferFrames: Int(bufferFrames))
    }

    deinit {
        // Let a click still sounding finish, for at most 100 ms (some plugins never drain).
        if snd_pcm_state(pcm) == SND_PCM_STATE_RUNNING, snd_pcm_drain(pcm) == -EAGAIN {
            let until = MonotonicClock.now() + 100_000_000
            while snd_pcm_state(pcm) == SND_PCM_STATE_DRAINING, MonotonicClock.now() < until { usleep(2000) }
        }
        snd_pcm_status_free(status)
        snd_pcm_close(pcm)
        UnsafeMutableBufferPointer(start: pollDescriptors.baseAddress, count: max(1, pollDescriptors.count))
            .deallocate()
    }

    static func text(_ rc: Int32) -> String { String(cString: snd_strerror(rc)) }

    public var state: PCMState {
        switch snd_pcm_state(pcm) {
        case SND_PCM_STATE_PREPARED: return .prepared
        case SND_PCM_STATE_RUNNING: return .running
        case SND_PCM_STATE_XRUN: return .xrun
        case SND_PCM_STATE_DRAINING: return .draining
        case SND_PCM_STATE_PAUSED: return .paused
        case SND_PCM_STATE_SUSPENDED: return .suspended
        case SND_PCM_STATE_DISCONNECTED: return .disconnected
        default: return .other
        }
    }

    @inline(__always)
    public func write(_ frames: UnsafePointer<Int16>, count: Int) -> Int {
        Int(snd_pcm_writei(pcm, frames, snd_pcm_uframes_t(count)))
    }

    public func prepare() -> Int32 { snd_pcm_prepare(pcm) }
    public func resume() -> Int32 { snd_pcm_resume(pcm) }
    public func drop() -> Int32 { snd_pcm_drop(pcm) }

    public func triggerAndDelay() -> (trigger: UInt64, delay: Int) {
        guard snd_pcm_status(pcm, status) == 0 else { return (0, 0) }
        var ts = snd_htimestamp_t()
        snd_pcm_status_get_trigger_htstamp(status, &ts)
        let trigger = UInt64(max(0, ts.tv_sec)) &* 1_000_000_000 &+ UInt64(max(0, ts.tv_nsec))
        return (trigger, Int(snd_pcm_status_get_delay(status)))
    }

    public func isWritable() -> Bool {
        var revents: UInt16 = 0
        guard
            snd_pcm_poll_descriptors_revents(pcm, pollDescriptors.baseAddress, UInt32(pollDescriptors.count), &revents)
                == 0
        else { return true }
        return revents & UInt16(POLLOUT) != 0 || revents & UInt16(POLLERR) != 0
    }
}

/// ALSA's library prints its own errors on stderr, several lines for one missing card. The
/// station keeps them instead (CStationShim) and names the last in its own one-line message.
public enum ALSALibraryErrors {
    private static let installed: Bool = {
        lineup_alsa_keep_errors()
        return true
    }()

    /// From now on, ALSA's messages are kept, not printed.
    public static func keep() { _ = installed }

    /// The last message on this thread as " (ALSA: ...)", or "" if there was none; clears it.
    public static func takeLast() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        lineup_alsa_take_error(&buffer, buffer.count)
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.isEmpty ? "" : " (ALSA: \(text))"
    }

    /// Messages kept since start.
    public static var count: UInt64 { lineup_alsa_error_count() }
}
