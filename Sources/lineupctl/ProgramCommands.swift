import ArgumentParser
import Foundation
import StationControl
import TrainingEngine

// The trainer's and researcher's view of the training programs: which ones the station
// offers, what each asks of the dog, and whether a new program file will load. Read from the
// same built-ins and programs directory lineupd uses, through the same loader.

/// Where the program files are: lineupd's default, so both see the same programs.
struct ProgramsDirectoryOptions: ParsableArguments {
    @Option(
        name: .customLong("programs"),
        help: ArgumentHelp(
            "Program files NAME.toml offered besides the built-in ones (default, as lineupd: $CONFIGURATION_DIRECTORY/programs, else \(Self.fallback)).",
            valueName: "dir"))
    var directory: String?

    static let fallback = "/etc/lineup/programs"

    var path: String {
        directory ?? ProcessInfo.processInfo.environment["CONFIGURATION_DIRECTORY"].map { "\($0)/programs" }
            ?? Self.fallback
    }
}

/// What is wrong with a program file beyond its content (missing, unreadable).
struct ProgramFileError: Error, CustomStringConvertible {
    var description: String
}

/// Reads and parses one program file; every failure is one line naming the file.
func loadProgramFile(_ path: String) throws -> Program {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
        throw ProgramFileError(description: "\(path): no such file")
    }
    guard !isDirectory.boolValue else { throw ProgramFileError(description: "\(path): is a directory, not a file") }
    guard let data = FileManager.default.contents(atPath: path) else {
        throw ProgramFileError(description: "\(path): cannot be read (permissions?)")
    }
    guard let text = String(data: data, encoding: .utf8) else {
        throw ProgramFileError(description: "\(path): not UTF-8 text")
    }
    return try Program.parse(toml: text, source: path)
}

/// One line of `lineupctl programs`: a program that loads, or a file that does not.
struct ProgramListing: Encodable {
    /// What `session start --program` takes: the built-in's name or the file's name without `.toml`.
    var name: String
    /// `built-in` or the file's path.
    var source: String
    var title: String?
    var phases: Int?
    var steps: Int?
    var stationsNeeded: Int?
    /// The loader's one-line message, when the file does not load.
    var error: String?
    /// Why a file that loads is still not offered.
    var note: String?
}

struct ProgramsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "programs",
        abstract:
            "List the training programs the station accepts: the built-in ones and its programs directory's files.",
        discussion: """
            With lineupd running, the list is what it would accept for `session start \
            --program`, asked over its control socket: its built-in programs and the files of \
            the programs directory it was started with, each checked against its board. With \
            --programs DIR, the files of DIR are checked here instead, without asking lineupd \
            (a folder being prepared). When no lineupd answers, the default directory is read \
            and the list says so.

            A file that does not load is listed with the loader's message, so a typo is found \
            here rather than when a session is started. A file named like a built-in program is \
            not offered: lineupd looks for the built-in first.

            Examples:
              lineupctl programs
              lineupctl programs --programs /etc/lineup/programs --json
            """)
    @OptionGroup var programs: ProgramsDirectoryOptions
    @OptionGroup var socket: SocketOptions
    @Flag(help: "Print one JSON array.") var json = false

    func validate() throws {
        if programs.directory != nil && socket.socket != nil {
            throw ValidationError("give --programs (check a folder here) or --socket (ask lineupd), not both")
        }
    }

    func run() throws {
        try researcherCommand {
            var unanswered: String? = nil
            if programs.directory == nil {
                switch try askStation(socket) {
                case .answered(let about, let path):
                    let listings = about.programs.map(ProgramListing.init(offered:))
                    if json { return try printJSON(listings) }
                    printListings(listings)
                    // The socket is local: lineupd's directory is on this machine too.
                    let directory = about.programsDirectory.map {
                        FileManager.default.fileExists(atPath: $0) ? $0 : "\($0), which does not exist"
                    }
                    say("(what lineupd on \(path) accepts; its programs directory: \(directory ?? "none"))")
                    return
                case .unanswered(let why): unanswered = why
                }
            }
            var listings: [ProgramListing] = []
            for program in try Program.builtins() {
                listings.append(
                    ProgramListing(
                        name: program.name, source: "built-in", title: program.title, phases: program.phases.count,
                        steps: program.phases.map(\.steps.count).reduce(0, +), stationsNeeded: program.stationsNeeded))
            }
            let directory = programs.path
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory)
            if exists && !isDirectory.boolValue {
                throw ProgramFileError(description: "\(directory): is a file, not a programs directory")
            }
            // A directory named on the command line must be there; the default may well not be.
            if !exists && programs.directory != nil {
                throw ProgramFileError(description: "\(directory): no such directory")
            }
            var files: [String] = []
            if exists {
                guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
                    throw ProgramFileError(description: "\(directory): cannot be read (permissions?)")
                }
                files = names
            }
            // lineupd takes NAME.toml and refuses names starting with a dot.
            for file in files.sorted() where file.hasSuffix(".toml") && !file.hasPrefix(".") {
                let path = directory + "/" + file
                var listing = ProgramListing(name: String(file.dropLast(".toml".count)), source: path)
                do {
                    listing.describe(try loadProgramFile(path))
                    if Program.builtinNames.contains(listing.name) {
                        listing.note = "not offered: lineupd uses the built-in \(listing.name) first"
                    }
                } catch {
                    listing.error = String(describing: error)
                }
                listings.append(listing)
            }
            if json { return try printJSON(listings) }
            printListings(listings)
            if !exists { say("(no program files: \(directory) does not exist)") }
            if let unanswered {
                say("(the built-in programs and the default directory, not asked of lineupd: \(unanswered))")
            }
        }
    }

    private func printListings(_ listings: [ProgramListing]) {
        printTable(
            ["NAME", "PHASES", "STEPS", "STATIONS", "FROM", "TITLE"],
            listings.map { l in
                [
                    l.name, l.phases.map { "\($0)" } ?? "-", l.steps.map { "\($0)" } ?? "-",
                    l.stationsNeeded.map { "\($0)" } ?? "-", l.source,
                    l.error.map { "DOES NOT LOAD: \($0)" } ?? (l.title ?? "") + (l.note.map { " (\($0))" } ?? ""),
                ]
            })
    }
}

