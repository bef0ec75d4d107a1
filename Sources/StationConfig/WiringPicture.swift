// The wiring picture of hardware/README.md (hardware/wiring.svg), drawn from a configuration
// file as lineupd reads it, so the picture and the file cannot disagree: the 40-pin header with
// the lines the file uses, and one wire from each pin to what it drives or reads (the first
// station's sensor, the three buttons, the buzzer, the feeder), with the click's speaker on the
// board's audio output. `WiringPictureTests` checks the SVG in hardware/ is this drawing of
// hardware/pi4-5-stations.toml.

public enum WiringPicture {
    /// The 40-pin header of every Raspberry Pi since the B+: BCM GPIO number to physical pin.
    public static let headerPin: [Int: Int] = [
        0: 27, 1: 28, 2: 3, 3: 5, 4: 7, 5: 29, 6: 31, 7: 26, 8: 24, 9: 21, 10: 19, 11: 23, 12: 32, 13: 33, 14: 8,
        15: 10, 16: 36, 17: 11, 18: 12, 19: 35, 20: 38, 21: 40, 22: 15, 23: 16, 24: 18, 25: 22, 26: 37, 27: 13,
    ]
    static let groundPins: Set = [6, 9, 14, 20, 25, 30, 34, 39]
    static let powerPins: [Int: String] = [1: "3.3 V", 17: "3.3 V", 2: "5 V", 4: "5 V"]

    /// The BCM number of a line the file names: `GPIO17`, or offset 17 on the header's chip
    /// (`pinctrl-bcm2711`, `pinctrl-rp1`: their offsets are the BCM numbers). Nil for a line
    /// named otherwise (`GPIO_GCLK`): the picture cannot place it.
    public static func bcm(_ locator: LineLocator) -> Int? {
        switch locator {
        case .name(let name):
            guard name.hasPrefix("GPIO"), let n = Int(name.dropFirst(4)) else { return nil }
            return n
        case .chipLabel(let label, let offset): return label.hasPrefix("pinctrl-") ? offset : nil
        }
    }

    struct Wire {
        var title: String
        var detail: [String]
        var line: LineLocator?
        var colour: String
    }

    static func pinOnly(_ locator: LineLocator) -> String {
        guard let n = bcm(locator), let pin = headerPin[n] else { return "\(locator)" }
        return "pin \(pin)"
    }

    static func place(_ locator: LineLocator) -> String {
        guard let n = bcm(locator), let pin = headerPin[n] else { return "\(locator) (not on the header)" }
        return "GPIO\(n), pin \(pin)"
    }

