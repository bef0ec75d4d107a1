import TOMLKit

/// Reads and validates the station's configuration file (TOML). The only way to make a
/// `StationConfiguration` from a file: every refusal is a `StationConfigError` naming the file,
/// the key and what is wrong.
public enum StationConfigLoader {
    public static let maximumStations = 16
    /// A configuration file larger than this is refused unread.
    public static let maximumFileBytes = 1 << 20
    /// A click WAV file larger than this is refused unread.
    public static let maximumWAVBytes = 16 << 20
    /// A click WAV file longer than this is refused: it is not a click.
    public static let maximumClickSeconds = 2

    /// Reads `path` and parses it; a relative WAV path in `audio.click` is resolved against
    /// the file's own directory.
    public static func load(path: String) throws(StationConfigError) -> StationConfiguration {
        let bytes: [UInt8]
        switch FileBytes.read(path: path, limit: maximumFileBytes) {
        case .success(let read): bytes = read
        case .failure(let failure):
            throw StationConfigError(
                code: .unreadableFile, file: path, message: "cannot read the file: \(failure.reason)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw StationConfigError(
                code: .unreadableFile, file: path, message: "cannot read the file: not UTF-8 text")
        }
        return try parse(text: text, source: path, baseDirectory: directory(of: path))
    }

    /// Parses a configuration from text. `source` names it in messages; `baseDirectory`
    /// resolves a relative WAV path in `audio.click`.
    public static func parse(text: String, source: String, baseDirectory: String)
        throws(StationConfigError)
        -> StationConfiguration
    {
        if let nul = text.utf8.firstIndex(of: 0) {
            let line = text.utf8[..<nul].reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
            throw StationConfigError(
                code: .syntax, file: source, message: "TOML syntax error: the text contains a NUL byte",
                line: line)
        }
        let root: TOMLTable
        do {
            root = try TOMLTable(string: text)
        } catch let parseError as TOMLParseError {
            throw StationConfigError(
                code: .syntax, file: source, message: "TOML syntax error: \(parseError.description)",
                line: parseError.source.begin.line, column: parseError.source.begin.column)
        } catch {
            throw StationConfigError(code: .syntax, file: source, message: "TOML syntax error: \(error)")
        }
        var parser = Parser(source: source, baseDirectory: baseDirectory)
        return try parser.configuration(TableReader(table: root, path: "", source: source))
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    static func resolve(_ path: String, against directory: String) -> String {
        if path.hasPrefix("/") || directory.isEmpty { return path }
        return directory.hasSuffix("/") ? directory + path : directory + "/" + path
    }
}

/// The labels of Raspberry Pi header GPIO chips, on which line `GPIOn` is offset `n`.
private let headerChipLabels: Set<String> = ["pinctrl-bcm2835", "pinctrl-bcm2711", "pinctrl-rp1"]

private let lineKeysHint =
    "give the GPIO line by name (line = \"GPIO17\") or by chip label and offset"
    + " (chip = \"pinctrl-bcm2711\", offset = 17)"

private struct Parser {
    let source: String
    let baseDirectory: String
    /// Every line given so far, with the key that gave it, to refuse a line used twice.
    private var claims: [(locator: LineLocator, keyPath: String)] = []

    init(source: String, baseDirectory: String) {
        self.source = source
        self.baseDirectory = baseDirectory
    }

    mutating func configuration(_ root: TableReader) throws(StationConfigError)
        -> StationConfiguration
    {
        try root.checkKeys(["board", "stations", "buttons", "buzzer", "audio", "timing", "selftest", "log"])
        let boardName = try board(root)
        let stations = try self.stations(root)
        let buttons = try self.buttons(root)
        let buzzer = try self.buzzer(root)
        let audio = try self.audio(root)
        let timing = try self.timing(root)
        let selftest = try self.selftest(root, stations: stations)
        let log = try self.log(root)
        return StationConfiguration(
            source: source, stations: stations, buttons: buttons, buzzer: buzzer, audio: audio,
            timing: timing,
            boardName: boardName, selftest: selftest, log: log)
    }