/// What the running lineupd says of itself, or why none could be asked (then the caller
/// reads the defaults instead, and says so). A socket named with --socket must answer.
enum StationAnswer {
    case answered(StationAbout, path: String)
    case unanswered(why: String)
}

func askStation(_ socket: SocketOptions) throws -> StationAnswer {
    let client = socket.client
    do {
        return .answered(try client.about(), path: client.path)
    } catch {
        switch error {
        case .notRunning, .staleSocket, .notAllowed:
            if socket.socket != nil { throw error }
            return .unanswered(why: error.description)
        case .refused(let refusal) where refusal.code == .unknownRequest:
            // An older lineupd, which cannot say: the defaults are the best guess left.
            return .unanswered(why: "lineupd on \(client.path) cannot say which programs it offers")
        default:
            throw error
        }
    }
}

extension ProgramListing {
    mutating func describe(_ program: Program) {
        title = program.title
        phases = program.phases.count
        steps = program.phases.map(\.steps.count).reduce(0, +)
        stationsNeeded = program.stationsNeeded
    }

    /// A program as lineupd offers it: read from the text lineupd read, with its reason when
    /// lineupd would refuse it (a file that does not load, or one it does not offer).
    init(offered: OfferedProgram) {
        self.init(name: offered.name, source: offered.source)
        guard let text = offered.text else {
            error = offered.refused ?? "lineupd could not read it"
            return
        }
        do {
            describe(try Program.parse(toml: text, source: offered.source))
            note = offered.refused.map { $0.hasPrefix("not offered") ? $0 : "not offered: \($0)" }
        } catch {
            self.error = offered.refused ?? String(describing: error)
        }
    }
}

