import TOMLKit

/// The labels of Raspberry Pi header GPIO chips, on which line `GPIOn` is offset `n`.
private let headerChipLabels: Set<String> = ["pinctrl-bcm2835", "pinctrl-bcm2711", "pinctrl-rp1"]

extension Parser {
    // MARK: - Lines

    /// A station's or button's input from the keys of `table` itself.
    mutating func inputLine(in table: TableReader) throws(StationConfigError) -> InputLine {
        let locator = try self.locator(in: table)
        let activeLow = try table.bool("active_low") ?? true
        let bias = try self.bias(table) ?? .pullUp
        return InputLine(locator: locator, activeLow: activeLow, bias: bias)
    }

    /// A button: a line name, or a table with the keys of a station's input.
    mutating func button(_ parent: TableReader, _ key: String) throws(StationConfigError)
        -> InputLine?
    {
        guard let value = parent.value(key) else { return nil }
        if value.type == .string {
            guard let name = try lineName(parent, key) else { return nil }
            return InputLine(locator: try claim(.name(name), parent.keyPath(key)))
        }
        guard let table = try parent.subtable(key, expected: expectedLine) else { return nil }
        try table.checkKeys(["line", "chip", "offset", "active_low", "bias"])
        return try inputLine(in: table)
    }

    /// An LED, valve or jumper output: a line name, or a table { line | chip + offset, active_low }.
    mutating func outputLine(_ parent: TableReader, _ key: String) throws(StationConfigError)
        -> OutputLine?
    {
        guard let value = parent.value(key) else { return nil }
        if value.type == .string {
            guard let name = try lineName(parent, key) else { return nil }
            return OutputLine(locator: try claim(.name(name), parent.keyPath(key)))
        }
        guard let table = try parent.subtable(key, expected: expectedLine) else { return nil }
        try table.checkKeys(["line", "chip", "offset", "active_low"])
        let locator = try self.locator(in: table)
        return OutputLine(locator: locator, activeLow: try table.bool("active_low") ?? false)
    }

    private var expectedLine: String {
        "a line name such as \"GPIO16\" or a table such as { line = \"GPIO16\" }"
            + " or { chip = \"pinctrl-bcm2711\", offset = 16 }"
    }

    /// `line`, or `chip` + `offset`, from the keys of `table`; claims the line.
    mutating func locator(in table: TableReader) throws(StationConfigError) -> LineLocator {
        let hasLine = table.has("line")
        let hasChip = table.has("chip")
        let hasOffset = table.has("offset")
        if hasLine {
            if hasChip || hasOffset {
                throw table.error(
                    .invalidValue, hasChip ? "chip" : "offset", "give either line or chip + offset, not both")
            }
            guard let name = try lineName(table, "line") else {
                throw table.error(.missingKey, "line", lineKeysHint)
            }
            return try claim(.name(name), table.keyPath("line"))
        }
        if hasChip || hasOffset {
            guard hasChip else {
                throw table.error(
                    .missingKey, "chip",
                    "missing: offset needs the chip's label, e.g. chip = \"pinctrl-bcm2711\" (gpiodetect shows it)"
                )
            }
            guard hasOffset else {
                throw table.error(
                    .missingKey, "offset",
                    "missing: chip needs the line's offset on that chip, e.g. offset = 17 (gpioinfo shows it)"
                )
            }
            guard let label = try table.text("chip", what: "a chip label") else {
                throw table.error(.missingKey, "chip", lineKeysHint)
            }
            if Self.isDeviceName(label) {
                throw table.error(
                    .invalidValue, "chip",
                    "\(quoted(label)) is a chip's device name, and chip numbers change between kernels;"
                        + " give its label instead, e.g. \"pinctrl-bcm2711\" or \"pinctrl-rp1\""
                        + " (gpiodetect shows it in brackets)")
            }
            guard let offset = try table.int("offset", in: 0...1023) else {
                throw table.error(.missingKey, "offset", lineKeysHint)
            }
            return try claim(.chipLabel(label, offset: offset), table.keyPath("offset"))
        }
        throw table.error(.missingKey, "line", "missing: \(lineKeysHint)")
    }

    private func lineName(_ table: TableReader, _ key: String) throws(StationConfigError) -> String? {
        guard let value = table.value(key) else { return nil }
        guard value.type == .string else {
            throw table.wrongType(
                key,
                expected: "a string (a line name such as \"GPIO17\"; for an offset use chip and offset)",
                found: value)
        }
        guard let name = try table.text(key, what: "a line name") else { return nil }
        if name.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }) {
            throw table.error(
                .invalidValue, key,
                "\(quoted(name)) is a number, not a line name; write \"GPIO\(name)\""
                    + " or give chip and offset")
        }
        return name
    }

    private func bias(_ table: TableReader) throws(StationConfigError) -> LineBias? {
        guard let text = try table.string("bias") else { return nil }
        if let bias = LineBias(rawValue: text) { return bias }
        let names = LineBias.allCases.map(\.rawValue)
        let guess = KeyPaths.suggestion(for: text, among: names).map { " (did you mean \($0)?)" } ?? ""
        throw table.error(
            .invalidValue, "bias",
            "\(quoted(text)) is not a bias\(guess); expected one of \(names.joined(separator: ", "))")
    }

    /// Records that `keyPath` uses `locator`; refuses a line already used elsewhere.
    private mutating func claim(_ locator: LineLocator, _ keyPath: String) throws(StationConfigError)
        -> LineLocator
    {
        for (other, otherPath) in claims {
            if other == locator {
                throw StationConfigError(
                    code: .duplicateLine, file: source, keyPath: keyPath,
                    message: "\(Self.show(locator)) is already used by \(otherPath)")
            }
            if Self.sameHeaderLine(locator, other) {
                throw StationConfigError(
                    code: .duplicateLine, file: source, keyPath: keyPath,
                    message:
                        "\(Self.show(locator)) is the same Raspberry Pi header line as \(Self.show(other)),"
                        + " already used by \(otherPath)")
            }
        }
        claims.append((locator, keyPath))
        return locator
    }

    private static func sameHeaderLine(_ a: LineLocator, _ b: LineLocator) -> Bool {
        switch (a, b) {
        case (.name(let name), .chipLabel(let label, let offset)),
            (.chipLabel(let label, let offset), .name(let name)):
            return headerChipLabels.contains(label) && name == "GPIO\(offset)"
        default:
            return false
        }
    }

    private static func show(_ locator: LineLocator) -> String {
        switch locator {
        case .name(let name): return quoted(name)
        case .chipLabel(let label, let offset): return "\(quoted(label)) offset \(offset)"
        }
    }

    private static func isDeviceName(_ label: String) -> Bool {
        if label.hasPrefix("/dev/") { return true }
        guard label.hasPrefix("gpiochip") else { return false }
        let digits = label.dropFirst("gpiochip".count)
        return !digits.isEmpty && digits.unicodeScalars.allSatisfy { ("0"..."9").contains($0) }
    }

    static func defaultName(_ index: Int) -> String { StationSpec.defaultName(number: index + 1) }
}