    /// The picture of `configuration`, titled by the file it came from (`name`).
    public static func svg(_ configuration: StationConfiguration, name: String) -> String {
        var wires: [Wire] = []
        if let first = configuration.stations.first {
            let others = configuration.stations.dropFirst().map { "\($0.name) \(pinOnly($0.input.locator))" }
            wires.append(
                Wire(
                    title: "Station \(first.name) sensor: \(place(first.input.locator))",
                    detail: [
                        first.input.activeLow
                            ? "pulls the line to GND when the nose is there"
                            : "drives the line high when the nose is there",
                        "bias \(first.input.bias.rawValue); never 5 V into a GPIO",
                    ] + (others.isEmpty ? [] : ["the other stations the same way: " + others.joined(separator: ", ")]),
                    line: first.input.locator, colour: "#1d4ed8"))
        }
        let buttons: [(String, InputLine?, String)] = [
            ("Clicker", configuration.buttons.clicker, "#166534"), ("Error", configuration.buttons.error, "#b3261e"),
            ("Ready", configuration.buttons.ready, "#7c3aed"),
        ]
        for (title, line, colour) in buttons {
            guard let line else { continue }
            wires.append(
                Wire(
                    title: "\(title) button: \(place(line.locator))",
                    detail: ["momentary push button between the pin and GND"], line: line.locator, colour: colour))
        }
        if let buzzer = configuration.buzzer {
            wires.append(
                Wire(
                    title: "Buzzer: \(place(buzzer.output.locator))",
                    detail: ["active piezo through an NPN transistor or logic-level MOSFET, never from the pin"],
                    line: buzzer.output.locator, colour: "#b45309"))
        }
        if let feeder = configuration.feeder {
            wires.append(
                Wire(
                    title: "Feeder: \(place(feeder.output.locator))",
                    detail: [
                        "relay module or MOSFET to the dispenser's trigger; \(feeder.pulseMilliseconds) ms a pulse"
                    ],
                    line: feeder.output.locator, colour: "#0f766e"))
        } else {
            wires.append(
                Wire(
                    title: "Feeder: none in this file",
                    detail: ["add [feeder] with a free line; wire it as a valve (README, section 3)"], line: nil,
                    colour: "#0f766e"))
        }
        wires.append(
            Wire(
                title: "Speaker: the click's sound", detail: ["amplified speaker on \(configuration.audio.device)"],
                line: nil, colour: "#374151"))

        let rowHeight = 24
        let top = 90
        let boxX = 370
        let boxHeight = 74
        let height = max(top + 20 * rowHeight + 40, top + wires.count * (boxHeight + 12) + 20)
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 900 \(height)" width="900" height="\(height)" \
            font-family="sans-serif" font-size="13" role="img" aria-labelledby="title">
            <title id="title">Wiring of \(escaped(name))</title>
            <rect width="900" height="\(height)" fill="#ffffff"/>
            <text x="20" y="30" font-size="20" font-weight="bold">Wiring of \(escaped(name))</text>
            <text x="20" y="52">Drawn from the file by WiringPicture (Sources/StationConfig). GPIOs are 3.3 V: never 5 V into a pin.</text>
            <text x="20" y="72">Raspberry Pi 40-pin header seen from above, pin 1 (its square pad) at the top left; odd pins on the left.</text>

            """
        var used: [Int: String] = [:]
        for wire in wires {
            if let line = wire.line, let n = bcm(line), let pin = headerPin[n] { used[pin] = wire.colour }
        }
        let bcmOf = Dictionary(uniqueKeysWithValues: headerPin.map { ($0.value, $0.key) })
        for row in 0..<20 {
            for column in 0..<2 {
                let pin = row * 2 + column + 1
                let x = 110 + column * 40
                let y = top + row * rowHeight
                let fill =
                    used[pin] ?? (groundPins.contains(pin) ? "#111111" : powerPins[pin] != nil ? "#dc2626" : "#d1d5db")
                out += ##"<circle cx="\##(x)" cy="\##(y)" r="8" fill="\##(fill)" stroke="#374151"/>"## + "\n"
                let label =
                    groundPins.contains(pin)
                    ? "GND" : powerPins[pin] ?? bcmOf[pin].map { "GPIO\($0)" } ?? ""
                let labelX = column == 0 ? x - 14 : x + 14
                let anchor = column == 0 ? "end" : "start"
                out +=
                    ##"<text x="\##(labelX)" y="\##(y + 4)" font-size="10" text-anchor="\##(anchor)">\##(pin) \##(label)</text>"##
                    + "\n"
            }
        }
        for (index, wire) in wires.enumerated() {
            let boxY = top - 14 + index * (boxHeight + 12)
            out +=
                ##"<rect x="\##(boxX)" y="\##(boxY)" width="510" height="\##(boxHeight)" rx="8" fill="#f9fafb" stroke="\##(wire.colour)" stroke-width="2"/>"##
                + "\n"
            out +=
                ##"<text x="\##(boxX + 12)" y="\##(boxY + 22)" font-weight="bold" fill="\##(wire.colour)">\##(escaped(wire.title))</text>"##
                + "\n"
            for (i, text) in wire.detail.prefix(3).enumerated() {
                out +=
                    ##"<text x="\##(boxX + 12)" y="\##(boxY + 40 + i * 15)" font-size="11">\##(escaped(text))</text>"##
                    + "\n"
            }
            guard let line = wire.line, let n = bcm(line), let pin = headerPin[n] else { continue }
            let row = (pin - 1) / 2
            let pinX = pin % 2 == 1 ? 110 : 150
            let pinY = top + row * rowHeight
            // Out of the pin half a row up (an odd pin) or down (an even one), between the rows
            // of pins and their labels, then in a lane of its own to the box.
            let lane = 250 + index * 12
            let endY = boxY + boxHeight / 2
            let between = pin % 2 == 1 ? pinY - rowHeight / 2 : pinY + rowHeight / 2
            out +=
                ##"<polyline points="\##(pinX),\##(pinY) \##(pinX),\##(between) \##(lane),\##(between) \##(lane),\##(endY) \##(boxX),\##(endY)" fill="none" stroke="\##(wire.colour)" stroke-width="2.5"/>"##
                + "\n"
        }
        out += "</svg>\n"
        return out
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