struct ProgramCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "program", abstract: "Show a training program, or check a program file.",
        subcommands: [Show.self, Check.self])

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a program's phases, steps and exercises, as the station runs them.",
            discussion: """
                NAME is a built-in program, a NAME.toml of the programs directory (looked for in \
                that order, as lineupd does), or the path of a .toml file. With lineupd running, \
                NAME is the program it would load for `session start --program NAME`, asked over \
                its control socket; with --programs DIR (or when no lineupd answers), it is looked \
                for here. Each step is shown as `session start --step` takes it (phase/step).

                Examples:
                  lineupctl program show study
                  lineupctl program show research-5-station --json
                """)
        @OptionGroup var programs: ProgramsDirectoryOptions
        @OptionGroup var socket: SocketOptions
        @Argument(help: "A built-in program, a program of the programs directory, or a .toml file's path.")
        var name: String
        @Flag(help: "Print one JSON object.") var json = false

        func validate() throws {
            if programs.directory != nil && socket.socket != nil {
                throw ValidationError("give --programs (look in a folder here) or --socket (ask lineupd), not both")
            }
        }

        func run() throws {
            try researcherCommand {
                let view = ProgramView(try resolve())
                if json { return try printJSON(view) }
                FileHandle.standardOutput.write(Data(view.text.utf8))
            }
        }

        /// The program NAME stands for, found as lineupd finds it.
        func resolve() throws -> Program {
            if name.contains("/") || name.hasSuffix(".toml") { return try loadProgramFile(name) }
            if programs.directory == nil, case .answered(let about, let path) = try askStation(socket) {
                // As lineupd looks: the built-in first, then the directory's file.
                guard let offered = about.programs.first(where: { $0.name == name }) else {
                    let names = about.programs.filter { $0.refused == nil }.map(\.name)
                    throw ProgramFileError(
                        description:
                            "lineupd on \(path) offers no program named \"\(name)\" (it offers: \(names.joined(separator: ", ")); lineupctl programs lists them)"
                    )
                }
                if let refused = offered.refused {
                    throw ProgramFileError(description: "lineupd on \(path) would refuse \(name): \(refused)")
                }
                return try Program.parse(toml: offered.text ?? "", source: offered.source)
            }
            if let builtin = try Program.builtin(named: name) { return builtin }
            let path = programs.path + "/" + name + ".toml"
            guard FileManager.default.fileExists(atPath: path) else {
                throw ProgramFileError(
                    description:
                        "no program named \"\(name)\" (built in: \(Program.builtinNames.joined(separator: ", ")); none at \(path); lineupctl programs lists them)"
                )
            }
            return try loadProgramFile(path)
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Check a program file: it loads as lineupd would load it, or one line says what is wrong and where.",
            discussion: """
                Prints `ok: NAME, P phases, S steps`, or the loader's message (file, key, problem) \
                and exits 1. With --stations, each step's lineup must also fit a board of that \
                many stations, as lineupd checks when a session is started.

                Example:
                  lineupctl program check my-program.toml --stations 5
                """)
        @Argument(help: "The program file (.toml).") var file: String
        @Option(help: "Also check that every step fits a board with this many stations.") var stations: Int?

        func validate() throws {
            if let stations, stations < 1 { throw ValidationError("--stations must be at least 1") }
        }

        func run() throws {
            try researcherCommand {
                let program = try loadProgramFile(file)
                if let stations { try program.validate(stationCount: stations) }
                let steps = program.phases.map(\.steps.count).reduce(0, +)
                say("ok: \(program.name), \(count(program.phases.count, "phase")), \(count(steps, "step"))")
            }
        }
    }
}

// MARK: - A program as shown: one model for the text and the JSON

/// A program as `program show` prints it. A field added to a step is added to `StepView` and
/// one line of `facts`, and both the text and the JSON carry it.
struct ProgramView: Encodable {
    var name: String
    var title: String
    var description: String
    var source: String
    var stationsNeeded: Int
    var phases: [PhaseView]

    init(_ program: Program) {
        name = program.name
        title = program.title
        description = program.description
        source = program.source
        stationsNeeded = program.stationsNeeded
        phases = program.phases.map { PhaseView($0) }
    }

    var text: String {
        let steps = phases.map(\.steps.count).reduce(0, +)
        var out = "\(name): \(title)\n"
        if !description.isEmpty { out += "  \(description)\n" }
        out +=
            "  From \(source); \(count(phases.count, "phase")), \(count(steps, "step")), "
            + "up to \(count(stationsNeeded, "station")).\n"
        for phase in phases {
            out += "\nPhase \(phase.id): \(phase.title)\n"
            if !phase.description.isEmpty { out += "  \(phase.description)\n" }
            for step in phase.steps {
                out += "\n  Step \(step.step): \(step.title)\n"
                if !step.description.isEmpty { out += "    \(step.description)\n" }
                for (label, value) in step.facts {
                    out += "    " + label.padding(toLength: 14, withPad: " ", startingAt: 0) + value + "\n"
                }
                for exercise in step.exercises {
                    out += "    Exercise \(exercise.id): \(exercise.title), \(exercise.measure)\n"
                    out += "      \(exercise.instruction)\n"
                }
            }
        }
        return out
    }
}

struct PhaseView: Encodable {
    var id: String
    var title: String
    var description: String
    var steps: [StepView]

