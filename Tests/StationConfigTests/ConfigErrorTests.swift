import Testing

@testable import StationConfig

@Suite struct ConfigErrorTests {
    @Test func syntaxErrorGivesLineAndColumn() throws {
        let error = try #require(refusal("[[stations]]\nname = \"A\"\nline = \n"))
        #expect(error.code == .syntax)
        #expect(error.line == 3)
        #expect(error.column != nil)
        #expect(error.description.hasPrefix("\(stationFile):3:"))
        #expect(error.message.hasPrefix("TOML syntax error: "))
    }

    /// What TOMLKit's parser aborts on (a table name starting with '/', found by the program
    /// loader's fuzz test) is one syntax error in a board file too, never a crashed lineupd.
    @Test(arguments: ["[/board]\n", "[audio]\nrate = 1979-05-27T-inf:32:00Z\n", "[\n"])
    func whatTheParserWouldAbortOnIsOneError(text: String) throws {
        let error = try #require(refusal(text + stations(1)))
        #expect(error.code == .syntax)
        #expect(error.line != nil && error.column != nil)
        #expect(error.message.hasPrefix("TOML syntax error: line "), "\(error.message)")
        #expect(!error.description.contains("\n"))
    }

    @Test func keyDefinedTwiceIsASyntaxError() throws {
        let error = try #require(refusal("[audio]\nrate = 48000\nrate = 44100\n" + stations(1)))
        #expect(error.code == .syntax)
        #expect(error.line == 3)
    }

