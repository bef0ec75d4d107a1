import Foundation
import Testing

@testable import StationConfig

@Suite struct LoaderTests {
    /// The repository's `hardware/` folder, found from this file.
    static let hardware: String = {
        var path = #filePath
        for _ in 0..<3 { path = StationConfigLoader.directory(of: path) }
        return path + "/hardware"
    }()

    @Test func defaultsFromAMinimalFile() throws {
        let configuration = try accepted("[[stations]]\nline = \"GPIO17\"\n")
        #expect(configuration.source == stationFile)
        #expect(
            configuration.stations == [StationSpec(name: "A", input: InputLine(locator: .name("GPIO17")))]
        )
        #expect(configuration.stations[0].input.activeLow)
        #expect(configuration.stations[0].input.bias == .pullUp)
        #expect(configuration.buttons == ButtonSpecs())
        #expect(configuration.buzzer == nil)
        #expect(configuration.audio == AudioSpec())
        #expect(configuration.timing == TimingSpec())
        #expect(configuration.boardName == nil)
        #expect(configuration.selftest == nil)
    }

    @Test func theStartCueIsTheBoardsChoice() throws {
        #expect(try accepted("[[stations]]\nline = \"GPIO17\"\n").audio.startCue == false)
        #expect(try accepted("[[stations]]\nline = \"GPIO17\"\n[audio]\nstart_cue = true\n").audio.startCue)
        #expect(throws: StationConfigError.self) {
            try accepted("[[stations]]\nline = \"GPIO17\"\n[audio]\nstart_cue = \"yes\"\n")
        }
    }

    @Test func everyKeyIsRead() throws {
        let text = """
            [board]
            name = "bench"
            [[stations]]
            name = "left"
            chip = "pinctrl-rp1"
            offset = 17
            active_low = false
            bias = "pull-down"
            output = { chip = "pinctrl-rp1", offset = 12, active_low = true }
            [[stations]]
            name = "right"
            line = "GPIO27"
            bias = "as-is"
            output = "GPIO13"
            [buttons]
            clicker = "GPIO23"
            error = { line = "GPIO24", bias = "disabled", active_low = false }
            [buttons.ready]
            chip = "pinctrl-rp1"
            offset = 25
            [buzzer]
            line = "GPIO18"
            active_low = true
            pulse_ms = 20
            [audio]
            device = "hw:CARD=Device,DEV=0"
            rate = 44100
            period_frames = 128
            periods = 3
            channels = 1
            click = "builtin"
            click_frequency_hz = 2500.5
            click_ms = 8
            click_level = 0.5
            [timing]
            debounce_ms = 2.5
            hold_ms = 0
            hold_tolerance_ms = 0
            [selftest]
            output = { line = "GPIO21" }
            station = "right"
            """
        let configuration = try accepted(text)
        #expect(configuration.boardName == "bench")
        #expect(
            configuration.stations == [
                StationSpec(
                    name: "left",
                    input: InputLine(
                        locator: .chipLabel("pinctrl-rp1", offset: 17), activeLow: false, bias: .pullDown),
                    output: OutputLine(locator: .chipLabel("pinctrl-rp1", offset: 12), activeLow: true)),
                StationSpec(
                    name: "right", input: InputLine(locator: .name("GPIO27"), bias: .asIs),
                    output: OutputLine(locator: .name("GPIO13"))),
            ])
        #expect(
            configuration.buttons
                == ButtonSpecs(
                    clicker: InputLine(locator: .name("GPIO23")),
                    error: InputLine(locator: .name("GPIO24"), activeLow: false, bias: .disabled),
                    ready: InputLine(locator: .chipLabel("pinctrl-rp1", offset: 25))))
        #expect(
            configuration.buzzer
                == BuzzerSpec(
                    output: OutputLine(locator: .name("GPIO18"), activeLow: true), pulseMilliseconds: 20))
        #expect(
            configuration.audio
                == AudioSpec(
                    device: "hw:CARD=Device,DEV=0", rate: 44100, periodFrames: 128, periods: 3, channels: 1,
                    click: .builtin(frequency: 2500.5, milliseconds: 8, level: 0.5)))
        #expect(
            configuration.timing
                == TimingSpec(debounceMilliseconds: 2.5, holdMilliseconds: 0, holdToleranceMilliseconds: 0))
        #expect(
            configuration.selftest
                == SelftestSpec(
                    output: OutputLine(locator: .name("GPIO21")), stationIndex: 1, stationName: "right"))
    }

    @Test(arguments: ["pi4-5-stations.toml", "pi5-5-stations.toml"])
    func exampleFilesLoad(name: String) throws {
        let configuration = try StationConfigLoader.load(path: Self.hardware + "/" + name)
        #expect(configuration.stations.map(\.name) == ["A", "B", "C", "D", "E"])
        #expect(
            configuration.stations.allSatisfy {
                $0.output != nil && $0.input.activeLow && $0.input.bias == .pullUp
            })
        #expect(
            configuration.buttons.clicker != nil && configuration.buttons.error != nil
                && configuration.buttons.ready != nil)
        let selftest = try #require(configuration.selftest)
        #expect(selftest.stationName == "A")
        #expect(selftest.stationIndex == 0)
    }

    @Test func pi5ExampleKeepsTheI2SPinsFree() throws {
        let configuration = try StationConfigLoader.load(path: Self.hardware + "/pi5-5-stations.toml")
        var offsets: [Int] = []
        var lines = configuration.stations.flatMap {
            [$0.input.locator] + ($0.output.map { [$0.locator] } ?? [])
        }
        lines += [
            configuration.buttons.clicker, configuration.buttons.error, configuration.buttons.ready,
        ].compactMap {
            $0?.locator
        }
        lines += [configuration.buzzer?.output.locator, configuration.selftest?.output.locator]
            .compactMap { $0 }
        for line in lines {
            guard case .chipLabel("pinctrl-rp1", let offset) = line else {
                Issue.record("\(line) is not on pinctrl-rp1")
                continue
            }
            offsets.append(offset)
        }
        #expect(offsets.count == 14)
        #expect(Set(offsets).isDisjoint(with: [0, 1, 2, 3, 14, 15, 18, 19, 20, 21]))
        #expect(configuration.audio.device == "hw:CARD=sndrpihifiberry,DEV=0")
    }

    @Test func pi4ExampleNamesLinesBothWays() throws {
        let configuration = try StationConfigLoader.load(path: Self.hardware + "/pi4-5-stations.toml")
        #expect(configuration.stations[0].input.locator == .name("GPIO17"))
        #expect(configuration.stations[4].output?.locator == .chipLabel("pinctrl-bcm2711", offset: 4))
        #expect(configuration.audio.periodFrames * configuration.audio.periods == 512)
        #expect(configuration.audio.rate == 44100)
    }

    @Test func aMissingFileNamesThePathAndTheReason() throws {
        let path = "/nonexistent/lineup/station.toml"
        let error = try #require(throws: StationConfigError.self) {
            try StationConfigLoader.load(path: path)
        }
        #expect(error.code == .unreadableFile)
        #expect(error.file == path)
        #expect(error.description == "\(path): cannot read the file: No such file or directory")
    }

    @Test func aDirectoryIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let error = try #require(throws: StationConfigError.self) {
            try StationConfigLoader.load(path: directory.path)
        }
        #expect(error.code == .unreadableFile)
        #expect(error.description == "\(directory.path): cannot read the file: is a directory")
    }

    @Test(.enabled(if: getuid() != 0, "root reads any file"))
    func permissionDeniedNamesTheReason() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = try directory.write("station.toml", text: "[[stations]]\nline = \"GPIO17\"\n")
        #expect(chmod(path, 0) == 0)
        let error = try #require(throws: StationConfigError.self) {
            try StationConfigLoader.load(path: path)
        }
        #expect(error.description == "\(path): cannot read the file: Permission denied")
    }

    @Test func notUTF8IsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = try directory.write("station.toml", [0x5B, 0xFF, 0xFE, 0x5D])
        let error = try #require(throws: StationConfigError.self) {
            try StationConfigLoader.load(path: path)
        }
        #expect(error.code == .unreadableFile)
        #expect(error.message == "cannot read the file: not UTF-8 text (TOML is UTF-8)")
        #expect(error.line == 1 && error.column == 2)
    }

    /// TOML is UTF-8, comments too (issue 32: a Latin-1 "é" in a comment was not refused in a
    /// line naming where it is). One line naming the file, the line and the column.
    @Test func invalidUTF8InACommentIsRefusedNamingItsLine() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let board = stations(2) + "\n"
        let line = board.filter { $0 == "\n" }.count + 1
        let text = Array(board.utf8) + Array("# the caf".utf8) + [0xE9] + Array(" board\n".utf8)
        let path = try directory.write("station.toml", text)
        let error = try #require(throws: StationConfigError.self) {
            try StationConfigLoader.load(path: path)
        }
        #expect(error.code == .unreadableFile)
        #expect(error.line == line && error.column == 10)
        #expect(error.description == "\(path):\(line):10: cannot read the file: not UTF-8 text (TOML is UTF-8)")
        // A well-formed "é" in the same comment is read.
        let good = try directory.write("good.toml", Array((board + "# the café board\n").utf8))
        #expect(throws: Never.self) { _ = try StationConfigLoader.load(path: good) }
    }

    @Test func aNULByteIsASyntaxErrorWithItsLine() throws {
        let error = try #require(refusal("[[stations]]\nline = \"GPIO17\"\n\u{0}\n"))
        #expect(error.code == .syntax)
        #expect(error.line == 3)
    }
}
