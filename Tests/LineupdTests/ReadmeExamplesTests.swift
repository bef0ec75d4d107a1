import Foundation
import Glibc
import SessionLog
import StationControl
import Synchronization
import Testing
import TrainingEngine

/// Say only what runs: every `lineupctl` and `lineupd` command in the README's shell blocks
/// (README.md and docs/*.md) and in lineupctl's own help texts (every subcommand's examples,
/// read from `lineupctl --experimental-dump-help`) is run, in order, against a simulated station serving its socket,
/// and must exit 0 with nothing on stderr (a `--fault` example: only its stations' fault
/// lines). Placeholders (the README's example ids, paths and dog names) are replaced by real
/// ones, listed below. Commands that need a board, root or a network are exempt, each with
/// its reason, and an exemption that no longer matches a README line fails the test, so the
/// list cannot rot.
@Suite(.serialized, .ownThreads) struct ReadmeExamplesTests {
    /// Prefixes of commands not run here, and why.
    static let exemptions: [(prefix: String, why: String)] = [
        ("lineupctl selftest --config", "needs the board's GPIO lines and sound card"),
        ("lineupd --config /etc/lineup/station.toml", "needs the board's GPIO lines (the VM tier runs it on gpio-sim)"),
        ("lineupd --simulate --serve --socket /tmp/lineup.sock", "the test's own station is this command"),
        (
            "lineupctl session resume",
            "needs a session cut short; ResumeTests kills lineupd during a session and resumes it"
        ),
        (
            "lineupctl pull",
            "needs stations over ssh; PullTests runs pull against simulated stations with a stand-in ssh"
        ),
    ]

