import ArgumentParser
import Foundation
import SessionLog
import StationControl
import StationIO
import TrainingEngine

// The trainer's and the loading assistant's commands: they talk to the running lineupd
// through its control socket. `session start|end|abort` hang under the `session` group in
// ResearchCommands.swift; the rest sit at the root.

/// Where lineupd's socket is: shared by every control command.
struct SocketOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "lineupd's control socket (default: $\(ControlProtocol.socketEnvironmentVariable), else \(ControlProtocol.defaultSocketPath)).",
            valueName: "path"),
        completion: .file())
    var socket: String?

    var client: ControlClient { ControlClient(path: ControlClient.path(option: socket)) }
}

private let completionNote = """
    Shell completion: lineupctl --generate-completion-script bash (or zsh, fish).
    """

/// Runs a control command's body; any failure becomes one line on stderr and exit status 1.
func controlCommand(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let exit as ExitCode {
        throw exit
    } catch let error as ControlClientError {
        if case .refused(let refusal) = error {
            printError("\(refusal.message) (\(refusal.code.rawValue))")
        } else {
            printError(error.description)
        }
        throw ExitCode(1)
    } catch {
        printError(String(describing: error))
        throw ExitCode(1)
    }
}

// MARK: - status

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "What the station is doing now: session, trial, audio, sensors.",
        discussion: """
            Examples:
              lineupctl status
              lineupctl status --json
              LINEUP_SOCKET=/tmp/lineup.sock lineupctl status

            \(completionNote)
            """)

    @OptionGroup var socket: SocketOptions
    @Flag(help: "Print one JSON object.") var json = false

    func run() throws {
        try controlCommand {
            let s = try socket.client.status()
            if json { return try printJSON(s) }
            var lines = ["State       \(s.state.rawValue)\(s.activity.map { ": \($0)" } ?? "")"]
            if let session = s.session { lines.append("Session     \(session)") }
            if let dog = s.dog { lines.append("Dog         \(dog)") }
            if let mode = s.mode { lines.append("Mode        \(mode.rawValue)") }
            if let step = s.step { lines.append("Step        \(s.program.map { "\($0) " } ?? "")\(step)") }
            if let trial = s.trial {
                let word = s.mode == .trainerLed ? "Repetition" : "Trial     "
                lines.append(
                    "\(word)  \(trial)\(s.trials.map { " of \($0)" } ?? "")"
                        + (s.trialsDone.map { "; \($0) done" } ?? ""))
            }
            if let left = s.secondsLeft {
                lines.append(String(format: "Time left   %.0f s", left.rounded(.up)))
            }
            lines += [
                "Audio       \(s.audio)",
                "GPIO        \(s.gpio)",
                "Clicks      \(s.clicks) (\(s.failedClicks) failed)"
                    + (s.cues.map { "; timer cues \($0) (\(s.failedCues ?? 0) not sounded)" } ?? ""),
                "Edges       \(s.edges) (\(s.droppedEdges) dropped)",
            ]
            if let fault = s.soundFault {
                lines.append(
                    "Sound       FAILING: \(s.soundFaultWhy ?? SoundFault(name: fault)?.description ?? fault); the clicks do not sound"
                        + " (faults since start: \(s.soundFaults ?? 1))")
            } else if let runs = s.soundFaults, runs > 0 {
                lines.append("Sound       plays; faults since start: \(runs)")
            }
            if let on = s.outputsOn {
                lines.append(
                    "Outputs     \(on.isEmpty ? "all off" : "on: " + on.joined(separator: ", "))"
                        + (s.buzzerPulses.map { "; buzzer sounded \($0) times" } ?? ""))
            }
            lines += [
                "Log         \(describeLog(s))"
            ]
            if let free = s.logFreeMegabytes {
                var disk = "\(free) MB free"
                if let minimum = s.logMinFreeMegabytes, free < minimum {
                    disk += " (below \(minimum) MB: sessions are refused)"
                } else if let warning = s.logWarnFreeMegabytes, free < warning {
                    disk += " (below \(warning) MB: free some space)"
                }
                lines.append("Disk        \(disk)")
            }
            lines.append("Sensors     \(describeSensors(s))")
            if let levels = describeLevels(s) { lines.append("Levels      \(levels)") }
            if let sync = s.labSync { lines.append("Lab sync    \(describeLabSync(sync))") }
            lines.append(
                "Up          \(formatUptime(s.uptimeSeconds))" + (s.bootId.map { ", in boot \($0.prefix(8))" } ?? ""))
            // The last write's error, else why the log cannot be written though no write failed yet.
            if let error = s.logError ?? s.logUnwritable { lines.insert("Log error   \(error)", at: lines.count - 1) }
            say(lines.joined(separator: "\n"))
        }
    }
}

