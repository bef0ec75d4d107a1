import Glibc
import StationConfig

/// A sound that is not the reward: the trainer's timer. Made to be unmistakable for the
/// click (a 12 ms burst at 3 kHz): lower, longer, steady tones with soft edges.
public enum CueSound: UInt8, Sendable, Hashable, CaseIterable, BitwiseCopyable {
    /// An exercise's repetition begins: one 150 ms tone at 660 Hz.
    case exerciseStart
    /// An exercise's time is up: two 200 ms tones at 440 Hz, 100 ms apart.
    case exerciseEnd
}

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

    /// The cue's frames, rendered once per device like the click.
    public static func render(_ cue: CueSound, rate: Int, channels: Int) -> [Int16] {
        switch cue {
        case .exerciseStart:
            return tones([(660, 150)], gapMilliseconds: 0, rate: rate, channels: channels)
        case .exerciseEnd:
            return tones([(440, 200), (440, 200)], gapMilliseconds: 100, rate: rate, channels: channels)
        }
    }

    /// Steady sine tones at half level with 10 ms raised-cosine edges (no click at their onset),
    /// separated by silence.
    static func tones(
        _ parts: [(frequency: Double, milliseconds: Double)], gapMilliseconds: Double, rate: Int, channels: Int
    )
        -> [Int16]
    {
        var out: [Int16] = []
        let amplitude = 0.5 * Double(Int16.max)
        let edge = max(1, Int(0.010 * Double(rate)))
        for (k, part) in parts.enumerated() {
            if k > 0 {
                out += [Int16](repeating: 0, count: Int(gapMilliseconds / 1000 * Double(rate)) * channels)
            }
            let frames = max(1, Int((part.milliseconds / 1000 * Double(rate)).rounded()))
            for i in 0..<frames {
                let fromEdge = min(i, frames - 1 - i)
                let envelope = fromEdge >= edge ? 1 : 0.5 - 0.5 * cos(Double.pi * Double(fromEdge) / Double(edge))
                let value = amplitude * envelope * sin(2 * Double.pi * part.frequency * Double(i) / Double(rate))
                let sample = Int16(value.rounded())
                for _ in 0..<channels { out.append(sample) }
            }
        }
        return out
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
