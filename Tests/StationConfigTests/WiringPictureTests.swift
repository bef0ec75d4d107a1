import Foundation
import Testing

@testable import StationConfig

/// hardware/wiring.svg is WiringPicture's drawing of hardware/pi4-5-stations.toml as lineupd
/// reads it: a change of the file's pins (or of the drawing) without the picture fails here.
/// `LINEUP_WRITE_WIRING=1 swift test --filter WiringPictureTests` writes it again.
@Suite struct WiringPictureTests {
    static let file = LoaderTests.hardware + "/pi4-5-stations.toml"
    static let picture = LoaderTests.hardware + "/wiring.svg"

    @Test func theSVGInHardwareIsTheConfigurationFilesPins() throws {
        let drawn = WiringPicture.svg(try StationConfigLoader.load(path: Self.file), name: "pi4-5-stations.toml")
        if ProcessInfo.processInfo.environment["LINEUP_WRITE_WIRING"] == "1" {
            try drawn.write(toFile: Self.picture, atomically: true, encoding: .utf8)
        }
        let kept = try String(contentsOfFile: Self.picture, encoding: .utf8)
        #expect(
            kept == drawn,
            "hardware/wiring.svg is not the drawing of pi4-5-stations.toml: LINEUP_WRITE_WIRING=1 swift test --filter WiringPictureTests"
        )
    }

    /// Each line of the file is drawn at its header pin, as the README's pin table has them.
    @Test func eachLineIsAtItsHeaderPin() throws {
        let configuration = try StationConfigLoader.load(path: Self.file)
        let drawn = WiringPicture.svg(configuration, name: "pi4-5-stations.toml")
        for (title, pin) in [
            ("Station A sensor: GPIO17, pin 11", 11), ("Clicker button: GPIO23, pin 16", 16),
            ("Error button: GPIO24, pin 18", 18), ("Ready button: GPIO25, pin 22", 22), ("Buzzer: GPIO18, pin 12", 12),
        ] {
            #expect(drawn.contains(title), "\(title)")
            #expect(drawn.contains(">\(pin) GPIO"), "pin \(pin) is not labelled")
        }
        #expect(drawn.contains("B pin 13, C pin 15, D pin 29, E pin 31"))
        #expect(WiringPicture.bcm(.chipLabel("pinctrl-bcm2711", offset: 4)) == 4)
        #expect(WiringPicture.bcm(.name("GPIO_GCLK")) == nil)
        #expect(drawn.contains("hw:CARD=Headphones,DEV=0"))
    }
}