    private func log(_ root: TableReader) throws(StationConfigError) -> LogSpec {
        guard let log = try root.subtable("log") else { return LogSpec() }
        try log.checkKeys(["warn_free_mb", "min_free_mb"])
        let defaults = LogSpec()
        let minimum = try log.int("min_free_mb", in: 0...10_000_000, unit: " MB") ?? defaults.minFreeMegabytes
        let warning = try log.int("warn_free_mb", in: 0...10_000_000, unit: " MB") ?? defaults.warnFreeMegabytes
        if warning < minimum {
            let given = log.has("warn_free_mb")
            throw log.error(
                .outOfRange, given ? "warn_free_mb" : "min_free_mb",
                "warn_free_mb (\(warning) MB\(given ? "" : ", the default")) must not be below min_free_mb"
                    + " (\(minimum) MB): the warning comes before the refusal")
        }
        return LogSpec(warnFreeMegabytes: warning, minFreeMegabytes: minimum)
    }

    // MARK: - Sections

    private func board(_ root: TableReader) throws(StationConfigError) -> String? {
        guard let board = try root.subtable("board") else { return nil }
        try board.checkKeys(["name"])
        return try board.text("name", what: "the board's name")
    }

    private mutating func stations(_ root: TableReader) throws(StationConfigError) -> [StationSpec] {
        let maximum = StationConfigLoader.maximumStations
        guard let value = root.value("stations") else {
            throw root.error(
                .missingKey, "stations",
                "missing: add one [[stations]] table per scent container (1 to \(maximum))")
        }
        guard let array = value.array else {
            throw root.wrongType("stations", expected: "an array of tables ([[stations]])", found: value)
        }
        guard array.count >= 1 else {
            throw root.error(.outOfRange, "stations", "no stations; a lineup needs 1 to \(maximum)")
        }
        guard array.count <= maximum else {
            throw root.error(
                .outOfRange, "stations", "\(array.count) stations; at most \(maximum) are supported")
        }

        var specs: [StationSpec] = []
        var names: [String: (index: Int, isDefault: Bool)] = [:]
        for index in 0..<array.count {
            let path = KeyPaths.index(root.keyPath("stations"), index)
            let element = array[index]
            guard let table = element.table else {
                throw StationConfigError(
                    code: .wrongType, file: source, keyPath: path,
                    message: "expected a table, found \(TableReader.describe(element))")
            }
            let station = TableReader(table: table, path: path, source: source)
            try station.checkKeys(["name", "line", "chip", "offset", "active_low", "bias", "output"])

            let given = try station.text("name", what: "a station's name")
            let name = given ?? Self.defaultName(index)
            if name.count > 32 {
                throw station.error(.invalidValue, "name", "\(quoted(name)) is longer than 32 characters")
            }
            if let other = names[name.lowercased()] {
                let whose = other.isDefault ? " (its default name)" : ""
                let hint =
                    given == nil ? "; this station has no name and its default is the same: give it one" : ""
                throw station.error(
                    .duplicateName, given == nil ? nil : "name",
                    "\(quoted(name)) is already the name of stations[\(other.index)]\(whose)\(hint)")
            }
            names[name.lowercased()] = (index, given == nil)

            let input = try inputLine(in: station)
            let output = try outputLine(station, "output")
            specs.append(StationSpec(name: name, input: input, output: output))
        }
        return specs
    }

    private mutating func buttons(_ root: TableReader) throws(StationConfigError) -> ButtonSpecs {
        guard let buttons = try root.subtable("buttons") else { return ButtonSpecs() }
        try buttons.checkKeys(["clicker", "error", "ready"])
        let clicker = try button(buttons, "clicker")
        let error = try button(buttons, "error")
        let ready = try button(buttons, "ready")
        return ButtonSpecs(clicker: clicker, error: error, ready: ready)
    }

