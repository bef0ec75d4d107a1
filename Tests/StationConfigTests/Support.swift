import Foundation
import Testing

@testable import StationConfig

/// The source name used in messages by these tests.
let stationFile = "/etc/lineup/station.toml"

/// Parses `text`; returns the error it must raise, or records a failure and returns nil.
func refusal(
    _ text: String, baseDirectory: String = "/nonexistent",
    sourceLocation: SourceLocation = #_sourceLocation
) -> StationConfigError? {
    do {
        let configuration = try StationConfigLoader.parse(
            text: text, source: stationFile, baseDirectory: baseDirectory)
        Issue.record(
            "expected an error, got a configuration of \(configuration.stations.count) stations",
            sourceLocation: sourceLocation)
        return nil
    } catch {
        #expect(!error.description.contains("\n"), "one line", sourceLocation: sourceLocation)
        #expect(error.description.hasPrefix(stationFile), sourceLocation: sourceLocation)
        return error
    }
}

/// Parses `text`, which must be valid.
func accepted(_ text: String, baseDirectory: String = "/nonexistent") throws -> StationConfiguration {
    try StationConfigLoader.parse(text: text, source: stationFile, baseDirectory: baseDirectory)
}

/// `count` stations named A, B, ... on distinct named lines.
func stations(_ count: Int) -> String {
    let pins = [17, 27, 22, 5, 6, 12, 13, 16, 26, 4, 7, 8, 9, 10, 11, 18, 19, 20, 21]
    return (0..<count).map { i in
        """
        [[stations]]
        name = "S\(i)"
        line = "GPIO\(pins[i])"

        """
    }.joined()
}

/// A RIFF/WAVE file's bytes, PCM unless told otherwise.
func wavBytes(
    channels: Int = 1, rate: Int = 48_000, bits: Int = 16, formatTag: Int = 1, samples: [Int16],
    extraChunk: Bool = false
) -> [UInt8] {
    func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
    func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16((v >> 16) & 0xFFFF) }
    let blockAlign = channels * bits / 8
    var fmt: [UInt8] = Array("fmt ".utf8) + le32(16) + le16(formatTag) + le16(channels)
    fmt += le32(rate) + le32(rate * blockAlign) + le16(blockAlign) + le16(bits)
    var data: [UInt8] = Array("data".utf8) + le32(samples.count * 2)
    for sample in samples { data += le16(Int(UInt16(bitPattern: sample))) }
    // An odd-sized LIST chunk, padded, as editors write them.
    let list: [UInt8] = extraChunk ? Array("LIST".utf8) + le32(3) + [1, 2, 3, 0] : []
    let body = Array("WAVE".utf8) + fmt + list + data
    return Array("RIFF".utf8) + le32(body.count) + body
}

/// A fresh temporary directory, removed by `cleanUp`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        let base = FileManager.default.temporaryDirectory.path
        path = base + "/station-config-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let file = path + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        return file
    }

    func write(_ name: String, text: String) throws -> String {
        try write(name, Array(text.utf8))
    }

    func cleanUp() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
