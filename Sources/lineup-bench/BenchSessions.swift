import ArgumentParser
import Foundation
import Glibc
import StationControl
import StationIO
import StationLogging
import TrainingEngine

/// `lineup-bench sessions`: does a station that runs a session every few minutes for months
/// grow? Runs session start, ready and end over the control socket of a real
/// `lineupd --simulate --serve` many times and reads its anonymous resident memory as it goes.
struct BenchSessions: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sessions",
        abstract: "Run many session start/ready/end cycles on lineupd; print its memory (one JSON object).",
        discussion: """
            Starts `lineupd --simulate --serve` (found beside this lineup-bench) on a log of its \
            own, then runs `--cycles` trainer-led sessions of the built-in study program: each \
            a session start, a ready and a session end over the control socket. Prints lineupd's \
            anonymous resident memory (RssAnon) after every 100 cycles and the growth from the \
            100th cycle to the last, the figure that says whether it leaks: the first 100 \
            cycles warm its caches and allocator.

            Example:
              lineup-bench sessions --cycles 200
            """)

    @Option(help: "Session start/ready/end cycles to run (at least 200).") var cycles = 1000

    func validate() throws {
        guard cycles >= 200, cycles <= 1_000_000 else {
            throw ValidationError("--cycles must be 200 to 1000000 (the growth is measured from the 100th)")
        }
    }

    func run() throws {
        let lineupd = besideThisExecutable("lineupd").path
        guard FileManager.default.isExecutableFile(atPath: lineupd) else {
            printError("sessions: no lineupd beside lineup-bench (\(lineupd)): build both")
            throw ExitCode(1)
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bench-sessions-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let socketPath = dir + "/control.sock"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: lineupd)
        process.arguments = ["--simulate", "--serve", "--socket", socketPath, "--db", dir + "/lineup.db"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let pid = process.processIdentifier

        let client = ControlClient(path: socketPath, timeout: 10)
        let deadline = MonotonicClock.now() + 20_000_000_000
        while (try? client.status()) == nil {
            guard MonotonicClock.now() < deadline, process.isRunning else {
                printError("bench sessions: lineupd did not answer on \(socketPath) within 20 s")
                throw ExitCode(1)
            }
            usleep(20_000)
        }
        var samples: [(cycle: Int, kilobytes: Int)] = []
        let started = MonotonicClock.now()
        do {
            for cycle in 1...cycles {
                _ = try client.sessionStart(
                    SessionRequest(
                        dog: "bench", program: "study", step: "indicate/1", mode: .trainerLed,
                        newDog: cycle == 1 ? true : nil))
                _ = try client.ready()
                try client.endSession(suggestions: nil)
                if cycle % 100 == 0 || cycle == cycles {
                    guard let kilobytes = Self.anonymousKilobytes(pid: pid) else {
                        printError("bench sessions: cannot read /proc/\(pid)/status")
                        throw ExitCode(1)
                    }
                    samples.append((cycle, kilobytes))
                }
            }
        } catch let error as ControlClientError {
            printError("bench sessions: \(error)")
            throw ExitCode(1)
        }
        let seconds = Double(MonotonicClock.now() - started) / 1e9
        kill(pid, SIGTERM)
        process.waitUntilExit()

        let atHundred = samples.first { $0.cycle == 100 }?.kilobytes ?? 0
        let atEnd = samples.last?.kilobytes ?? 0
        var json = JSONObject()
        json["cycles"] = cycles
        json["seconds"] = (seconds * 10).rounded() / 10
        var byCycle = JSONObject()
        for sample in samples { byCycle[String(sample.cycle)] = sample.kilobytes }
        json["rss_anon_kb"] = byCycle
        json["rss_anon_kb_at_100"] = atHundred
        json["rss_anon_kb_at_end"] = atEnd
        json["growth_kb_from_100"] = atEnd - atHundred
        json["growth_bytes_per_session"] = (atEnd - atHundred) * 1024 / max(1, cycles - 100)
        json["exit_status"] = Int(process.terminationStatus)
        print(json.render())
    }

    /// RssAnon of /proc/PID/status in kB: the heap and stacks, not the mapped code.
    static func anonymousKilobytes(pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("RssAnon:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        return nil
    }
}