    private mutating func buzzer(_ root: TableReader) throws(StationConfigError) -> BuzzerSpec? {
        guard let buzzer = try root.subtable("buzzer") else { return nil }
        try buzzer.checkKeys(["line", "chip", "offset", "active_low", "pulse_ms"])
        let locator = try self.locator(in: buzzer)
        let activeLow = try buzzer.bool("active_low") ?? false
        let pulse = try buzzer.int("pulse_ms", in: 1...1000, unit: " ms") ?? 15
        return BuzzerSpec(
            output: OutputLine(locator: locator, activeLow: activeLow), pulseMilliseconds: pulse)
    }

    private func audio(_ root: TableReader) throws(StationConfigError) -> AudioSpec {
        guard let audio = try root.subtable("audio") else { return AudioSpec() }
        try audio.checkKeys([
            "device", "rate", "period_frames", "periods", "channels", "click", "click_frequency_hz",
            "click_ms",
            "click_level", "start_cue",
        ])
        let defaults = AudioSpec()
        let device = try audio.text("device", what: "an ALSA device name") ?? defaults.device
        let rate = try audio.int("rate", in: 8000...192_000, unit: " Hz") ?? defaults.rate
        let periodFrames =
            try audio.int("period_frames", in: 16...8192, unit: " frames") ?? defaults.periodFrames
        let periods = try audio.int("periods", in: 2...32) ?? defaults.periods
        let channels = try audio.int("channels", in: 1...8) ?? defaults.channels
        let click = try self.click(audio, rate: rate, channels: channels)
        var spec = AudioSpec(
            device: device, rate: rate, periodFrames: periodFrames, periods: periods, channels: channels,
            click: click)
        spec.startCue = try audio.bool("start_cue") ?? false
        return spec
    }

    private func click(_ audio: TableReader, rate: Int, channels: Int) throws(StationConfigError)
        -> ClickSound
    {
        let builtinKeys = ["click_frequency_hz", "click_ms", "click_level"]
        let choice = try audio.text("click", what: "the click") ?? "builtin"
        guard choice == "builtin" else {
            if let key = builtinKeys.first(where: audio.has) {
                throw audio.error(
                    .invalidValue, key,
                    "applies only to click = \"builtin\", and this click is the WAV file \(quoted(choice))")
            }
            return try wavClick(audio, choice, rate: rate, channels: channels)
        }
        guard
            case .builtin(let defaultFrequency, let defaultLength, let defaultLevel) = ClickSound.standard
        else {
            return ClickSound.standard
        }
        let frequency =
            try audio.number("click_frequency_hz", in: 100...20_000, unit: " Hz") ?? defaultFrequency
        if frequency * 2 >= Double(rate) {
            throw audio.error(
                .outOfRange, audio.has("click_frequency_hz") ? "click_frequency_hz" : "rate",
                "a \(TableReader.format(frequency)) Hz click needs audio.rate above"
                    + " \(TableReader.format(frequency * 2)) Hz (it is \(rate) Hz)")
        }
        let length = try audio.number("click_ms", in: 1...200, unit: " ms") ?? defaultLength
        let level = try audio.number("click_level", in: 0...1) ?? defaultLevel
        if level == 0 {
            throw audio.error(.outOfRange, "click_level", "0 is silent; expected more than 0, up to 1")
        }
        return .builtin(frequency: frequency, milliseconds: length, level: level)
    }

    private func wavClick(_ audio: TableReader, _ given: String, rate: Int, channels: Int)
        throws(StationConfigError)
        -> ClickSound
    {
        let path = StationConfigLoader.resolve(given, against: baseDirectory)
        let shown = quoted(path)
        let bytes: [UInt8]
        switch FileBytes.read(path: path, limit: StationConfigLoader.maximumWAVBytes) {
        case .success(let read): bytes = read
        case .failure(let failure):
            throw audio.error(
                .invalidWAV, "click", "cannot read the WAV file \(shown): \(failure.reason)")
        }
        let wav: WAVFile
        switch WAVFile.parse(bytes) {
        case .success(let parsed): wav = parsed
        case .failure(let failure):
            throw audio.error(.invalidWAV, "click", "the WAV file \(shown) \(failure.reason)")
        }
        if wav.rate != rate {
            throw audio.error(
                .invalidWAV, "click",
                "the WAV file \(shown) is at \(wav.rate) Hz but audio.rate is \(rate) Hz;"
                    + " resample the file or change audio.rate")
        }
        if wav.channels > channels {
            throw audio.error(
                .invalidWAV, "click", "the WAV file \(shown) is stereo but audio.channels is \(channels)")
        }
        let frames = wav.samples.count / wav.channels
        if frames > StationConfigLoader.maximumClickSeconds * wav.rate {
            throw audio.error(
                .invalidWAV, "click",
                "the WAV file \(shown) lasts \(frames * 1000 / wav.rate) ms; a click may last at most"
                    + " \(StationConfigLoader.maximumClickSeconds) s")
        }
        return .wav(path: path, samples: wav.samples, channels: wav.channels, rate: wav.rate)
    }