/// `1200 events written, 0 overflowed, 0 lost; on disk within 34 ms (p99), 49 ms at worst`.
private func describeLog(_ s: StationStatus) -> String {
    var text = "\(s.logWritten.map { "\($0) events written, " } ?? "")\(s.logOverflow) overflowed"
    if let lost = s.logLost { text += ", \(lost) lost" }
    if let p99 = s.logDurableMillisP99, let worst = s.logDurableMillisMax {
        text += String(format: "; on disk within %.0f ms (p99), %.0f ms at worst", p99, worst)
        // The promise is 100 ms; beyond it the storage (an SD card's fsync) is the suspect.
        if worst > 100 { text += " (over 100 ms: slow storage?)" }
    }
    return text
}

/// `0 rows behind; reported 2026-…Z; last success 2026-…Z`, or `not reporting`.
func describeLabSync(_ sync: LabSyncStatus) -> String {
    guard sync.reporting else { return "not reporting (no lineup-sync has reported since lineupd started)" }
    var parts: [String] = []
    if let behind = sync.behindRows {
        parts.append(
            behind == 0
                ? "up to date (0 rows behind)"
                : "\(behind) rows behind"
                    + (sync.oldestUnsynced.map { ", the oldest from \($0)" } ?? ""))
    } else {
        parts.append("behind: unknown (the store did not answer)")
    }
    if let reported = sync.reportedAt { parts.append("reported \(reported)") }
    parts.append("last success \(sync.lastSuccess ?? "none since lineupd started")")
    if let error = sync.lastError { parts.append("last error: \(error)") }
    return parts.joined(separator: "; ")
}

