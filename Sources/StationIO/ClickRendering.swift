import Glibc
import StationConfig

/// Renders the click once, at start or after a device change, into interleaved 16-bit frames
/// at the device's negotiated rate and channel count. Nothing is computed when a click sounds.
public enum ClickRendering {
    public static func render(_ sound: ClickSound, rate: Int, channels: Int) -> [Int16] {
        switch sound {
        case .builtin(let frequency, let milliseconds, let level):
            return renderBuiltin(
                frequency: frequency, milliseconds: milliseconds, level: level, rate: rate, channels: channels)
        case .wav(_, let samples, let sourceChannels, let sourceRate):
            return convert(
                samples: samples, channels: sourceChannels, rate: sourceRate, toRate: rate, toChannels: channels)
        }
    }

    /// A sine burst with a fast exponential decay: a sharp onset the dog hears at once and
    /// no long tail to blur the next click. The first sample is already at full envelope so
    /// the onset is the first frame ALSA plays.
    static func renderBuiltin(frequency: Double, milliseconds: Double, level: Double, rate: Int, channels: Int)
        -> [Int16]
    {
        let frames = max(1, Int((milliseconds / 1000 * Double(rate)).rounded()))
        let tau = Double(frames) / 5
        var out = [Int16](repeating: 0, count: frames * channels)
        let amplitude = max(0, min(1, level)) * Double(Int16.max)
        for i in 0..<frames {
            let t = Double(i)
            let value = amplitude * exp(-t / tau) * cos(2 * Double.pi * frequency * t / Double(rate))
            let sample = Int16(max(Double(Int16.min), min(Double(Int16.max), value.rounded())))
            for c in 0..<channels { out[i * channels + c] = sample }
        }
        return out
    }

    /// Maps a WAV's channels onto the device's (mono is copied to every channel) and, when
    /// the device could not be given the file's rate, resamples linearly.
    static func convert(samples: [Int16], channels: Int, rate: Int, toRate: Int, toChannels: Int) -> [Int16] {
        let sourceFrames = channels > 0 ? samples.count / channels : 0
        guard sourceFrames > 0, toChannels > 0 else { return [] }
        let frames = rate == toRate ? sourceFrames : max(1, Int(Double(sourceFrames) * Double(toRate) / Double(rate)))
        var out = [Int16](repeating: 0, count: frames * toChannels)
        for i in 0..<frames {
            let position = rate == toRate ? Double(i) : Double(i) * Double(rate) / Double(toRate)
            let a = min(Int(position), sourceFrames - 1)
            let b = min(a + 1, sourceFrames - 1)
            let fraction = position - Double(a)
            for c in 0..<toChannels {
                let sc = min(c, channels - 1)
                let va = Double(samples[a * channels + sc])
                let vb = Double(samples[b * channels + sc])
                out[i * toChannels + c] = Int16((va + (vb - va) * fraction).rounded())
            }
        }
        return out
    }
}
