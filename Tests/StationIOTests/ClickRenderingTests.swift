import StationConfig
import Testing

@testable import StationIO

@Suite struct ClickRenderingTests {
    @Test func builtinClickStartsAtFullLevelAndDecays() {
        let frames = ClickRendering.render(
            .builtin(frequency: 3000, milliseconds: 12, level: 0.8), rate: 48_000, channels: 2)
        #expect(frames.count == 576 * 2)
        #expect(frames[0] == frames[1])  // both channels
        #expect(abs(Int(frames[0]) - Int(0.8 * 32767)) <= 1)
        let head = frames[0..<96].map { abs(Int($0)) }.max() ?? 0
        let tail = frames[(frames.count - 96)...].map { abs(Int($0)) }.max() ?? 0
        #expect(tail * 20 < head)
    }

    @Test func monoWavIsCopiedToEveryChannel() {
        let out = ClickRendering.render(
            .wav(path: "x.wav", samples: [100, -200, 300], channels: 1, rate: 48_000), rate: 48_000, channels: 2)
        #expect(out == [100, 100, -200, -200, 300, 300])
    }

    @Test func wavAtAnotherRateIsResampled() {
        let out = ClickRendering.render(
            .wav(path: "x.wav", samples: [0, 1000, 2000, 3000], channels: 1, rate: 24_000), rate: 48_000, channels: 1)
        #expect(out.count == 8)
        #expect(out[0] == 0 && out[1] == 500 && out[2] == 1000)
    }
}