    private func timing(_ root: TableReader) throws(StationConfigError) -> TimingSpec {
        guard let timing = try root.subtable("timing") else { return TimingSpec() }
        try timing.checkKeys(["debounce_ms", "hold_ms", "hold_tolerance_ms"])
        let defaults = TimingSpec()
        let debounce =
            try timing.number("debounce_ms", in: 0...1000, unit: " ms") ?? defaults.debounceMilliseconds
        let hold =
            try timing.number("hold_ms", in: 0...60_000, unit: " ms") ?? defaults.holdMilliseconds
        let tolerance =
            try timing.number("hold_tolerance_ms", in: 0...10_000, unit: " ms")
            ?? defaults.holdToleranceMilliseconds
        if hold > 0, tolerance >= hold {
            let given = timing.has("hold_tolerance_ms")
            throw timing.error(
                .outOfRange, given ? "hold_tolerance_ms" : "hold_ms",
                "hold_tolerance_ms (\(TableReader.format(tolerance)) ms\(given ? "" : ", the default")) must be"
                    + " shorter than hold_ms (\(TableReader.format(hold)) ms)")
        }
        return TimingSpec(
            debounceMilliseconds: debounce, holdMilliseconds: hold, holdToleranceMilliseconds: tolerance)
    }

    private mutating func selftest(_ root: TableReader, stations: [StationSpec])
        throws(StationConfigError)
        -> SelftestSpec?
    {
        guard let selftest = try root.subtable("selftest") else { return nil }
        try selftest.checkKeys(["output", "station"])
        guard let output = try outputLine(selftest, "output") else {
            throw selftest.error(
                .missingKey, "output",
                "missing: the spare output line the jumper wire starts from (\(lineKeysHint))")
        }
        guard let name = try selftest.text("station", what: "a station's name") else {
            throw selftest.error(
                .missingKey, "station",
                "missing: the name of the station whose sensor input the jumper wire drives")
        }
        guard let index = stations.firstIndex(where: { $0.name == name }) else {
            let known = stations.map { quoted($0.name) }.joined(separator: ", ")
            throw selftest.error(
                .invalidValue, "station", "no station is named \(quoted(name)); the stations are \(known)")
        }
        return SelftestSpec(output: output, stationIndex: index, stationName: name)
    }

    // MARK: - Lines

    /// A station's or button's input from the keys of `table` itself.
    private mutating func inputLine(in table: TableReader) throws(StationConfigError) -> InputLine {
        let locator = try self.locator(in: table)
        let activeLow = try table.bool("active_low") ?? true
        let bias = try self.bias(table) ?? .pullUp
        return InputLine(locator: locator, activeLow: activeLow, bias: bias)
    }

    /// A button: a line name, or a table with the keys of a station's input.
    private mutating func button(_ parent: TableReader, _ key: String) throws(StationConfigError)
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
    private mutating func outputLine(_ parent: TableReader, _ key: String) throws(StationConfigError)
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
    private mutating func locator(in table: TableReader) throws(StationConfigError) -> LineLocator {
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

    private static func defaultName(_ index: Int) -> String {
        guard index < 26, let scalar = Unicode.Scalar(65 + index) else { return "S\(index + 1)" }
        return String(Character(scalar))
    }
}
