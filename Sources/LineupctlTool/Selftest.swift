import ArgumentParser
import CALSA
import Figures
import Foundation
import Glibc
import StationConfig
import StationControl
import StationIO
import StationLogging
import TrainingEngine

/// `lineupctl selftest`: checks a real board against its configuration, and measures the rig.
struct Selftest: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check the board: its lines, a test click, and the rig's own edge-to-click latency.",
        discussion: """
            Finds every chip and line of the configuration, shows each input's live level, plays \
            a test click on the configured audio device, and, when the configuration has a \
            [selftest] jumper (a wire from a spare output to one station's input, see \
            hardware/README.md), pulses it and measures from each edge's kernel timestamp to \
            the click's samples accepted by ALSA. Stop lineupd first: it holds the lines.

            Examples:
              lineupctl selftest --config /etc/lineup/station.toml
              lineupctl selftest --config hardware/pi5-5-stations.toml --pulses 500 --json
            """)

    @Option(help: "The board's configuration file.") var config = "/etc/lineup/station.toml"
    @Option(help: "Jumper pulses to measure (0 to skip).") var pulses = 200
    @Flag(help: "Skip the test click.") var noClick = false
    @Flag(help: "Print the latency figures as one JSON object.") var json = false

    func validate() throws {
        guard pulses >= 0 else { throw ValidationError("--pulses cannot be negative") }
    }

    func run() throws {
        let board: StationConfiguration
        do {
            board = try StationConfigLoader.load(path: config)
        } catch {
            printError(error.description)
            throw ExitCode(1)
        }
        let inputs = InputMap(configuration: board)
        say("libgpiod \(GPIOLineup.libraryVersion); configuration \(config)")
        let outputs = board.selftest.map { [$0.output] } ?? []
        let lineup: GPIOLineup
        do {
            lineup = try GPIOLineup(inputs: inputs.lines, outputs: outputs, consumer: "lineupctl-selftest")
        } catch {
            printError("\(config): \(error.message)")
            throw ExitCode(1)
        }
        let names = board.stations.map(\.name)
        for (i, role) in inputs.roles.enumerated() {
            let level = lineup.level(of: UInt32(i)).map { $0 ? "ACTIVE" : "inactive" } ?? "unreadable"
            say(
                "  \(role.described(stationNames: names).padding(toLength: 14, withPad: " ", startingAt: 0)) \(lineup.describe(line: i))  \(level)"
            )
        }
        if let jumper = board.selftest {
            say("  jumper output  \(lineup.describe(line: inputs.count)) → station \(jumper.stationName)")
        }

        var player: ClickPlayer? = nil
        if !noClick {
            do {
                let p = try ClickPlayer(audio: board.audio, keepTrying: false)
                player = p
                say("audio: \(p.negotiated?.description ?? board.audio.device)")
                if case .played(let record) = p.click(edgeTimestamp: MonotonicClock.now()) {
                    // Let the test click finish sounding before anything else.
                    usleep(100_000)
                    say("test click played (ALSA took it \(record.handedLatency / 1000) µs after the request)")
                } else {
                    say("test click FAILED")
                }
            } catch {
                printError(error.message)
                throw ExitCode(1)
            }
        }

        guard let jumper = board.selftest, pulses > 0, let player else {
            if board.selftest == nil { say("no [selftest] jumper configured: latency not measured") }
            return
        }
        let target = UInt32(jumper.stationIndex)
        let rig = try ClickRig(
            source: lineup, lineCount: inputs.count,
            debounceNanoseconds: UInt64(board.timing.debounceMilliseconds * 1e6), target: target, player: player,
            skipClicks: 5)
        rig.start(realtime: true, lockMemory: true)
        let period: UInt64 = 40_000_000
        var next = MonotonicClock.now() + period
        for _ in 0..<(pulses + 5) {
            MonotonicClock.sleep(until: next)
            lineup.setOutput(0, active: true)
            MonotonicClock.sleep(until: next + period / 2)
            lineup.setOutput(0, active: false)
            next += period
        }
        MonotonicClock.sleep(until: MonotonicClock.now() + 100_000_000)
        let f = rig.finish()
        let us = { (ns: UInt64) in Double(ns / 100) / 10 }
        var out = JSONObject()
        out["n"] = f.handedLatencies.count
        out["p50_us"] = us(percentile(f.handedLatencies, 50))
        out["p99_us"] = us(percentile(f.handedLatencies, 99))
        out["max_us"] = us(f.handedLatencies.max() ?? 0)
        out["onset_p50_us"] = us(percentile(f.onsetLatencies, 50))
        out["onset_p99_us"] = us(percentile(f.onsetLatencies, 99))
        out["pulses"] = pulses
        out["edges_read"] = Int(f.edgesRead)
        out["kernel_dropped"] = lineup.countsDrops ? Int(lineup.droppedEdges) : "not counted by libgpiod v1"
        out["failed_clicks"] = Int(f.failedClicks)
        out["realtime"] = f.realtimeProblem.map { "no: \($0)" } ?? "SCHED_FIFO 80"
        out["audio"] = player.negotiated?.description ?? board.audio.device
        if json {
            print(out.render())
        } else {
            say(
                "jumper latency over \(f.handedLatencies.count) of \(pulses) pulses: edge → ALSA p50 \(us(percentile(f.handedLatencies, 50))) µs, p99 \(us(percentile(f.handedLatencies, 99))) µs, max \(us(f.handedLatencies.max() ?? 0)) µs; edge → stream start p50 \(us(percentile(f.onsetLatencies, 50))) µs"
            )
        }
        if f.handedLatencies.count < pulses {
            printError(
                "only \(f.handedLatencies.count) of \(pulses) pulses clicked: check the jumper wire and [selftest] in \(config)"
            )
            throw ExitCode(1)
        }
    }

    /// With --json stdout is the JSON alone: the progress lines go to stderr, through the logger.
    private func say(_ line: String) {
        if json {
            StationLogging.bootstrap(program: "lineupctl")
            lineupctlLog.info("\(line)")
        } else {
            print(line)
        }
    }
}

/// `lineupctl version`: what this build links, for bug reports and CI; then what the running
/// lineupd was built with, which may differ (the first line stays libgpiod's: CI reads it).
struct Version: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the libraries this build uses, and those of the running lineupd.")

    @OptionGroup var socket: SocketOptions

    func run() {
        print("libgpiod \(GPIOLineup.libraryVersion)")
        print("alsa-lib \(String(cString: snd_asoundlib_version()))")
        let client = socket.client
        do {
            let daemon = try client.send(VersionRequest())
            print(
                "lineupd on \(client.path): libgpiod \(daemon.libgpiod), alsa-lib \(daemon.alsaLib), protocol \(daemon.protocolVersion)"
            )
        } catch .refused(let refusal) where refusal.code == .unknownRequest {
            print("lineupd on \(client.path): an older lineupd, which does not say what it was built with")
        } catch .refused(let refusal) {
            print("lineupd on \(client.path): \(refusal.message)")
        } catch {
            // Not an error of this command: without a daemon it still says what this build uses.
            print(error.description)
        }
    }
}
