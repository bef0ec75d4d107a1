import Glibc
import Synchronization

/// A PCM that stops taking frames when told to, the ways the Pi 5's I2S DACs do
/// (raspberrypi/linux #7320, #7322), behind ALSA's own interface: while it works it is the
/// stream it wraps. For tests and the simulated station; the mode is switched from any thread
/// (an atomic: the hot thread reads it on every write, and never waits for it).
public final class FailingPCM: PCMDevice, @unchecked Sendable {
    public enum Mode: UInt8, Sendable {
        case works
        /// Every write takes no frames and says so with 0, not an error.
        case takesNothing
        /// Writes are taken and the stream starts, but nothing of it plays: the DMA stopped.
        case stalls
        /// Every write fails with EIO, an error the click path cannot recover in place.
        case fails
    }

    public let real: any PCMDevice
    private let modeNow = Atomic<UInt8>(Mode.works.rawValue)
    /// Frames taken while stalled: queued for ever. Hot thread only, as every call but `mode`.
    private var queued = 0
    /// Times the stream was dropped: how a test sees the in-place reset.
    public private(set) var drops = 0

    public init(wrapping real: any PCMDevice) { self.real = real }

    public var mode: Mode {
        get { Mode(rawValue: modeNow.load(ordering: .relaxed)) ?? .works }
        set { modeNow.store(newValue.rawValue, ordering: .relaxed) }
    }

    public var negotiated: NegotiatedAudio { real.negotiated }
    public var state: PCMState { mode == .stalls && queued > 0 ? .running : real.state }

    public func write(_ frames: UnsafePointer<Int16>, count: Int) -> Int {
        switch mode {
        case .works: return real.write(frames, count: count)
        case .takesNothing: return 0
        case .fails: return -Int(EIO)
        case .stalls:
            let taken = min(count, negotiated.bufferFrames - queued)
            guard taken > 0 else { return -Int(EAGAIN) }
            queued += taken
            return taken
        }
    }

    public func prepare() -> Int32 {
        queued = 0
        return real.prepare()
    }
    public func resume() -> Int32 { real.resume() }
    public func drop() -> Int32 {
        queued = 0
        drops += 1
        return real.drop()
    }
    public func triggerAndDelay() -> (trigger: UInt64, delay: Int) {
        mode == .stalls ? (1, queued) : real.triggerAndDelay()
    }
    public var pollDescriptors: UnsafeMutableBufferPointer<pollfd> { real.pollDescriptors }
    public func isWritable() -> Bool { mode == .stalls ? queued < negotiated.bufferFrames : real.isWritable() }
}
