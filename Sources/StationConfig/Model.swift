// The board as the configuration file describes it. Values here are already validated:
// `StationConfigLoader` is the only way to make one from a file.

/// Where a GPIO line is: by its name (`GPIO17`), found on whichever chip has it,
/// or by a chip's label (`pinctrl-bcm2711`) and an offset on that chip. Never by chip number,
/// because Pi 5 kernels have renumbered the header's chip more than once.
public enum LineLocator: Sendable, Hashable, CustomStringConvertible {
    case name(String)
    case chipLabel(String, offset: Int)

    public var description: String {
        switch self {
        case .name(let name): return name
        case .chipLabel(let label, let offset): return "\(label):\(offset)"
        }
    }
}

/// The pull resistor asked of the line (libgpiod's bias).
public enum LineBias: String, Sendable, Hashable, CaseIterable {
    case asIs = "as-is"
    case pullUp = "pull-up"
    case pullDown = "pull-down"
    case disabled
}

/// One digital input: a station's sensor or a button.
public struct InputLine: Sendable, Hashable {
    public var locator: LineLocator
    /// True when the line reads low while the dog's nose (or a thumb) is there:
    /// the usual wiring, a sensor pulling an input with a pull-up to ground.
    public var activeLow: Bool
    public var bias: LineBias

    public init(locator: LineLocator, activeLow: Bool = true, bias: LineBias = .pullUp) {
        self.locator = locator
        self.activeLow = activeLow
        self.bias = bias
    }
}

/// One digital output: a station's LED or valve, or the buzzer.
public struct OutputLine: Sendable, Hashable {
    public var locator: LineLocator
    public var activeLow: Bool

    public init(locator: LineLocator, activeLow: Bool = false) {
        self.locator = locator
        self.activeLow = activeLow
    }
}

/// A scent container's position in the lineup.
public struct StationSpec: Sendable, Hashable {
    public var name: String
    public var input: InputLine
    public var output: OutputLine?

    public init(name: String, input: InputLine, output: OutputLine? = nil) {
        self.name = name
        self.input = input
        self.output = output
    }

    /// The name of the station at `number` (from 1) on a board file that gives it none: A, B,
    /// ... Z, then S27. The one default: Figures' `StationNames` reads a session logged before
    /// stations' names were kept with it too.
    public static func defaultName(number: Int) -> String {
        guard (1...26).contains(number), let scalar = Unicode.Scalar(64 + number) else { return "S\(number)" }
        return String(Character(scalar))
    }
}

/// The trainer's three physical buttons; each is optional on a given board.
public struct ButtonSpecs: Sendable, Hashable {
    public var clicker: InputLine?
    public var error: InputLine?
    public var ready: InputLine?

    public init(clicker: InputLine? = nil, error: InputLine? = nil, ready: InputLine? = nil) {
        self.clicker = clicker
        self.error = error
        self.ready = ready
    }
}

/// A click from a piezo buzzer on a GPIO line, for a board without audio.
public struct BuzzerSpec: Sendable, Hashable {
    public var output: OutputLine
    public var pulseMilliseconds: Int

    public init(output: OutputLine, pulseMilliseconds: Int = 15) {
        self.output = output
        self.pulseMilliseconds = pulseMilliseconds
    }
}

/// The feeder: a relay or a treat dispenser's trigger, pulsed `delayMilliseconds` after each
/// click for `pulseMilliseconds`. The defaults are the project's: at once, 100 ms (long enough
/// for a relay to pull and a dispenser's trigger input to see).
public struct FeederSpec: Sendable, Hashable {
    public var output: OutputLine
    public var delayMilliseconds: Int
    public var pulseMilliseconds: Int

    public init(output: OutputLine, delayMilliseconds: Int = 0, pulseMilliseconds: Int = 100) {
        self.output = output
        self.delayMilliseconds = delayMilliseconds
        self.pulseMilliseconds = pulseMilliseconds
    }
}

/// The click's sound: synthesised once at start, or mono/stereo 16-bit PCM from a WAV file.
public enum ClickSound: Sendable, Hashable {
    /// A short decaying burst, like a box clicker. Frequency in Hz, length in ms, level 0...1.
    case builtin(frequency: Double, milliseconds: Double, level: Double)
    /// Samples already read and checked from a WAV file at load time, interleaved, at `rate`.
    case wav(path: String, samples: [Int16], channels: Int, rate: Int)

    public static let standard = ClickSound.builtin(frequency: 3000, milliseconds: 12, level: 0.8)
}

public struct AudioSpec: Sendable, Hashable {
    /// An ALSA PCM name: `default`, `hw:CARD=sndrpihifiberry,DEV=0`, `null`, or a plugin.
    public var device: String
    public var rate: Int
    public var periodFrames: Int
    public var periods: Int
    public var channels: Int
    public var click: ClickSound
    /// Sound a cue when a trainer-led repetition starts (its end is always heard).
    public var startCue = false

