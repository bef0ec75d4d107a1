import ArgumentParser
import Foundation
import Glibc

/// `lineup-bench table`: the README's "What is measured" from one run, so that its figures are
/// current by construction: each row is a benchmark this command ran, and the paragraph above
/// the table says the build, the machine, the date and the commit.
struct BenchTable: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "table",
        abstract: "Run the README's benchmarks once and print its \"What is measured\" table.",
        discussion: """
            Runs each benchmark of the README's table once, each in a process of its own (this \
            lineup-bench, and the lineupd and lineupctl built beside it), and prints the section: \
            a paragraph with the build, the machine, the date, the commit and the load, then \
            one row per benchmark. Build in release first (`swift build -c release`); a debug \
            build says so in the paragraph (and takes far longer). `--write README.md` puts the \
            section between the README's markers (nothing is written if a benchmark fails); \
            `--check README.md` runs nothing and says whether the README's section has the \
            shape this command writes: its rows and commands, not its figures.

            Examples:
              lineup-bench table --write README.md
              lineup-bench table --check README.md
            """)

    @Option(help: ArgumentHelp("Write the section into this README, between its markers.", valueName: "file"))
    var write: String?
    @Option(
        help: ArgumentHelp("Run nothing: check this README's section has the shape written here.", valueName: "file"))
    var check: String?

    func validate() throws {
        if write != nil && check != nil { throw ValidationError("--write and --check: give one of them") }
    }

    func run() throws {
        if let check {
            let text: String
            do { text = try String(contentsOfFile: check, encoding: .utf8) } catch {
                printError("table --check: cannot read \(check): \(error.localizedDescription)")
                throw ExitCode(1)
            }
            if let problem = MeasuredTable.check(text) {
                printError("table --check: \(check) \(problem)")
                throw ExitCode(1)
            }
            print("\(check): the measured table has the shape `lineup-bench table` writes")
            return
        }
        // The README must take the section before a run of minutes, not after it.
        var readme: String?
        if let write {
            do { readme = try String(contentsOfFile: write, encoding: .utf8) } catch {
                printError("table --write: cannot read \(write): \(error.localizedDescription)")
                throw ExitCode(1)
            }
            if let problem = MeasuredTable.markersProblem(readme!) {
                printError("table --write: \(write): \(problem)")
                throw ExitCode(1)
            }
        }
        let section: String
        do { section = try measure() } catch {
            printError("table: \(error)")
            throw ExitCode(1)
        }
        guard let write, let readme else {
            print(section)
            return
        }
        do {
            try MeasuredTable.replacingSection(of: readme, with: section).write(
                toFile: write, atomically: true, encoding: .utf8)
        } catch {
            printError("table --write: cannot write \(write): \(error.localizedDescription)")
            throw ExitCode(1)
        }
        print("\(write): the measured table written")
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs every benchmark of the table and renders it.
    private func measure() throws -> String {
        let started = Date()
        let loadAtStart = loadAverage()
        // The commit checked out as the run starts: the one the binaries were built from.
        let measuredCommit = commit()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("lineup-bench-table-\(getpid())")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let db = scratch.appendingPathComponent("filled.db").path
        var runs = MeasuredTable.Runs()

        runs["click"] = try bench("click", ["click", "--clicks", "1000"], scratch: scratch)
        // The log beside the clicks: it runs 60 s, the 2,000 clicks about 45 s from 2 s in.
        let log = try start(["log", "--rate", "20000", "--seconds", "60"], scratch: scratch, name: "log")
        usleep(2_000_000)
        runs["click-beside-log"] = try bench("click-beside-log", ["click", "--clicks", "2000"], scratch: scratch)
        runs["log"] = try finish(log)
        runs["engine"] = try bench("engine", ["engine"], scratch: scratch)
        runs["block"] = try bench("block", ["block", "--trials", "10000"], scratch: scratch)
        runs["fill"] = try bench(
            "fill",
            [
                "fill", "--db", db, "--dogs", "10", "--sessions-per-dog", "250", "--trials-per-session", "40",
                "--events-per-trial", "10",
            ], scratch: scratch)
        runs["export"] = try bench("export", ["export", "--db", db], scratch: scratch)
        runs["stats"] = try bench("stats", ["stats", "--db", db], scratch: scratch)
        runs["report"] = try bench("report", ["report", "--db", db], scratch: scratch)
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: db + suffix) }
        runs["storage"] = try bench("storage", ["storage", "--trials", "100", "--speed", "30"], scratch: scratch)
        runs["daemon"] = try bench("daemon", ["daemon", "--trials", "300"], scratch: scratch)
        runs["sessions"] = try bench("sessions", ["sessions", "--cycles", "1000"], scratch: scratch)

        #if DEBUG
            let build = "debug"
        #else
            let build = "release"
        #endif
        let machine = MeasuredTable.Machine(
            build: build, commit: measuredCommit, date: Self.utcDate(started), architecture: architecture(),
            cores: String(sysconf(Int32(_SC_NPROCESSORS_ONLN))), cpu: cpuModel(), system: systemName(),
            swift: swiftVersion(), loadAtStart: loadAtStart, loadAtEnd: loadAverage(),
            seconds: String(Int(Date().timeIntervalSince(started).rounded())))
        return MeasuredTable.render(machine, runs)
    }

    /// A benchmark running in its own process, its stdout and stderr in files.
    private struct Started {
        var name: String
        var process: Process
        var output: URL
        var errors: URL
    }

    private func start(_ arguments: [String], scratch: URL, name: String) throws -> Started {
        FileHandle.standardError.write(Data("lineup-bench table: \(arguments.joined(separator: " "))\n".utf8))
        let output = scratch.appendingPathComponent("\(name).out")
        let errors = scratch.appendingPathComponent("\(name).err")
        FileManager.default.createFile(atPath: output.path, contents: nil)
        FileManager.default.createFile(atPath: errors.path, contents: nil)
        let process = Process()
        process.executableURL = besideThisExecutable("lineup-bench")
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: errors)
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch {
            throw Failure(description: "cannot start lineup-bench \(arguments.joined(separator: " ")): \(error)")
        }
        return Started(name: name, process: process, output: output, errors: errors)
    }

    /// The benchmark's one JSON object (its last line), or why there is none.
    private func finish(_ started: Started) throws -> MeasuredTable.Run {
        started.process.waitUntilExit()
        let command = "lineup-bench " + ((started.process.arguments ?? []).joined(separator: " "))
        let output = (try? String(contentsOf: started.output, encoding: .utf8)) ?? ""
        guard started.process.terminationStatus == 0 else {
            let errors = (try? String(contentsOf: started.errors, encoding: .utf8)) ?? ""
            let tail = errors.split(separator: "\n").suffix(5).joined(separator: "\n  ")
            throw Failure(
                description: "`\(command)` exited with \(started.process.terminationStatus); nothing written\n  \(tail)"
            )
        }
        guard let line = output.split(separator: "\n").last,
            let json = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        else {
            throw Failure(description: "`\(command)` printed no JSON object; nothing written")
        }
        return MeasuredTable.Run(json: json)
    }

    private func bench(_ name: String, _ arguments: [String], scratch: URL) throws -> MeasuredTable.Run {
        try finish(try start(arguments, scratch: scratch, name: name))
    }

    static func utcDate(_ date: Date) -> String {
        var time = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&time, &parts)
        return String(
            format: "%04d-%02d-%02d %02d:%02d UTC", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
            Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min))
    }

    private func loadAverage() -> String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").first.map(String.init) ?? "unknown"
    }

    private func architecture() -> String {
        var names = utsname()
        uname(&names)
        return withUnsafeBytes(of: &names.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    private func cpuModel() -> String {
        let text = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n")
        where line.hasPrefix("model name") || line.hasPrefix("Model") || line.hasPrefix("Hardware") {
            if let value = line.split(separator: ":", maxSplits: 1).last {
                return value.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "|", with: "/")
            }
        }
        return "CPU model unknown"
    }

    private func systemName() -> String {
        let text = (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n") where line.hasPrefix("PRETTY_NAME=") {
            return String(line.dropFirst("PRETTY_NAME=".count)).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return "system unknown"
    }

    /// The first line of a program's output, or nil if it did not run.
    private func firstLine(_ executable: String, _ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").first.map(String.init)
    }

    /// The commit checked out where the table is made, and whether tracked files differ from it.
    private func commit() -> String {
        guard let hash = firstLine("git", ["rev-parse", "--short", "HEAD"]) else { return "unknown (no git)" }
        let changed = firstLine("git", ["status", "--porcelain", "--untracked-files=no"]) != nil
        return "`\(hash)`" + (changed ? " with uncommitted changes" : "")
    }

    private func swiftVersion() -> String {
        // "Swift version 6.3.1 (swift-6.3.1-RELEASE)" and the like.
        guard let line = firstLine("swift", ["--version"]), let range = line.range(of: "Swift version ") else {
            return "Swift (version unknown)"
        }
        let version = line[range.upperBound...].split(separator: " ").first.map(String.init) ?? "?"
        return "Swift \(version)"
    }
}

extension MeasuredTable {
    /// Why `--write` could not put the section into `text`: its markers missing or out of order.
    static func markersProblem(_ text: String) -> String? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let first = lines.firstIndex(where: { $0 == begin }) else { return "no line \(begin)" }
        guard lines[first...].contains(where: { $0 == end }) else { return "no line \(end) after \(begin)" }
        return nil
    }

    /// `text` with the lines from the begin marker to the end marker replaced by `section`.
    static func replacingSection(of text: String, with section: String) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let first = lines.firstIndex(of: begin), let last = lines[first...].firstIndex(of: end) else {
            return text
        }
        lines.replaceSubrange(
            first...last, with: section.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
        return lines.joined(separator: "\n")
    }
}
