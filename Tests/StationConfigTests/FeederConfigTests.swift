import Testing

@testable import StationConfig

/// `[feeder]`: its line, delay and pulse, and each bad value refused in one line naming the key
/// and the file.
@Suite struct FeederConfigTests {
    @Test func aFeederWithItsDelayAndPulse() throws {
        let board = try accepted(
            stations(2) + "[feeder]\nline = \"GPIO16\"\ndelay_ms = 250\npulse_ms = 40\nactive_low = true\n")
        let feeder = try #require(board.feeder)
        #expect(feeder.output == OutputLine(locator: .name("GPIO16"), activeLow: true))
        #expect(feeder.delayMilliseconds == 250)
        #expect(feeder.pulseMilliseconds == 40)
    }

    @Test func theProjectsDefaultsAndNoFeederWithoutTheSection() throws {
        let feeder = try #require(try accepted(stations(1) + "[feeder]\nchip = \"gpio-sim\"\noffset = 3\n").feeder)
        #expect(feeder.output.locator == .chipLabel("gpio-sim", offset: 3))
        #expect(feeder.delayMilliseconds == 0)
        #expect(feeder.pulseMilliseconds == 100)
        #expect(try accepted(stations(1)).feeder == nil)
    }

    @Test func badValuesAreOneErrorNamingTheKey() throws {
        let cases: [(String, StationConfigError.Code, String, String)] = [
            ("delay_ms = -1\n", .outOfRange, "feeder.delay_ms", "-1 ms is out of range; expected 0 to 5000 ms"),
            ("delay_ms = 5001\n", .outOfRange, "feeder.delay_ms", "5001 ms is out of range; expected 0 to 5000 ms"),
            ("pulse_ms = 0\n", .outOfRange, "feeder.pulse_ms", "0 ms is out of range; expected 1 to 5000 ms"),
            ("pulse_ms = 5001\n", .outOfRange, "feeder.pulse_ms", "5001 ms is out of range; expected 1 to 5000 ms"),
            ("pulse_ms = \"long\"\n", .wrongType, "feeder.pulse_ms", "expected an integer"),
            ("delay_ms = 2.5\n", .wrongType, "feeder.delay_ms", "expected an integer"),
            ("width_ms = 10\n", .unknownKey, "feeder.width_ms", "unknown key"),
        ]
        for (keys, code, keyPath, message) in cases {
            let error = try #require(refusal(stations(1) + "[feeder]\nline = \"GPIO16\"\n" + keys))
            #expect(error.code == code, "\(keys)")
            #expect(error.keyPath == keyPath, "\(keys)")
            #expect(error.message.hasPrefix(message), "\(error.message)")
            #expect(error.description.hasPrefix("\(stationFile): \(keyPath): "))
        }
    }

    @Test func aFeederNeedsItsOwnLine() throws {
        let missing = try #require(refusal(stations(1) + "[feeder]\ndelay_ms = 10\n"))
        #expect(missing.code == .missingKey)
        #expect(missing.keyPath == "feeder.line")
        let shared = try #require(
            refusal(stations(1) + "[buzzer]\nline = \"GPIO18\"\n[feeder]\nline = \"GPIO18\"\n"))
        #expect(shared.keyPath == "feeder.line")
        #expect(shared.message.contains("\"GPIO18\" is already used by buzzer.line"))
    }
}
