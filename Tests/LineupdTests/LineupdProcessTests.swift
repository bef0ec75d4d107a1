import Foundation
import Glibc
import ReadingRows
import SessionLog
import Testing

/// The built `lineupd`, beside the test bundle (`swift build` builds it before `swift test`
/// runs), or under `.build/debug` of this package.
private func lineupdPath() -> String? {
    var candidates: [URL] = []
    if let executable = Bundle.main.executableURL {
        candidates.append(executable.deletingLastPathComponent().appendingPathComponent("lineupd"))
    }
    candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("lineupd"))
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    candidates.append(root.appendingPathComponent(".build/debug/lineupd"))
    return candidates.map(\.path).first { FileManager.default.isExecutableFile(atPath: $0) }
}

private struct ProcessResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs `lineupd` to completion in `directory`; nil (and a recorded issue) when it is not built.
private func runLineupd(
    _ arguments: [String], in directory: String, environment extra: [String: String] = [:],
    signalAfter: (seconds: Double, signal: Int32)? = nil
) throws -> ProcessResult? {
    guard let path = lineupdPath() else {
        Issue.record("lineupd is not built: run `swift build` (or `swift build --product lineupd`) before `swift test`")
        return nil
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: directory)
    var environment = ProcessInfo.processInfo.environment
    environment["NOTIFY_SOCKET"] = nil
    environment["WATCHDOG_USEC"] = nil
    for (key, value) in extra { environment[key] = value }
    process.environment = environment
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    // stderr is read on another thread so neither pipe can fill and block the child.
    let errData = Mutex_(Data())
    let errThread = Thread { errData.set(err.fileHandleForReading.readDataToEndOfFile()) }
    errThread.start()
    if let signalAfter {
        let pid = process.processIdentifier
        let killer = Thread {
            usleep(UInt32(signalAfter.seconds * 1_000_000))
            kill(pid, signalAfter.signal)
        }
        killer.start()
    }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    while !errThread.isFinished { usleep(1000) }
    return ProcessResult(
        status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errData.get(), as: UTF8.self))
}

/// A small lock box (Synchronization's Mutex is not Sendable-capturable across a Thread closure here).
private final class Mutex_<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func set(_ new: Value) { lock.withLock { value = new } }
    func get() -> Value { lock.withLock { value } }
}

private func temporaryDirectory() -> String {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("lineupd-tests-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url.path
}

@Suite("lineupd as a process", .ownThreads)
struct LineupdProcessTests {
    @Test("--simulate runs a 5-trial block, prints one line per trial and a summary, and logs it all")
    func simulatedBlock() throws {
        let directory = temporaryDirectory()
        let db = directory + "/sim.db"
        guard
            let result = try runLineupd(
                ["--simulate", "--trials", "5", "--seed", "7", "--db", db], in: directory)
        else { return }
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let trialLines = lines.filter { $0.hasPrefix("trial ") }
        #expect(trialLines.count == 5, "stdout: \(result.stdout)")
        for line in trialLines {
            #expect(line.contains("A:") && line.contains("E:"), "layout missing: \(line)")
            let outcomes = ["hit", "miss", "false-alert", "correct-rejection"]
            #expect(outcomes.contains { line.hasSuffix($0) }, "no outcome: \(line)")
        }
        #expect(lines.contains { $0.hasPrefix("summary:") }, "stdout: \(result.stdout)")
        #expect(lines.contains { $0.contains("sensitivity") && $0.contains("95 % CI") })
        #expect(lines.contains { $0.contains("specificity") })
        #expect(lines.contains { $0.contains("click latency") })
        #expect(result.stdout.contains("lineupctl trials --db \(db)"))

        let reader = try SessionLog.openReader(path: db)
        let sessions = try reader.sessions()
        #expect(sessions.count == 1)
        let trials = try reader.trials()
        #expect(trials.count == 5)
        let edges = try reader.eventCount(LogFilter(eventKind: .edge))
        #expect(edges > 10, "raw edge events: \(edges)")
        let clicks = try reader.eventCount(LogFilter(eventKind: .click))
        let hitLines = trialLines.filter { $0.contains("click ") && $0.contains(" µs") }.count
        #expect(clicks == hitLines, "click events \(clicks), trial lines with a click \(hitLines)")
    }

    @Test("a bad --config file: one line on stderr naming the file, exit 1")
    func badConfiguration() throws {
        let directory = temporaryDirectory()
        let path = directory + "/station.toml"
        try Data("[board\nname = 3\n".utf8).write(to: URL(fileURLWithPath: path))
        guard let result = try runLineupd(["--config", path], in: directory) else { return }
        #expect(result.status == 1)
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: true)
        #expect(lines.count == 1, "stderr: \(result.stderr)")
        #expect(result.stderr.hasPrefix("lineupd: "), "stderr: \(result.stderr)")
        #expect(result.stderr.contains(path), "stderr: \(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test("a missing --config file: one line naming it, exit 1")
    func missingConfiguration() throws {
        let directory = temporaryDirectory()
        let path = directory + "/absent.toml"
        guard let result = try runLineupd(["--config", path], in: directory) else { return }
        #expect(result.status == 1)
        #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains(path), "\(result.stderr)")
    }
}

@Suite("lineupd and systemd, stopping", .ownThreads)
struct LineupdLifecycleTests {
    @Test("SIGTERM during --simulate: the trial in progress is recorded as aborted, the log flushed, exit 0")
    func stopsCleanlyOnSIGTERM() throws {
        let directory = temporaryDirectory()
        let db = directory + "/stop.db"
        guard
            let result = try runLineupd(
                ["--simulate", "--trials", "20", "--seed", "7", "--db", db], in: directory,
                signalAfter: (2.5, SIGTERM))
        else { return }
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("stopped by SIGTERM"), "stdout: \(result.stdout)")
        let trialLines = result.stdout.split(separator: "\n").filter { $0.hasPrefix("trial ") }
        #expect(trialLines.count < 20, "stdout: \(result.stdout)")
        let reader = try SessionLog.openReader(path: db)
        // Every trial printed is in the log, the aborted one included: nothing was lost.
        #expect(try reader.trials().count == trialLines.count)
    }

    @Test("under systemd: READY=1 and watchdog pings reach $NOTIFY_SOCKET")
    func notifiesSystemd() throws {
        let directory = temporaryDirectory()
        let socketPath = directory + "/notify.sock"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(socketPath.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(bound == 0, "bind: \(errno)")
        guard
            let result = try runLineupd(
                ["--simulate", "--trials", "1", "--seed", "7", "--db", directory + "/n.db"], in: directory,
                environment: ["NOTIFY_SOCKET": socketPath, "WATCHDOG_USEC": "200000"])
        else { return }
        #expect(result.status == 0, "stderr: \(result.stderr)")
        var messages: [String] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            guard n > 0 else { break }
            messages.append(String(decoding: buffer[0..<n], as: UTF8.self))
        }
        #expect(messages.contains { $0.contains("READY=1") && $0.contains("STATUS=") }, "\(messages)")
        #expect(messages.contains { $0 == "WATCHDOG=1" }, "\(messages)")
    }
}
