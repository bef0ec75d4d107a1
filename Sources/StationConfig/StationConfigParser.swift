import TOMLKit

// The configuration file's sections, key by key (the GPIO lines in StationConfigParser+Lines.swift).

let lineKeysHint =
    "give the GPIO line by name (line = \"GPIO17\") or by chip label and offset"
    + " (chip = \"pinctrl-bcm2711\", offset = 17)"

struct Parser {
    let source: String
    let baseDirectory: String
    /// Every line given so far, with the key that gave it, to refuse a line used twice.
    var claims: [(locator: LineLocator, keyPath: String)] = []

    init(source: String, baseDirectory: String) {
        self.source = source
        self.baseDirectory = baseDirectory
    }

    mutating func configuration(_ root: TableReader) throws(StationConfigError)
        -> StationConfiguration
    {
        try root.checkKeys(["board", "stations", "buttons", "buzzer", "feeder", "audio", "timing", "selftest", "log"])
        let boardName = try board(root)
        let stations = try self.stations(root)
        let buttons = try self.buttons(root)
        let buzzer = try self.buzzer(root)
        let feeder = try self.feeder(root)
        let audio = try self.audio(root)
        let timing = try self.timing(root)
        let selftest = try self.selftest(root, stations: stations)
        let log = try self.log(root)
        return StationConfiguration(
            source: source, stations: stations, buttons: buttons, buzzer: buzzer, audio: audio,
            timing: timing,
            boardName: boardName, selftest: selftest, log: log, feeder: feeder)
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
}
