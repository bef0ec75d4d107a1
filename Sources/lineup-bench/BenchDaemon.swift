import ArgumentParser
import Foundation
import Glibc
import LineupBench
import StationControl
import StationIO
import StationLogging

/// `lineup-bench daemon`: the daemon's own marks, on a real `lineupd` process with the
/// simulated lineup: how soon it tells systemd READY=1, how much CPU it takes idle, and its
/// resident memory through a long simulated block driven over the control socket.
struct BenchDaemon: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract: "Time lineupd's start, idle CPU and memory through a block (one JSON object).",
        discussion: """
            Starts `lineupd --simulate --serve` (found beside this lineup-bench) with a private \
            NOTIFY_SOCKET, measures from the spawn to READY=1, samples its CPU time over an idle \
            period, then runs a block of trials over the control socket at `--speed` times real \
            time and reads its peak resident memory (VmHWM).

            Example:
              lineup-bench daemon --trials 1000
            """)

    @Option(help: "Trials in the block.") var trials = 1000
    @Option(help: "Seconds of idling to measure CPU over.") var idleSeconds = 10.0
    @Option(help: "How much faster than life the simulated block runs.") var speed = 30.0

    func run() throws {
        let lineupd = besideThisExecutable("lineupd").path
        guard FileManager.default.isExecutableFile(atPath: lineupd) else {
            printError("daemon: no lineupd beside lineup-bench (\(lineupd)): build both")
            throw ExitCode(1)
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bench-daemon-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let notifyPath = dir + "/notify.sock"
        let socketPath = dir + "/control.sock"

        // The NOTIFY_SOCKET systemd would give: a datagram socket we read READY=1 from.
        let notify = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in notifyPath.utf8.prefix(raw.count - 1).enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(notify, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard notify >= 0, bound == 0 else {
            printError("bench daemon: cannot bind \(notifyPath)")
            throw ExitCode(1)
        }
        defer { close(notify) }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: lineupd)
        process.arguments = [
            "--simulate", "--serve", "--socket", socketPath, "--db", dir + "/lineup.db", "--speed", String(speed),
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = notifyPath
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let spawned = MonotonicClock.now()
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

        var readyAt: UInt64 = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        var pfd = pollfd(fd: notify, events: Int16(POLLIN), revents: 0)
        while readyAt == 0, MonotonicClock.now() - spawned < 10_000_000_000 {
            guard poll(&pfd, 1, 100) > 0 else { continue }
            let n = recv(notify, &buffer, buffer.count, 0)
            if n > 0, String(decoding: buffer[0..<n], as: UTF8.self).contains("READY=1") {
                readyAt = MonotonicClock.now()
            }
        }
        guard readyAt != 0 else {
            printError("bench daemon: lineupd sent no READY=1 within 10 s")
            throw ExitCode(1)
        }
        let pid = process.processIdentifier
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let cpu0 = cpuSeconds(pid: pid, ticks: ticks)
        let idleStart = MonotonicClock.now()
        usleep(UInt32(idleSeconds * 1_000_000))
        let idleCPU = (cpuSeconds(pid: pid, ticks: ticks) - cpu0) / (Double(MonotonicClock.now() - idleStart) / 1e9)

        let client = ControlClient(path: socketPath, timeout: 10)
        let blockStart = MonotonicClock.now()
        do {
            _ = try client.startSession(
                SessionRequest(
                    dog: "bench", program: "research-5-station", step: "phase-3/1", mode: .doubleBlind,
                    trials: trials, seed: 1, newDog: true, unlabelled: true))
            var done = 0
            while done < trials {
                // The assistant presses whenever the station waits for it, again after a start
                // refused (the virtual dog's nose still at a station).
                let status = try client.status()
                done = status.trialsDone ?? done
                if status.state == .waitingForReady || status.state == .blocked { _ = try? client.ready() }
                usleep(2000)
            }
            try client.endSession(suggestions: nil)
        } catch {
            printError("bench daemon: \(error)")
            throw ExitCode(1)
        }
        let blockSeconds = Double(MonotonicClock.now() - blockStart) / 1e9
        let peak = peakResidentMegabytes(pid: pid)
        kill(pid, SIGTERM)
        process.waitUntilExit()

        var json = JSONObject()
        json["ready_ms"] = Double((readyAt - spawned) / 10_000) / 100
        json["idle_cpu_percent"] = (idleCPU * 10_000).rounded() / 100
        json["idle_seconds"] = idleSeconds
        json["trials"] = trials
        json["block_seconds"] = (blockSeconds * 10).rounded() / 10
        json["rss_peak_mb"] = (peak * 10).rounded() / 10
        json["exit_status"] = Int(process.terminationStatus)
        print(json.render())
    }

    private func cpuSeconds(pid: Int32, ticks: Double) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the command name: state is field 3, utime 14, stime 15 (1-based in proc(5)).
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / ticks
    }
}
