import Foundation
import Glibc
import Testing

/// No command crashes on a closed pipe (issue 32): `lineupctl stats --by dog --lab FILE | head -1`
/// trapped in Foundation's `FileHandle.write` (`Fatal error: 'try!' … Broken pipe`, a backtrace),
/// because swift-nio ignores SIGPIPE once the lab store is opened and the write then fails with
/// EPIPE. A parent that ignores SIGPIPE before starting lineupctl (`trap '' PIPE`) does the same
/// to every command, which is how these tests reach that path without a lab store. Each command
/// writes into a real pipe whose reader has already gone, with SIGPIPE left alone and ignored,
/// and must end as a Unix tool does: killed by SIGPIPE (141 in the shell), nothing on stderr.
@Suite(.ownThreads) struct ClosedPipeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `lineupctl arguments` with standard output a pipe nobody reads any more, under `sh`
    /// (`trap '' PIPE` first when `ignoring`). Its termination and stderr.
    func intoClosedPipe(_ arguments: [String], ignoring: Bool) throws -> (
        reason: Process.TerminationReason, status: Int32, stderr: String
    ) {
        let tool = Self.root.appendingPathComponent(".build/debug/lineupctl").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", (ignoring ? "trap '' PIPE; " : "") + "exec \"$0\" \"$@\"", tool] + arguments
        var environment = ProcessInfo.processInfo.environment
        for key in ["LINEUP_DB", "LINEUP_SOCKET", "NOTIFY_SOCKET", "WATCHDOG_USEC"] { environment[key] = nil }
        process.environment = environment
        let out = Pipe()
        try out.fileHandleForReading.close()  // the reader is gone before the first byte
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationReason, process.terminationStatus, String(decoding: errData, as: UTF8.self))
    }

    @Test func everyReadingCommandEndsQuietlyOnAClosedPipe() throws {
        let dir = NSTemporaryDirectory() + "closed-pipe-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = dir + "/lineup.db"
        let made = try lineupd(["--simulate", "--fast", "--trials", "20", "--seed", "3", "--db", db])
        try #require(made.status == 0, "\(made.stderr)")
        let commands: [[String]] = [
            ["stats", "--by", "dog"], ["stats", "--by", "station", "--json"], ["export", "--what", "trials"],
            ["export", "--what", "sessions", "--format", "jsonl"], ["report"], ["events", "--limit", "0"],
            ["sessions"], ["trials"], ["progress", "--dog", "virtual dog"],
            // It wrote through FileHandle, which trapped on EPIPE with SIGPIPE ignored (issue 32).
            ["verify-scoring"],
        ]
        for command in commands {
            for ignoring in [false, true] {
                let run = try intoClosedPipe(command + ["--db", db], ignoring: ignoring)
                let what = "\(command.joined(separator: " "))\(ignoring ? " (SIGPIPE ignored)" : ""): \(run.stderr)"
                #expect(run.reason == .uncaughtSignal && run.status == SIGPIPE, "\(what)")
                #expect(run.stderr.isEmpty, "\(what)")
            }
        }
    }

    /// Every shipped tool writes standard output through `StandardOutput.write` (SessionLog):
    /// no source of one writes it through Foundation's `FileHandle`, whose write traps on a
    /// closed pipe. lineup-bench, never installed, is left out.
    @Test func noShippedSourceWritesStandardOutputThroughFileHandle() throws {
        let sources = Self.root.appendingPathComponent("Sources")
        var found: [String] = []
        let files = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String } ?? []
        for file in files where file.hasSuffix(".swift") && !file.hasPrefix("lineup-bench/") {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains("FileHandle.standardOutput")
                && !line.trimmingCharacters(in: .whitespaces).hasPrefix("//")
            {
                found.append("Sources/\(file):\(n + 1)")
            }
        }
        #expect(found.isEmpty, "standard output written through FileHandle: \(found)")
    }
}