    init(_ phase: Phase) {
        id = phase.id
        title = phase.title
        description = phase.description
        steps = phase.steps.map { StepView($0, phase: phase.id) }
    }
}

struct StepView: Encodable {
    var id: String
    /// As `session start --step` takes it: `phase/step`.
    var step: String
    var title: String
    var description: String
    var mode: String
    var lineup: LineupView
    /// Absent: the board's hold time.
    var holdS: Double?
    /// Automated steps only: the pause between trials.
    var interTrialS: Double?
    var criterion: String
    /// How each trial or round starts, in words; and the step's `ready` (automated steps).
    var starts: String
    var ready: String?
    /// Automated steps: `end` or `continue` (what a false alert does to the trial).
    var afterFalseAlert: String?
    var exercises: [ExerciseView]

    init(_ step: Step, phase: String) {
        id = step.id
        self.step = "\(phase)/\(step.id)"
        title = step.title
        description = step.description
        mode = step.mode.rawValue
        lineup = LineupView(step.lineup)
        holdS = step.holdSeconds
        interTrialS = step.mode == .trainerLed ? nil : step.interTrialSeconds
        criterion = step.completionRule
        starts =
            step.mode == .trainerLed
            ? "by the trainer (ready), each repetition a round"
            : step.ready == .auto ? "by itself after the interval (ready = auto)" : "at the assistant's ready press"
        ready = step.mode == .trainerLed ? nil : step.ready.rawValue
        afterFalseAlert = step.mode == .trainerLed ? nil : step.afterFalseAlert.rawValue
        exercises = step.exercises.map { ExerciseView($0, mode: step.mode) }
    }

    /// The step's settings as label and words, in the order the text shows them.
    var facts: [(String, String)] {
        var facts = [("Mode", mode), ("Lineup", lineup.inWords)]
        // Trainer-led rounds are laid out like trials: the rule applies to both.
        if let run = lineup.maxSameStationInARow {
            facts.append(("Same station", "the target at most \(count(run, "trial")) in a row in one station"))
        }
        facts.append(("Hold", holdS.map { "\(seconds($0)) at one station" } ?? "the board's hold time"))
        if let interTrialS { facts.append(("Interval", "\(seconds(interTrialS)) between trials")) }
        facts.append(("Starts", starts))
        if let afterFalseAlert {
            facts.append(
                (
                    "False alert",
                    afterFalseAlert == AfterFalseAlert.end.rawValue
                        ? "ends the trial (after_false_alert = end)"
                        : "the dog may search on and be clicked at the target; still scored a false alert (after_false_alert = continue)"
                ))
        }
        facts.append(("Criterion", criterion))
        return facts
    }
}

struct LineupView: Encodable {
    var inWords: String
    var stations: Int
    var targets: Int
    var controls: Int
    var blanks: Int
    var distractors: Int
    var noTargetShare: Double
    /// Absent for a one-station lineup, where it cannot apply.
    var maxSameStationInARow: Int?

    init(_ setup: LineupSetup) {
        inWords = setup.inWords
        stations = setup.stations
        targets = setup.targets
        controls = setup.controls
        blanks = setup.blanks
        distractors = setup.distractors
        noTargetShare = setup.noTargetShare
        maxSameStationInARow = setup.stations > 1 && setup.targets > 0 ? setup.maxSameStationInARow : nil
    }
}

struct ExerciseView: Encodable {
    var id: String
    var title: String
    var instruction: String
    /// Trainer-led: how long the exercise lasts, and how often it may be done in a session.
    var durationS: Double?
    var repeats: Int?
    /// Automated: trials in a block, and each trial's search time-out.
    var trials: Int?
    var searchTimeoutS: Double?

    init(_ exercise: Exercise, mode: TrainingMode) {
        id = exercise.id
        title = exercise.title
        instruction = exercise.instruction
        if mode == .trainerLed {
            durationS = exercise.durationSeconds
            repeats = exercise.repeats
        } else {
            trials = exercise.trials
            searchTimeoutS = exercise.durationSeconds
        }
    }

    /// "10 s, up to 4 times" or "20 trials a block, 60 s to search each".
    var measure: String {
        if let trials, let searchTimeoutS {
            return "\(count(trials, "trial")) a block, \(seconds(searchTimeoutS)) to search each"
        }
        return "\(seconds(durationS ?? 0)), up to \(count(repeats ?? 0, "time")) in a session"
    }
}

/// `10 s`, `2.5 s`.
private func seconds(_ value: Double) -> String {
    String(format: "%g s", value)
}