    /// Files the docs show whole: a ```toml block whose first line is `# NAME.toml` is written to
    /// NAME.toml in the station's directory, so an example that names it checks that very text.
    static func files(in text: String) -> [(name: String, content: String)] {
        var out: [(String, String)] = []
        var current: (name: String, lines: [String])? = nil
        var inTOML = false
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(raw)
            if line.hasPrefix("```") {
                if let file = current { out.append((file.name, file.lines.joined(separator: "\n") + "\n")) }
                current = nil
                inTOML = !inTOML && line == "```toml"
                continue
            }
            guard inTOML else { continue }
            if current == nil {
                inTOML = false
                guard line.hasPrefix("# "), line.hasSuffix(".toml"), !line.dropFirst(2).contains(" ") else { continue }
                current = (String(line.dropFirst(2)), [])
                inTOML = true
            }
            current?.lines.append(line)
        }
        return out
    }

    /// The shell commands of the README's ```sh blocks: continuation lines joined, `$ ` and
    /// `ssh pi ` taken off, comments dropped.
    static func commands(in text: String) -> [String] {
        var out: [String] = []
        var inShell = false
        var pending = ""
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(raw)
            if line.hasPrefix("```") {
                inShell = !inShell && (line == "```sh" || line == "```bash")
                pending = ""
                continue
            }
            guard inShell else { continue }
            if line.hasSuffix("\\") {
                pending += line.dropLast() + " "
                continue
            }
            var command = (pending + line).trimmingCharacters(in: .whitespaces)
            pending = ""
            for prefix in ["$ ", "ssh pi "] where command.hasPrefix(prefix) { command.removeFirst(prefix.count) }
            guard command.hasPrefix("lineupctl ") || command.hasPrefix("lineupd ") else { continue }
            out.append(stripComment(command))
        }
        return out
    }

    /// lineupctl's and lineupd's help examples, every subcommand's, as one shell block: the
    /// lines of each discussion that start with the tool's name (with their continuation lines).
    static func helpExamples() throws -> String {
        var lines: [String] = []
        for tool in ["lineupctl", "lineupd"] {
            let dump = try runBuilt(tool, ["--experimental-dump-help"])
            guard let object = try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any],
                let root = object["command"] as? [String: Any]
            else {
                Issue.record("\(tool) --experimental-dump-help gave no command tree")
                continue
            }
            lines += helpExamples(root, tool: tool)
        }
        #expect(lines.count > 40, "the tools' help examples were not found")
        return "```sh\n" + lines.joined(separator: "\n") + "\n```\n"
    }

    static func helpExamples(_ root: [String: Any], tool: String) -> [String] {
        var lines: [String] = []
        func walk(_ command: [String: Any]) {
            var continuing = false
            for raw in ((command["discussion"] as? String) ?? "").split(separator: "\n") {
                let line = raw.trimmingCharacters(in: .whitespaces)
                if continuing || line.hasPrefix(tool + " ") {
                    lines.append(line)
                    continuing = line.hasSuffix("\\")
                }
            }
            for sub in (command["subcommands"] as? [[String: Any]]) ?? [] { walk(sub) }
        }
        walk(root)
        return lines
    }

    /// Drops a trailing `# comment` outside quotes.
    static func stripComment(_ command: String) -> String {
        var quote: Character? = nil
        var previous: Character = " "
        for (offset, c) in command.enumerated() {
            if let q = quote {
                if c == q { quote = nil }
            } else if c == "\"" || c == "'" {
                quote = c
            } else if c == "#" && previous == " " {
                return String(command.prefix(offset)).trimmingCharacters(in: .whitespaces)
            }
            previous = c
        }
        return command
    }

    /// Splits a command line into arguments (double and single quotes, no expansions).
    static func words(_ command: String) -> [String] {
        var words: [String] = []
        var word = ""
        var quote: Character? = nil
        var inWord = false
        for c in command {
            if let q = quote {
                if c == q { quote = nil } else { word.append(c) }
            } else if c == "\"" || c == "'" {
                quote = c
                inWord = true
            } else if c == " " {
                if inWord { words.append(word) }
                word = ""
                inWord = false
            } else {
                word.append(c)
                inWord = true
            }
        }
        if inWord { words.append(word) }
        return words
    }

    @Test func everyCommandExampleRuns() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        var text = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let docs = root.appendingPathComponent("docs")
        for file in (try? FileManager.default.contentsOfDirectory(atPath: docs.path))?.sorted() ?? []
        where file.hasSuffix(".md") {
            text += "\n" + (try String(contentsOf: docs.appendingPathComponent(file), encoding: .utf8))
        }
        text += "\n" + (try Self.helpExamples())
        // A command shown in several places (a doc and a help text) is run once.
        var seen = Set<String>()
        let commands = Self.commands(in: text).filter { seen.insert($0).inserted }
        #expect(commands.count > 30, "the README's examples were not found")
        for exemption in Self.exemptions {
            #expect(
                commands.contains { $0.hasPrefix(exemption.prefix) },
                "exemption no longer matches a README command: \(exemption.prefix)")
        }

        // The station: a simulated lineup serving its socket. The docs' own additions come
        // first (the README documents adding after finding), so the dogs and samples they
        // add are theirs; then samples and two trials of Rex's, so the README's ids have
        // something real to stand for.
        guard let daemon = try ServingStationTests.Daemon(speed: 30) else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady(dogs: []))
        let client = daemon.client
        let env = ["LINEUP_SOCKET": daemon.socket, "LINEUP_DB": daemon.db]
        var substitutions = [
            "/tmp/lineup.sock": daemon.socket, "/tmp/lineup.db": daemon.db,
            "/var/lib/lineup/backup-2025-05-01.db": daemon.directory + "/backup.db",
            "pi-1.db": daemon.directory + "/pi-1.db", "pi-2.db": daemon.directory + "/pi-2.db",
            "/media/usb/lineup-2025-05-01.db": daemon.directory + "/usb-copy.db",
            "--programs /etc/lineup/programs": "--programs " + daemon.directory,
            " lab.db": " " + daemon.directory + "/lab.db",
        ]

        var newDogs = 0
        var ran = 0
        var exempt = 0
        // The `lineupd` examples (simulated blocks) running beside the others, and their ends.
        var blocks = 0
        let running = DispatchGroup()
        let finished = BlockResults()
        func run(_ command: String) throws {
            if Self.exemptions.contains(where: { command.hasPrefix($0.prefix) }) {
                exempt += 1
                return
            }
            var line = command
            for (from, to) in substitutions { line = line.replacingOccurrences(of: from, with: to) }
            // Output redirections and pipes are the reader's; the command is what is checked.
            if let bar = line.firstIndex(of: "|") { line = String(line[..<bar]).trimmingCharacters(in: .whitespaces) }
            if let gt = line.firstIndex(of: ">") { line = String(line[..<gt]).trimmingCharacters(in: .whitespaces) }
            if line.hasSuffix(" &") { line.removeLast(2) }
            var arguments = Self.words(line)
            // A dog said to be new must be new: each example gets a name of its own.
            if arguments.contains("--new-dog"), let at = arguments.firstIndex(of: "--dog") {
                newDogs += 1
                arguments[at + 1] += "-readme-\(newDogs)"
            }
            let tool = arguments.removeFirst()
            // The examples are independent: a session an earlier one left running is ended.
            if arguments.starts(with: ["session", "start"]) {
                _ = try? lineupctl(["session", "abort"], environment: env)
                _ = try? lineupctl(["session", "end"], environment: env)
            }
            // A guess is for a trial of a double-blind session, one per trial: it gets a fresh one.
            if arguments.first == "guess" {
                _ = try? lineupctl(["session", "abort"], environment: env)
                _ = try? lineupctl(["session", "end"], environment: env)
            }
            // Commands about the running session get one when an earlier example ended it.
            if ["layout", "ready", "simulate", "guess"].contains(arguments.first ?? "")
                || arguments.starts(with: ["session", "end"]) || arguments.starts(with: ["session", "abort"])
            {
                _ = try? lineupctl(
                    [
                        "session", "start", "--dog", "Rex", "--program", "research-5-station", "--step", "phase-3/1",
                        "--unlabelled",
                    ], environment: env)
            }
            if arguments.first == "watch" {
                // A stream until Ctrl-C: it must connect and stay up.
                let result = try runFor(seconds: 1, tool: tool, arguments, environment: env)
                #expect(result.exitedEarly == false && result.stderr.isEmpty, "\(command): \(result.stderr)")
                ran += 1
                return
            }
            if tool == "lineupd" {
                // A simulated block runs for seconds of its own and touches nothing the other
                // examples read, so it runs beside them, in a directory of its own (its
                // `--db faults.db` or ./lineup.db its own too), holding the docs' files.
                blocks += 1
                let directory = daemon.directory + "/block-\(blocks)"
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                for file in Self.files(in: text) {
                    try file.content.write(toFile: directory + "/" + file.name, atomically: true, encoding: .utf8)
                }
                let blockArguments = arguments + ["--no-realtime", "--device", "null"]
                let shown = line
                running.enter()
                Thread {
                    let result = Result { try lineupd(blockArguments, in: directory) }
                    finished.all.withLock { $0.append((command, shown, blockArguments, result)) }
                    running.leave()
                }.start()
                return
            }
            let result = try runBuilt("lineupctl", arguments, environment: env, directory: daemon.directory)
            check(command, line, arguments, result)
        }
        func check(
            _ command: String, _ line: String, _ arguments: [String],
            _ result: (status: Int32, stdout: String, stderr: String)
        ) {
            #expect(result.status == 0, "README: \(command)\n→ \(line)\n\(result.stderr)")
            if arguments.contains("--fault") {
                // A broken sensor's example: its station's lines are the point, and nothing else;
                // a failing sound's, the sound device's.
                let lines = result.stderr.split(separator: "\n")
                let said =
                    arguments.contains { $0.hasPrefix("sound-") } ? "lineupd: the sound device " : "lineupd: station "
                #expect(lines.allSatisfy { $0.hasPrefix(said) }, "README: \(command)\n\(result.stderr)")
            } else {
                // A reading while the docs' double-blind session runs says what it withholds,
                // on stderr when stdout is the file (report, export); nothing else is said.
                let said = result.stderr.split(separator: "\n").filter {
                    !($0.contains("a double-blind session is running (session ")
                        && $0.hasSuffix("withheld until it ends"))
                }
                #expect(said.isEmpty, "README: \(command)\n\(result.stderr)")
            }
            ran += 1
        }

        // Dogs and samples are added before they are looked for; otherwise in the README's order.
        func adds(_ c: String) -> Bool {
            c.hasPrefix("lineupctl dogs add") || c.hasPrefix("lineupctl samples add")
                || c.hasPrefix("lineupctl samples note")
        }
        for command in commands.filter(adds) { try run(command) }
        // Rex is the docs' dog (docs/trainer.md adds him); the trials below need him whatever the docs say.
        _ = try? client.addDog(DogEntry(name: "Rex"))
        for (label, kind) in [
            ("T-7", "target"), ("C-1", "control"), ("C-2", "control"), ("C-3", "control"), ("C-4", "control"),
            ("C-5", "control"),
        ] {
            _ = try client.addSample(SampleEntry(label: label, kind: kind == "target" ? .target : .control))
        }
        // Two trials with the target at station 2, each stopped as soon as it starts (aborted),
        // so the correction examples (to a miss, to a false alert at 3) always change something.
        let sheet: [SampleKind] = [.control, .target, .control, .control, .control]
        _ = try client.startSession(
            SessionRequest(
                dog: "Rex", program: "research-5-station", step: "phase-3/1",
                layouts: [sheet, sheet], unlabelled: true))
        for n in 1...2 {
            // Pressed again while a start is refused (a nose still at a station): it starts once.
            #expect(
                eventually(15) {
                    try? client.ready()
                    return [StationState.searching, .holding].contains((try? client.status().state) ?? .idle)
                        || (try? client.status().trialsDone) == n
                }, "preparing trial \(n) never started")
            try? client.abort()
            #expect(eventually(10) { (try? client.status().trialsDone) == n }, "preparing trial \(n) never ended")
        }
        try client.endSession(suggestions: nil)
        let reader = try SessionLog.openReader(path: daemon.db)
        let session = String(try #require(try reader.sessions().first).id.prefix(8))
        // Newest first: the second trial, then the first.
        let trials = try reader.trials()
        #expect(trials.count == 2)
        let trial = String(try #require(trials.last).id.prefix(8))
        let otherTrial = String(try #require(trials.first).id.prefix(8))
        // Two stations' copies for the merge example: backups of this station's log.
        for copy in ["pi-1.db", "pi-2.db"] {
            let backup = try lineupctl(["backup", daemon.directory + "/" + copy], environment: env)
            #expect(backup.status == 0, "\(backup.stderr)")
        }
        for file in Self.files(in: text) {
            try file.content.write(toFile: daemon.directory + "/" + file.name, atomically: true, encoding: .utf8)
        }
        substitutions["3f2a9c1e"] = session
        substitutions["9b1c0d2e"] = trial
        substitutions["4d7e1a90"] = otherTrial
        for command in commands.filter({ !adds($0) }) { try run(command) }
        // Each block ends by itself; the wait is only a bound on a hung one.
        #expect(running.wait(timeout: .now() + 180) == .success, "a documented lineupd block did not end")
        for (command, line, arguments, result) in finished.all.withLock({ $0 }) {
            check(command, line, arguments, try result.get())
        }
        #expect(blocks > 0, "the docs' lineupd examples were not found")
        #expect(ran + exempt == commands.count)
    }

    /// The quick start's first command builds both tools (debug: the build the second command's
    /// `swift build` goes on from) and runs the simulated block, and the block's closing lines
    /// name `lineupctl` commands that run as printed from that directory. Run as the README has
    /// it, from a directory whose `.build/debug` is this build (with fewer trials, a fixed seed
    /// and the `null` device), through the shell.
    @Test func theQuickStartsClosingLinesRunAsPrinted() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let first = try #require(
            readme.split(separator: "\n").first { $0.hasPrefix("apt-get update && ") }, "quick start not found")
        let steps = first.components(separatedBy: " && ")
        // Only the two tools the block and its closing lines need, not every product.
        #expect(steps.contains("swift build --product lineupd"), "\(first)")
        #expect(steps.contains("swift build --product lineupctl"), "\(first)")
        let run = try #require(steps.last)
        #expect(run.hasPrefix(".build/debug/lineupd --simulate"), "\(run)")

        let directory =
            FileManager.default.temporaryDirectory.appendingPathComponent("quick-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory + "/.build", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: directory + "/.build/debug", withDestinationPath: root.appendingPathComponent(".build/debug").path
        )
        let block = try shell(
            run + " --trials 2 --seed 1 --speed 30 --no-realtime --device null", in: directory)
        #expect(block.status == 0, "\(block.stderr)")
        let lines = block.stdout.split(separator: "\n").map(String.init)
        let closing = try #require(lines.firstIndex(of: "look at the log:"), "\(block.stdout)")
        let commands = lines[(closing + 1)...].map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(commands.count == 3)
        for command in commands {
            #expect(command.hasPrefix(".build/debug/lineupctl "), "\(command)")
            let result = try shell(command, in: directory)
            #expect(result.status == 0 && result.stderr.isEmpty, "\(command)\n\(result.stderr)")
            #expect(!result.stdout.isEmpty, "\(command)")
        }
        let sessions = try shell(try #require(commands.first), in: directory)
        #expect(sessions.stdout.contains("virtual dog"), "\(sessions.stdout)")
    }

    /// A command line through `/bin/sh`, as typed, in `directory`; no station variables.
    func shell(_ command: String, in directory: String) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        return try runToEnd(process)
    }

    /// Runs a command that streams until stopped; true in `exitedEarly` if it ended by itself.
    func runFor(seconds: Double, tool: String, _ arguments: [String], environment: [String: String]) throws -> (
        exitedEarly: Bool, stderr: String
    ) {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let process = Process()
        process.executableURL = root.appendingPathComponent(".build/debug/\(tool)")
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        usleep(UInt32(seconds * 1_000_000))
        let early = !process.isRunning
        // Ctrl-C's effect, without waiting for a reader that may be blocked on the socket.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return (early, String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }
}

/// The documented `lineupd` blocks' ends, as their threads finish: the command, the line run,
/// its arguments and what it gave.
final class BlockResults: Sendable {
    let all = Mutex<[(String, String, [String], Result<(status: Int32, stdout: String, stderr: String), any Error>)]>(
        [])
}