    @Test func unknownKeyNamesItsFullPath() throws {
        let text = stations(2) + "[[stations]]\nname = \"C\"\nline = \"GPIO22\"\nactiv_low = false\n"
        let error = try #require(refusal(text))
        #expect(error.code == .unknownKey)
        #expect(error.keyPath == "stations[2].activ_low")
        #expect(error.message == "unknown key (did you mean active_low?)")
        #expect(
            error.description
                == "\(stationFile): stations[2].activ_low: unknown key (did you mean active_low?)")
    }

    @Test func unknownKeysEverywhere() throws {
        let cases: [(String, String)] = [
            ("[stationz]\nx = 1\n" + stations(1), "stationz"),
            (stations(1) + "[audio]\nperiod_size = 64\n", "audio.period_size"),
            (
                stations(1) + "[buttons]\nclicker = { line = \"GPIO23\", pin = 16 }\n",
                "buttons.clicker.pin"
            ),
            (stations(1) + "[buttons]\nstart = \"GPIO23\"\n", "buttons.start"),
            (stations(1) + "[timing]\nhold = 2000\n", "timing.hold"),
            (stations(1) + "[buzzer]\nline = \"GPIO18\"\nbias = \"pull-up\"\n", "buzzer.bias"),
            (
                "[[stations]]\nline = \"GPIO17\"\noutput = { line = \"GPIO12\", bias = \"pull-up\" }\n",
                "stations[0].output.bias"
            ),
            (stations(1) + "[selftest]\noutput = \"GPIO21\"\ninput = \"S0\"\n", "selftest.input"),
            (stations(1) + "[board]\nname = \"x\"\nmodel = \"pi4\"\n", "board.model"),
        ]
        for (text, keyPath) in cases {
            let error = try #require(refusal(text))
            #expect(error.code == .unknownKey, "\(keyPath)")
            #expect(error.keyPath == keyPath)
            #expect(error.message.hasPrefix("unknown key"))
        }
    }

    @Test func unknownKeyWithoutAGuessListsTheKnownKeys() throws {
        let error = try #require(refusal(stations(1) + "[timing]\nbanana = 1\n"))
        #expect(
            error.message == "unknown key; expected one of: debounce_ms, hold_ms, hold_tolerance_ms")
    }

    @Test func wrongTypeNamesExpectedAndFound() throws {
        let cases: [(String, String, String)] = [
            (
                stations(1) + "[audio]\nrate = \"48k\"\n", "audio.rate",
                "expected an integer, found a string (\"48k\")"
            ),
            (
                stations(1) + "[audio]\nperiods = 2.5\n", "audio.periods",
                "expected an integer, found a floating-point number (2.5)"
            ),
            (
                "[[stations]]\nline = \"GPIO17\"\nactive_low = \"yes\"\n", "stations[0].active_low",
                "expected a boolean (true or false), found a string (\"yes\")"
            ),
            (
                stations(1) + "[timing]\nhold_ms = \"2s\"\n", "timing.hold_ms",
                "expected a number, found a string (\"2s\")"
            ),
            (
                "[stations]\nname = \"A\"\n", "stations",
                "expected an array of tables ([[stations]]), found a table"
            ),
            ("stations = [1, 2]\n", "stations[0]", "expected a table, found an integer (1)"),
            ("audio = 3\n" + stations(1), "audio", "expected a table, found an integer (3)"),
            (
                "[[stations]]\nname = 1\nline = \"GPIO17\"\n", "stations[0].name",
                "expected a string, found an integer (1)"
            ),
        ]
        for (text, keyPath, message) in cases {
            let error = try #require(refusal(text))
            #expect(error.code == .wrongType, "\(keyPath)")
            #expect(error.keyPath == keyPath)
            #expect(error.message == message)
        }
    }

    @Test func aLineGivenAsANumberSaysHowToGiveAnOffset() throws {
        let error = try #require(refusal("[[stations]]\nline = 17\n"))
        #expect(error.code == .wrongType)
        #expect(error.keyPath == "stations[0].line")
        #expect(error.message.contains("for an offset use chip and offset"))
        #expect(error.message.hasSuffix("found an integer (17)"))

        let quoted = try #require(refusal("[[stations]]\nline = \"17\"\n"))
        #expect(quoted.code == .invalidValue)
        #expect(quoted.message.contains("write \"GPIO17\""))
    }

    @Test func aStationWithoutALineIsNamed() throws {
        let error = try #require(
            refusal(stations(1) + "[[stations]]\nname = \"B\"\nactive_low = true\n"))
        #expect(error.code == .missingKey)
        #expect(error.keyPath == "stations[1].line")
        #expect(error.message.hasPrefix("missing: give the GPIO line by name"))
    }

    @Test func chipAndOffsetMustComeTogether() throws {
        let noOffset = try #require(refusal("[[stations]]\nchip = \"pinctrl-rp1\"\n"))
        #expect(noOffset.code == .missingKey)
        #expect(noOffset.keyPath == "stations[0].offset")

        let noChip = try #require(refusal(stations(1) + "[buttons]\nready = { offset = 25 }\n"))
        #expect(noChip.code == .missingKey)
        #expect(noChip.keyPath == "buttons.ready.chip")

        let both = try #require(
            refusal("[[stations]]\nline = \"GPIO17\"\nchip = \"pinctrl-rp1\"\noffset = 17\n"))
        #expect(both.code == .invalidValue)
        #expect(both.keyPath == "stations[0].chip")
        #expect(both.message == "give either line or chip + offset, not both")
    }

    @Test func aChipIsNamedByItsLabelNotItsNumber() throws {
        let error = try #require(refusal("[[stations]]\nchip = \"gpiochip4\"\noffset = 17\n"))
        #expect(error.code == .invalidValue)
        #expect(error.keyPath == "stations[0].chip")
        #expect(error.message.contains("give its label instead"))
    }

    @Test func missingStationsAndSelftestParts() throws {
        let none = try #require(refusal("[audio]\nrate = 48000\n"))
        #expect(none.code == .missingKey)
        #expect(none.keyPath == "stations")

        let noOutput = try #require(refusal(stations(1) + "[selftest]\nstation = \"S0\"\n"))
        #expect(noOutput.code == .missingKey)
        #expect(noOutput.keyPath == "selftest.output")

        let noStation = try #require(refusal(stations(1) + "[selftest]\noutput = \"GPIO21\"\n"))
        #expect(noStation.code == .missingKey)
        #expect(noStation.keyPath == "selftest.station")

        let unknown = try #require(
            refusal(stations(2) + "[selftest]\noutput = \"GPIO21\"\nstation = \"Z\"\n"))
        #expect(unknown.code == .invalidValue)
        #expect(unknown.keyPath == "selftest.station")
        #expect(unknown.message == "no station is named \"Z\"; the stations are \"S0\", \"S1\"")
    }

    @Test func aLineUsedTwiceNamesBothKeys() throws {
        let text = stations(2) + "[[stations]]\nname = \"C\"\nline = \"GPIO17\"\n"
        let error = try #require(refusal(text))
        #expect(error.code == .duplicateLine)
        #expect(error.keyPath == "stations[2].line")
        #expect(
            error.description
                == "\(stationFile): stations[2].line: \"GPIO17\" is already used by stations[0].line")
    }

    @Test func aLineUsedTwiceAcrossEveryKindOfUser() throws {
        let cases: [(String, String, String)] = [
            // A station's output on another station's input.
            (
                "[[stations]]\nline = \"GPIO17\"\noutput = \"GPIO17\"\n", "stations[0].output",
                "\"GPIO17\" is already used by stations[0].line"
            ),
            // A button on a station's output, given as a table.
            (
                "[[stations]]\nline = \"GPIO17\"\noutput = \"GPIO12\"\n[buttons]\nerror = { line = \"GPIO12\" }\n",
                "buttons.error.line", "\"GPIO12\" is already used by stations[0].output"
            ),
            // Two buttons on one line.
            (
                stations(1) + "[buttons]\nclicker = \"GPIO23\"\nready = \"GPIO23\"\n", "buttons.ready",
                "\"GPIO23\" is already used by buttons.clicker"
            ),
            // The buzzer on a button.
            (
                stations(1) + "[buttons]\nclicker = \"GPIO23\"\n[buzzer]\nline = \"GPIO23\"\n",
                "buzzer.line",
                "\"GPIO23\" is already used by buttons.clicker"
            ),
            // The jumper on the buzzer.
            (
                stations(1)
                    + "[buzzer]\nline = \"GPIO18\"\n[selftest]\noutput = \"GPIO18\"\nstation = \"S0\"\n",
                "selftest.output", "\"GPIO18\" is already used by buzzer.line"
            ),
            // The same chip label and offset twice.
            (
                "[[stations]]\nchip = \"pinctrl-rp1\"\noffset = 17\n[[stations]]\nchip = \"pinctrl-rp1\"\noffset = 17\n",
                "stations[1].offset", "\"pinctrl-rp1\" offset 17 is already used by stations[0].offset"
            ),
            // A header line by name and by chip label + offset.
            (
                "[[stations]]\nline = \"GPIO17\"\n[[stations]]\nchip = \"pinctrl-bcm2711\"\noffset = 17\n",
                "stations[1].offset",
                "\"pinctrl-bcm2711\" offset 17 is the same Raspberry Pi header line as \"GPIO17\","
                    + " already used by stations[0].line"
            ),
        ]
        for (text, keyPath, message) in cases {
            let error = try #require(refusal(text))
            #expect(error.code == .duplicateLine, "\(keyPath)")
            #expect(error.keyPath == keyPath)
            #expect(error.message == message)
        }
    }

    @Test func sameOffsetOnDifferentChipsIsFine() throws {
        let configuration = try accepted(
            "[[stations]]\nchip = \"pinctrl-rp1\"\noffset = 3\n[[stations]]\nchip = \"other-chip\"\noffset = 3\n"
        )
        #expect(configuration.stations.count == 2)
    }

    @Test func numbersOutOfRangeAreNamed() throws {
        let cases: [(String, String, String)] = [
            (
                "[audio]\nrate = 1000\n", "audio.rate",
                "1000 Hz is out of range; expected 8000 to 192000 Hz"
            ),
            (
                "[audio]\nperiod_frames = 0\n", "audio.period_frames",
                "0 frames is out of range; expected 16 to 8192 frames"
            ),
            ("[audio]\nperiods = 1\n", "audio.periods", "1 is out of range; expected 2 to 32"),
            ("[audio]\nchannels = 0\n", "audio.channels", "0 is out of range; expected 1 to 8"),
            ("[audio]\nclick_level = 1.5\n", "audio.click_level", "1.5 is out of range; expected 0 to 1"),
            (
                "[audio]\nclick_level = 0\n", "audio.click_level",
                "0 is silent; expected more than 0, up to 1"
            ),
            (
                "[audio]\nrate = 8000\nclick_frequency_hz = 5000\n", "audio.click_frequency_hz",
                "a 5000 Hz click needs audio.rate above 10000 Hz (it is 8000 Hz)"
            ),
            (
                "[timing]\ndebounce_ms = -1\n", "timing.debounce_ms",
                "-1 ms is out of range; expected 0 to 1000 ms"
            ),
            (
                "[timing]\ndebounce_ms = nan\n", "timing.debounce_ms",
                "nan ms is out of range; expected 0 to 1000 ms"
            ),
            (
                "[timing]\nhold_ms = 100000\n", "timing.hold_ms",
                "100000 ms is out of range; expected 0 to 60000 ms"
            ),
            (
                "[timing]\nhold_ms = 500\nhold_tolerance_ms = 500\n", "timing.hold_tolerance_ms",
                "hold_tolerance_ms (500 ms) must be shorter than hold_ms (500 ms)"
            ),
            (
                "[timing]\nhold_ms = 100\n", "timing.hold_ms",
                "hold_tolerance_ms (150 ms, the default) must be shorter than hold_ms (100 ms)"
            ),
            (
                "[buzzer]\nline = \"GPIO18\"\npulse_ms = 0\n", "buzzer.pulse_ms",
                "0 ms is out of range; expected 1 to 1000 ms"
            ),
        ]
        for (section, keyPath, message) in cases {
            let error = try #require(refusal(stations(1) + section))
            #expect(error.code == .outOfRange, "\(keyPath)")
            #expect(error.keyPath == keyPath)
            #expect(error.message == message)
        }
    }

    @Test func offsetOutOfRange() throws {
        let error = try #require(refusal("[[stations]]\nchip = \"pinctrl-rp1\"\noffset = -1\n"))
        #expect(error.code == .outOfRange)
        #expect(error.keyPath == "stations[0].offset")
    }

    @Test func stationCountMustBeOneToSixteen() throws {
        let zero = try #require(refusal("stations = []\n"))
        #expect(zero.code == .outOfRange)
        #expect(zero.keyPath == "stations")
        #expect(zero.message == "no stations; a lineup needs 1 to 16")

        var many = ""
        for i in 0..<17 { many += "[[stations]]\nchip = \"pinctrl-rp1\"\noffset = \(i)\n" }
        let tooMany = try #require(refusal(many))
        #expect(tooMany.code == .outOfRange)
        #expect(tooMany.message == "17 stations; at most 16 are supported")

        let sixteen = try accepted(
            String(many.split(separator: "[[stations]]").dropLast().map { "[[stations]]" + $0 }.joined()))
        #expect(sixteen.stations.count == 16)
        #expect(sixteen.stations[15].name == "P")
    }

    @Test func duplicateStationNames() throws {
        let error = try #require(
            refusal(stations(2) + "[[stations]]\nname = \"s1\"\nline = \"GPIO22\"\n"))
        #expect(error.code == .duplicateName)
        #expect(error.keyPath == "stations[2].name")
        #expect(error.message == "\"s1\" is already the name of stations[1]")

        let defaulted = try #require(
            refusal("[[stations]]\nname = \"B\"\nline = \"GPIO17\"\n[[stations]]\nline = \"GPIO27\"\n"))
        #expect(defaulted.code == .duplicateName)
        #expect(defaulted.keyPath == "stations[1]")
    }

    @Test func badValues() throws {
        let bias = try #require(refusal("[[stations]]\nline = \"GPIO17\"\nbias = \"pullup\"\n"))
        #expect(bias.code == .invalidValue)
        #expect(bias.keyPath == "stations[0].bias")
        #expect(
            bias.message
                == "\"pullup\" is not a bias (did you mean pull-up?); expected one of as-is, pull-up, pull-down, disabled"
        )

        let emptyName = try #require(refusal("[[stations]]\nname = \" \"\nline = \"GPIO17\"\n"))
        #expect(emptyName.code == .invalidValue)
        #expect(emptyName.message == "a station's name must not be empty")

        let emptyLine = try #require(refusal("[[stations]]\nline = \"\"\n"))
        #expect(emptyLine.keyPath == "stations[0].line")
        #expect(emptyLine.message == "a line name must not be empty")

        let builtinOnly = try #require(
            refusal(stations(1) + "[audio]\nclick = \"click.wav\"\nclick_ms = 5\n"))
        #expect(builtinOnly.code == .invalidValue)
        #expect(builtinOnly.keyPath == "audio.click_ms")
    }

    @Test func everyErrorIsOneLineWithTheFile() throws {
        let texts = [
            "[[stations]\n", "x = \"a\nb\"\n", "[[stations]]\nname = \"a\\nb\"\nline = \"GPIO17\"\n",
            "[[stations]]\n\"odd key\" = 1\nline = \"GPIO17\"\n",
        ]
        for text in texts {
            let error = try #require(refusal(text))
            #expect(!error.description.contains("\n"))
        }
        let quotedKey = try #require(refusal(texts[3]))
        #expect(quotedKey.keyPath == "stations[0].\"odd key\"")
    }
}

