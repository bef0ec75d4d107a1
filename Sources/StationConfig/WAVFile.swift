/// A minimal reader for the click's WAV file: RIFF/WAVE, a `fmt ` chunk for 16-bit PCM
/// (plain or WAVE_FORMAT_EXTENSIBLE with the PCM sub-format), mono or stereo, and a `data` chunk.
/// Every offset is checked against the bytes actually there: a truncated or garbage file is
/// an error with a reason, never a trap.
struct WAVFile: Equatable {
    var channels: Int
    var rate: Int
    /// Interleaved frames.
    var samples: [Int16]

    /// Why a WAV file cannot be used; `reason` is phrased to follow the file's name.
    struct Failure: Error, Equatable {
        var reason: String
    }

    static func parse(_ bytes: [UInt8]) -> Result<WAVFile, Failure> {
        func fail(_ reason: String) -> Result<WAVFile, Failure> { .failure(Failure(reason: reason)) }

        guard bytes.count >= 12 else {
            return fail(
                bytes.isEmpty ? "is empty" : "is too short to be a WAV file (\(bytes.count) bytes)")
        }
        guard tag(bytes, 0) == "RIFF", tag(bytes, 8) == "WAVE" else {
            return fail("is not a WAV file (no RIFF/WAVE header)")
        }

        var format: (channels: Int, rate: Int, blockAlign: Int)?
        var offset = 12
        while offset + 8 <= bytes.count {
            let id = tag(bytes, offset)
            let size = Int(le32(bytes, offset + 4))
            let body = offset + 8
            let available = bytes.count - body

            switch id {
            case "fmt ":
                guard size >= 16, size <= available else {
                    return fail("is truncated: its fmt chunk is incomplete")
                }
                let formatTag = Int(le16(bytes, body))
                let channels = Int(le16(bytes, body + 2))
                let rate = Int(le32(bytes, body + 4))
                let blockAlign = Int(le16(bytes, body + 12))
                let bits = Int(le16(bytes, body + 14))
                var isPCM = formatTag == 1
                if formatTag == 0xFFFE {
                    // WAVE_FORMAT_EXTENSIBLE: the sub-format GUID starts at byte 24 of the chunk.
                    guard size >= 40 else {
                        return fail("is truncated: its extensible fmt chunk is incomplete")
                    }
                    isPCM = le16(bytes, body + 24) == 1
                }
                guard isPCM else {
                    return fail("is not PCM (format tag \(formatTag)); save it as 16-bit PCM")
                }
                guard bits == 16 else {
                    return fail("has \(bits)-bit samples; only 16-bit PCM is supported")
                }
                guard channels == 1 || channels == 2 else {
                    return fail("has \(channels) channels; only mono or stereo is supported")
                }
                guard blockAlign == channels * 2 else {
                    return fail(
                        "has an inconsistent fmt chunk (block align \(blockAlign) for \(channels) x 16 bit)")
                }
                guard rate > 0 else { return fail("has a sample rate of 0") }
                format = (channels, rate, blockAlign)

            case "data":
                guard let format else { return fail("has its data chunk before its fmt chunk") }
                guard size <= available else {
                    return fail(
                        "is truncated: its data chunk says \(size) bytes but only \(available) follow")
                }
                guard size % format.blockAlign == 0 else {
                    return fail("is truncated: its data chunk ends in the middle of a frame")
                }
                let count = size / 2
                guard count > 0 else { return fail("has no samples") }
                var samples = [Int16](repeating: 0, count: count)
                for i in 0..<count {
                    samples[i] = Int16(bitPattern: le16(bytes, body + 2 * i))
                }
                return .success(WAVFile(channels: format.channels, rate: format.rate, samples: samples))

            default:
                guard size <= available else {
                    return fail("is truncated: its \(printable(id)) chunk runs past the end of the file")
                }
            }
            // Chunks are padded to an even length.
            offset = body + size + (size & 1)
        }
        return fail(format == nil ? "has no fmt chunk" : "has no data chunk")
    }

    private static func tag(_ bytes: [UInt8], _ at: Int) -> String {
        String(decoding: bytes[at..<at + 4], as: UTF8.self)
    }

    private static func printable(_ id: String) -> String {
        let clean = id.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }
        return clean ? "\"\(id)\"" : "unnamed"
    }

    private static func le16(_ bytes: [UInt8], _ at: Int) -> UInt16 {
        UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
    }

    private static func le32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(
            bytes[at + 3]) << 24
    }
}