    public init(
        device: String = "default", rate: Int = 48_000, periodFrames: Int = 64, periods: Int = 2,
        channels: Int = 2, click: ClickSound = .standard
    ) {
        self.device = device
        self.rate = rate
        self.periodFrames = periodFrames
        self.periods = periods
        self.channels = channels
        self.click = click
    }
}

public struct TimingSpec: Sendable, Hashable {
    /// After acting on an edge, further edges on the same line within this window are chatter.
    public var debounceMilliseconds: Double
    /// How long the nose must stay at one station to count as an indication.
    public var holdMilliseconds: Double
    /// A break of the beam shorter than this does not end a hold.
    public var holdToleranceMilliseconds: Double

    public init(
        debounceMilliseconds: Double = 5, holdMilliseconds: Double = 2000, holdToleranceMilliseconds: Double = 150
    ) {
        self.debounceMilliseconds = debounceMilliseconds
        self.holdMilliseconds = holdMilliseconds
        self.holdToleranceMilliseconds = holdToleranceMilliseconds
    }
}

/// The session log's disk, from `[log]`: lineupd checks its free space at each session start.
public struct LogSpec: Sendable, Hashable {
    /// Below this much free space a session starts with a warning (in its answer and the journal).
    public var warnFreeMegabytes: Int
    /// Below this much a session is refused with nothing written: a full disk loses trials.
    public var minFreeMegabytes: Int

    public init(warnFreeMegabytes: Int = 200, minFreeMegabytes: Int = 20) {
        self.warnFreeMegabytes = warnFreeMegabytes
        self.minFreeMegabytes = minFreeMegabytes
    }
}

/// The selftest jumper: a wire from a spare output line to one station's sensor input
/// (that station's sensor unplugged), so `lineupctl selftest` can drive edges itself and
/// measure the rig's edge-to-click latency.
public struct SelftestSpec: Sendable, Hashable {
    /// The spare output line that drives the jumper wire.
    public var output: OutputLine
    /// The index in `StationConfiguration.stations` of the station whose input the wire drives.
    public var stationIndex: Int
    /// That station's name, for messages.
    public var stationName: String

    public init(output: OutputLine, stationIndex: Int, stationName: String) {
        self.output = output
        self.stationIndex = stationIndex
        self.stationName = stationName
    }
}

/// The whole board.
public struct StationConfiguration: Sendable, Hashable {
    /// Where the configuration came from, for messages (`/etc/lineup/station.toml`, or `built-in`).
    public var source: String
    public var stations: [StationSpec]
    public var buttons: ButtonSpecs
    public var buzzer: BuzzerSpec?
    public var audio: AudioSpec
    public var timing: TimingSpec
    /// The board's name from `[board] name`, for logs and `lineupctl` output; nil when not given.
    public var boardName: String?
    /// The selftest jumper from `[selftest]`; nil when the board has none.
    public var selftest: SelftestSpec?
    /// Free-space thresholds for the log's disk, from `[log]`.
    public var log: LogSpec
    /// The feeder from `[feeder]`; nil when the board has none.
    public var feeder: FeederSpec?

    public init(
        source: String, stations: [StationSpec], buttons: ButtonSpecs = ButtonSpecs(), buzzer: BuzzerSpec? = nil,
        audio: AudioSpec = AudioSpec(), timing: TimingSpec = TimingSpec(), boardName: String? = nil,
        selftest: SelftestSpec? = nil, log: LogSpec = LogSpec(), feeder: FeederSpec? = nil
    ) {
        self.log = log
        self.feeder = feeder
        self.source = source
        self.stations = stations
        self.buttons = buttons
        self.buzzer = buzzer
        self.audio = audio
        self.timing = timing
        self.boardName = boardName
        self.selftest = selftest
    }

    /// The simulated station's board: five stations and three buttons on named lines
    /// (the Pi 4 example's pins), nothing read from disk.
    public static func simulated(stationCount: Int = 5) -> StationConfiguration {
        let pins = [17, 27, 22, 5, 6, 13, 19, 26]
        let stations = (0..<max(1, min(stationCount, pins.count))).map { i in
            StationSpec(
                name: String(UnicodeScalar(UInt8(65 + i))),
                input: InputLine(locator: .name("GPIO\(pins[i])")))
        }
        return StationConfiguration(
            source: "built-in simulated board",
            stations: stations,
            buttons: ButtonSpecs(
                clicker: InputLine(locator: .name("GPIO23")),
                error: InputLine(locator: .name("GPIO24")),
                ready: InputLine(locator: .name("GPIO25"))))
    }
}