/// `[log]`: the free-space thresholds lineupd checks at each session start.
@Suite struct LogSpaceConfigTests {
    @Test func defaultsAndGivenValues() throws {
        #expect(try accepted(stations(1)).log == LogSpec(warnFreeMegabytes: 200, minFreeMegabytes: 20))
        let given = try accepted(stations(1) + "[log]\nwarn_free_mb = 500\nmin_free_mb = 50\n")
        #expect(given.log == LogSpec(warnFreeMegabytes: 500, minFreeMegabytes: 50))
    }

    @Test func badValuesNameTheFileAndKey() throws {
        let cases: [(String, StationConfigError.Code, String, String)] = [
            ("[log]\nwarn_free_mb = \"lots\"\n", .wrongType, "log.warn_free_mb", "expected an integer"),
            ("[log]\nmin_free_mb = -1\n", .outOfRange, "log.min_free_mb", "-1 MB is out of range"),
            ("[log]\nmin_free_mb = 2.5\n", .wrongType, "log.min_free_mb", "expected an integer"),
            (
                "[log]\nwarn_free_mb = 10\nmin_free_mb = 50\n", .outOfRange, "log.warn_free_mb",
                "warn_free_mb (10 MB) must not be below min_free_mb (50 MB)"
            ),
            // The default warning (200 MB) under a given minimum: the minimum is the key to fix.
            ("[log]\nmin_free_mb = 300\n", .outOfRange, "log.min_free_mb", "200 MB, the default"),
            ("[log]\nfree_mb = 10\n", .unknownKey, "log.free_mb", "unknown key"),
            ("log = 3\n", .wrongType, "log", "expected a table"),
        ]
        for (section, code, keyPath, words) in cases {
            // A root key must come before the first table.
            let text = section.hasPrefix("[") ? stations(1) + section : section + stations(1)
            let error = try #require(refusal(text), "\(section)")
            #expect(error.code == code, "\(section)")
            #expect(error.keyPath == keyPath, "\(section)")
            #expect(error.description.contains(words), "\(error.description)")
            #expect(error.description.hasPrefix("\(stationFile): \(keyPath): "), "\(error.description)")
        }
    }
}
