import Foundation
import Testing

@testable import StationConfig

@Suite struct WAVTests {
    static let samples: [Int16] = [0, 1000, -1000, Int16.max, Int16.min, 42]

    func configuration(click: String, rate: Int = 48_000, channels: Int = 2) -> String {
        stations(1) + "[audio]\nrate = \(rate)\nchannels = \(channels)\nclick = \"\(click)\"\n"
    }

    @Test func roundTripMonoAndStereo() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let mono = try directory.write("mono.wav", wavBytes(samples: Self.samples))
        let stereo = try directory.write(
            "stereo.wav", wavBytes(channels: 2, samples: Self.samples, extraChunk: true))

        let first = try accepted(configuration(click: mono))
        #expect(first.audio.click == .wav(path: mono, samples: Self.samples, channels: 1, rate: 48_000))
        let second = try accepted(configuration(click: stereo))
        #expect(
            second.audio.click == .wav(path: stereo, samples: Self.samples, channels: 2, rate: 48_000))
    }

    @Test func aRelativePathIsResolvedAgainstTheConfigurationsDirectory() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        _ = try directory.write("click.wav", wavBytes(samples: Self.samples))
        let path = try directory.write("station.toml", text: configuration(click: "click.wav"))
        let loaded = try StationConfigLoader.load(path: path)
        #expect(
            loaded.audio.click
                == .wav(
                    path: directory.path + "/click.wav", samples: Self.samples, channels: 1, rate: 48_000))
    }

    /// Writes `bytes` as a WAV file, points a configuration at it and returns the message.
    func wavMessage(_ bytes: [UInt8], rate: Int = 48_000, channels: Int = 2) throws -> String {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = try directory.write("click.wav", bytes)
        let error = try #require(refusal(configuration(click: path, rate: rate, channels: channels)))
        #expect(error.code == .invalidWAV)
        #expect(error.keyPath == "audio.click")
        let prefix = "the WAV file \"\(path)\" "
        #expect(error.message.hasPrefix(prefix))
        return String(error.message.dropFirst(prefix.count))
    }

    @Test func aMissingWAVNamesTheFileAndTheReason() throws {
        let error = try #require(
            refusal(configuration(click: "sounds/click.wav"), baseDirectory: "/etc/lineup"))
        #expect(error.code == .invalidWAV)
        #expect(
            error.description
                == "\(stationFile): audio.click: cannot read the WAV file \"/etc/lineup/sounds/click.wav\": No such file or directory"
        )
    }

    @Test func badWAVFilesAreNamedWithTheReason() throws {
        #expect(try wavMessage([]) == "is empty")
        #expect(try wavMessage(Array("hello".utf8)) == "is too short to be a WAV file (5 bytes)")
        #expect(
            try wavMessage(Array("RIFF\u{0}\u{0}\u{0}\u{0}AVI LIST".utf8))
                == "is not a WAV file (no RIFF/WAVE header)")
        #expect(
            try wavMessage(wavBytes(bits: 8, samples: [1, 2]))
                == "has 8-bit samples; only 16-bit PCM is supported")
        #expect(
            try wavMessage(wavBytes(formatTag: 3, samples: [1, 2]))
                == "is not PCM (format tag 3); save it as 16-bit PCM")
        #expect(
            try wavMessage(wavBytes(channels: 6, samples: [1, 2, 3, 4, 5, 6]))
                == "has 6 channels; only mono or stereo is supported")
        #expect(try wavMessage(wavBytes(samples: [])) == "has no samples")
        #expect(
            try wavMessage(wavBytes(rate: 44_100, samples: Self.samples))
                == "is at 44100 Hz but audio.rate is 48000 Hz; resample the file or change audio.rate")
        #expect(
            try wavMessage(wavBytes(channels: 2, samples: Self.samples), channels: 1)
                == "is stereo but audio.channels is 1")
        #expect(
            try wavMessage(
                wavBytes(rate: 8000, samples: [Int16](repeating: 0, count: 16_001)), rate: 8000)
                == "lasts 2000 ms; a click may last at most 2 s")

        let whole = wavBytes(samples: Self.samples)
        #expect(
            try wavMessage(Array(whole.dropLast(4)))
                == "is truncated: its data chunk says 12 bytes but only 8 follow")
        #expect(try wavMessage(Array(whole.prefix(30))) == "is truncated: its fmt chunk is incomplete")
        #expect(try wavMessage(Array(whole.prefix(36))) == "has no data chunk")
    }

    @Test func everyTruncationAndGarbageIsRefusedWithoutATrap() {
        let whole = wavBytes(channels: 2, samples: Self.samples, extraChunk: true)
        #expect(
            (try? WAVFile.parse(whole).get()) == WAVFile(channels: 2, rate: 48_000, samples: Self.samples)
        )
        for length in 0..<whole.count {
            let result = WAVFile.parse(Array(whole.prefix(length)))
            if case .success = result { Issue.record("a \(length)-byte prefix was accepted") }
        }
        // Deterministic garbage after a valid header: a linear congruential generator.
        var state: UInt64 = 0x5EED
        for _ in 0..<500 {
            var bytes = Array(whole.prefix(12))
            let length = Int(state % 200)
            for _ in 0..<length {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                bytes.append(UInt8(truncatingIfNeeded: state >> 56))
            }
            _ = WAVFile.parse(bytes)
        }
        // Chunk sizes near the 32-bit limit.
        var huge = Array(whole.prefix(12)) + Array("junk".utf8) + [0xFF, 0xFF, 0xFF, 0xFF]
        if case .success = WAVFile.parse(huge) { Issue.record("a chunk past the end was accepted") }
        huge = Array(whole.prefix(36)) + Array("data".utf8) + [0xFE, 0xFF, 0xFF, 0xFF]
        if case .success = WAVFile.parse(huge) {
            Issue.record("a data chunk past the end was accepted")
        }
    }
}