/// `flagged: B stuck, A chatter; faults since start: stuck 1, chatter 1` or `all trusted`.
private func describeSensors(_ s: StationStatus) -> String {
    let flagged = (s.flaggedStations ?? []).map { "\($0.station) \($0.fault.rawValue)" }
    let counts = (s.sensorFaults ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
    var text = flagged.isEmpty ? "all trusted" : "flagged: " + flagged.joined(separator: ", ")
    if !counts.isEmpty { text += "; faults since start: " + counts.joined(separator: ", ") }
    return text
}

/// `A clear for 12.0 s, B active for 1.2 s, ..., clicker clear for 3m 2s`: each input as the hot
/// loop last read it; while a double-blind session runs, the stations are said to be withheld.
private func describeLevels(_ s: StationStatus) -> String? {
    guard let levels = s.inputLevels else { return nil }
    var parts: [String] = []
    if s.stationLevelsWithheld == true { parts.append("stations withheld until the double-blind session ends") }
    for level in levels {
        let since =
            level.secondsSinceChange < 60
            ? String(format: "%.1f s", level.secondsSinceChange) : formatUptime(level.secondsSinceChange)
        parts.append("\(level.input) \(level.active ? "active" : "clear") for \(since)")
    }
    return parts.isEmpty ? nil : parts.joined(separator: ", ")
}

private func formatUptime(_ seconds: Double) -> String {
    let total = Int(max(0, seconds))
    let (h, m, s) = (total / 3600, total / 60 % 60, total % 60)
    return h > 0 ? "\(h)h \(m)m" : m > 0 ? "\(m)m \(s)s" : "\(s)s"
}

// MARK: - session start | end | abort

struct SessionStart: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Start a session on the station: a dog, a program step and a mode.",
        discussion: """
            The station then waits for `lineupctl ready` (or the ready button) before each \
            trial, or before each repetition of a trainer-led exercise; a step with \
            ready = "auto" starts its trials by itself.

            Examples:
              lineupctl session start --dog Rex --new-dog --program study \\
                  --step discrimination/2 --handler H-07 \\
                  --sample T-7 --sample C-1 --sample C-2 --sample C-3 --sample C-4 --sample C-5
              lineupctl session start --dog Rex --program study \\
                  --step discrimination/2 --exercise 1 --trials 20 \\
                  --sample T-7 --sample C-1 --sample C-2 --sample C-3 --sample C-4 --sample C-5 --seed 42
              lineupctl session start --dog Rex --program research-5-station --step phase-3/1 \\
                  --sample T-7 --sample C-1 --sample C-2 --sample C-3 --sample C-4 \\
                  --layout control,target,control,control,control --layout control,control,control,control,target
              lineupctl session start --dog Rex --program research-5-station --step phase-3/1 --unlabelled
              lineupctl session start --dog Rex --program study --step target-scent/1 --repetitions 2

            --repetitions chooses how many rounds of a trainer-led exercise this session runs, \
            from 1 to the exercise's repeats in the program (the study's: up to four); the station \
            refuses another count, naming the step and the bounds.

            The program's step fixes the mode; --mode may repeat it, and one that contradicts \
            it is refused. An automated or double-blind step lays out a different sample in \
            each target and control station (one control more when some trials have no \
            target); --unlabelled runs without samples, and the log says so. A double-blind step's \
            --seed and --layout are fixed here, at the station, or not at all: whoever fixes them \
            knows where each target stands, so the station's page may not (docs/web.md).

            --program names a built-in program (study, research-5-station, olfactometer-rig, threshold) or a file
            NAME.toml in the station's programs directory (/etc/lineup/programs).
            """)

    @OptionGroup var socket: SocketOptions
    @Option(help: "The dog's name.") var dog: String
    @Option(
        help:
            "A built-in program (study, research-5-station, olfactometer-rig, threshold) or NAME of /etc/lineup/programs/NAME.toml."
    )
    var program: String
    @Option(help: ArgumentHelp("The program step, as phase/step.", valueName: "phase/step")) var step: String
    @Option(help: "An exercise id within the step (default: the step's first).") var exercise: String?
    @Option(
        help:
            "Optional: the step fixes the mode (trainer-led, automated, double-blind); a mode that contradicts it is refused."
    ) var mode: TrainingMode?
    @Option(help: "How many trials (default: the step's).") var trials: Int?
    @Option(
        help: ArgumentHelp(
            "How many times to do a trainer-led exercise this session: 1 to the program's repeats (default: its repeats).",
            valueName: "n"))
    var repetitions: Int?
    @Option(
        name: .customLong("sample"),
        help: ArgumentHelp(
            "A sample (label or id) to lay out; repeat for each. Automated and double-blind steps need a different sample for each target and control station (one control more when some trials have no target).",
            valueName: "label"))
    var samples: [String] = []
    @Flag(help: "Run without samples: the stations are labelled by kind only, and the log says so.")
    var unlabelled = false
    @Option(help: "Who handles the dog, for the record: a pseudonymous code, nothing personal.") var handler: String?
    @Flag(help: "The dog is new: add it to the log (otherwise a name the log does not know is refused).")
    var newDog = false
    @Option(help: "Seed for the layouts, to repeat a session exactly.") var seed: UInt64?
    @Option(
        help: ArgumentHelp(
            "The exercise's duration in seconds for this session (trainer-led: each repetition; automated: each search), instead of the program's.",
            valueName: "seconds"))
    var duration: Double?
    @Option(
        name: .customLong("station"),
        help: ArgumentHelp(
            "A board station the step uses (name or number), in the lineup's order; repeat for each of the step's containers (default: the board's first ones).",
            valueName: "station"))
    var stations: [String] = []
    @Option(
        name: .customLong("layout"),
        help: ArgumentHelp(
            "A trial laid out in advance: the kind in each station, comma-separated; repeat per trial (the --sample samples fill it).",
            valueName: "kind,kind,..."))
    var layouts: [String] = []
    @Option(help: ArgumentHelp("The room's temperature, °C.", valueName: "celsius")) var temperature: Double?
    @Option(help: ArgumentHelp("The room's relative humidity, %.", valueName: "percent")) var humidity: Double?
    @Option(help: ArgumentHelp("Anything else about the room (wind, a door open, ...).", valueName: "text"))
    var conditions: String?
    @Flag(help: "Print one JSON object.") var json = false

    func validate() throws {
        if let trials, trials < 1 { throw ValidationError("--trials must be at least 1") }
        if let duration, !(duration >= 1 && duration <= 3600) {
            throw ValidationError("--duration must be between 1 and 3600 seconds")
        }
        for (i, layout) in layouts.enumerated() {
            for word in layout.split(separator: ",") where SampleKind(rawValue: String(word)) == nil {
                throw ValidationError(
                    "--layout \(i + 1): \"\(word)\" is not a kind (target, control, blank, distractor)")
            }
        }
    }

    func run() throws {
        try controlCommand {
            let request = SessionRequest(
                dog: dog, program: program, step: step, exercise: exercise, mode: mode, trials: trials,
                samples: samples, handler: handler, seed: seed,
                layouts: layouts.isEmpty
                    ? nil : layouts.map { $0.split(separator: ",").compactMap { SampleKind(rawValue: String($0)) } },
                newDog: newDog ? true : nil)
            var withDuration = request
            withDuration.durationSeconds = duration
            withDuration.repetitions = repetitions
            withDuration.stations = stations.isEmpty ? nil : stations
            withDuration.unlabelled = unlabelled ? true : nil
            // Checked here too, so a slip is caught before the session starts.
            let room = try SessionConditions(temperatureC: temperature, humidityPercent: humidity, text: conditions)
                .checked()
            withDuration.temperatureC = room?.temperatureC
            withDuration.humidityPercent = room?.humidityPercent
            withDuration.conditions = room?.text
            let started = try socket.client.sessionStart(withDuration)
            if room != nil, started.conditionsRecorded != true {
                printError(
                    "warning: this lineupd is older than lineupctl and did not record the conditions "
                        + "(\(room?.description ?? "")): note them with `lineupctl session note \(started.session) ...`"
                )
            }
            if json { return try printJSON(started) }
            if let warning = started.warning { printError("warning: \(warning)") }
            say(started.message ?? "Session \(started.session) started for \(dog).")
        }
    }
}

