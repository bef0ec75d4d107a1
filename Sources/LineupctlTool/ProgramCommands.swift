import ArgumentParser
import Foundation
import ProgramFiles
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
                writeOut(Data(view.text.utf8))
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