// Retroactive, as SampleKind's in ResearchCommands.swift: the mode's raw values are the words typed.
extension TrainingMode: ExpressibleByArgument {}

struct SessionEnd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "end",
        abstract: "End the session, with the trainer's improvement suggestions.",
        discussion: """
            Examples:
              lineupctl session end
              lineupctl session end --suggestions "Shorter holds at station 3; fresh blanks"
            """)

    @OptionGroup var socket: SocketOptions
    @Option(help: ArgumentHelp("What to do better next time.", valueName: "text")) var suggestions: String?

    func run() throws {
        try controlCommand {
            try socket.client.endSession(suggestions: suggestions)
            say("Session ended.")
        }
    }
}

struct SessionAbort: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "abort",
        abstract: "Stop the current trial (recorded as aborted) and the session's block.",
        discussion: """
            Example:
              lineupctl session abort
            """)

    @OptionGroup var socket: SocketOptions

    func run() throws {
        try controlCommand {
            try socket.client.abort()
            say("Aborted.")
        }
    }
}

struct SessionResume: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Go on with the session cut short by a crash, a kill, a power cut or a restart.",
        discussion: """
            The block goes on after the last trial in the log, with its samples and its committed
            layouts; the trial (or round) that was running when lineupd stopped is logged
            interrupted and never run or scored again. `lineupctl status` says when a session
            waits to be resumed; `lineupctl session end` ends it instead.

            Example:
              lineupctl session resume
            """)

    @OptionGroup var socket: SocketOptions
    @Flag(help: "Print the reply as one JSON object.") var json = false

    func run() throws {
        try controlCommand {
            let resumed = try socket.client.resumeSession()
            if json { return try printJSON(resumed) }
            if let warning = resumed.warning { printError("warning: \(warning)") }
            say(resumed.message ?? "Session \(resumed.session) resumed.")
        }
    }
}

// MARK: - layout, ready, watch

struct LayoutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "layout",
        abstract: "The current layout: which sample goes in which station.",
        discussion: """
            For the loading assistant. In a double-blind session the handler's view is refused;
            the assistant asks with --assistant. This guards against a slip, not against a
            member of the lineup group who means to look.

            Examples:
              lineupctl layout --assistant
              lineupctl layout --assistant --json
            """)

    @OptionGroup var socket: SocketOptions
    @Flag(help: "Ask as the loading assistant (needed in double-blind sessions).") var assistant = false
    @Flag(help: "Print one JSON array.") var json = false

    func run() throws {
        try controlCommand {
            let stations = try socket.client.layout(view: assistant ? .assistant : .handler)
            if json { return try printJSON(stations) }
            var lines = ["Station  Kind        Sample"]
            for entry in stations {
                let station = entry.station.padding(toLength: max(7, entry.station.count), withPad: " ", startingAt: 0)
                let kind = entry.kind.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)
                lines.append("\(station)  \(kind)  \(entry.sample ?? "-")")
            }
            say(lines.joined(separator: "\n"))
        }
    }
}

struct ReadyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ready",
        abstract: "The containers are loaded: start the next trial.",
        discussion: """
            Says what the station did: the trial (or repetition) started, or it starts when the \
            inter-trial interval is over. A press that starts nothing (a station active, a trial \
            running, the block complete) is refused with why, and the exit status is 1.

            Example:
              lineupctl ready
            """)

    @OptionGroup var socket: SocketOptions
    @Flag(help: "Print one JSON object.") var json = false

    func run() throws {
        try controlCommand {
            let reply = try socket.client.ready()
            if json { return try printJSON(reply) }
            say("Ready: \(reply.message).")
        }
    }
}

struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Follow the station's events live, one JSON object per line, until interrupted.",
        discussion: """
            Examples:
              lineupctl watch
              lineupctl watch | jq -c 'select(.kind == "trial")'
            """)

    @OptionGroup var socket: SocketOptions

    func run() throws {
        try controlCommand {
            try socket.client.watchEvents { event in
                say(event.line)
                return true
            }
        }
    }
}
