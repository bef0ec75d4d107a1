import Foundation
import Glibc
import StationControl
import Testing
import TrainingEngine

/// A failing sound device on the served simulated station (`--fault sound-stalled@1-2`): the
/// built lineupd's `status` and `lineupctl status` say so while it holds, and lineup-alerts
/// tells it once and its end once. Every trial has its target at station A and the dog never
/// misses it, so trials 1 and 2 each try a click into the stalled stream and trial 3's plays.
@Suite(.serialized, .ownThreads) struct SoundFaultEndToEndTests {
    static let layouts: [[SampleKind]] = Array(repeating: [.target, .control, .control, .control, .control], count: 4)

    /// A served station whose sound stalls in trials 1 and 2, a session of four trials started.
    func station() throws -> ServingStationTests.Daemon? {
        guard
            let daemon = try ServingStationTests.Daemon(
                speed: 20,
                extra: [
                    "--device", "null", "--fault", "sound-stalled@1-2", "--sensitivity", "1", "--false-alert-rate", "0",
                ])
        else { return nil }
        #expect(daemon.waitReady(dogs: ["Rex"]))
        _ = try daemon.client.startSession(
            SessionRequest(
                dog: "Rex", program: "research-5-station", step: "phase-3/1", seed: 3,
                layouts: Self.layouts, unlabelled: true))
        return daemon
    }

    /// Presses ready while the next trial waits for it, until `trials` are done: never once
    /// they are, so no trial beyond them starts.
    func run(_ daemon: ServingStationTests.Daemon, until trials: Int) -> Bool {
        eventually(40) {
            guard let status = try? daemon.client.status() else { return false }
            if (status.trialsDone ?? 0) >= trials { return true }
            if status.state == .waitingForReady { try? daemon.client.ready() }
            return false
        }
    }

    @Test func statusSaysTheSoundFailsWhileItDoesAndThatItPlaysAgainAfter() throws {
        guard let daemon = try station() else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(run(daemon, until: 1), "trial 1 never ended: \(daemon.stderrSoFar)")
        // The click's stream is checked some milliseconds after the click.
        #expect(eventually(5) { (try? daemon.client.status().soundFault) == "sound-stalled" }, "\(daemon.stderrSoFar)")
        let failing = try lineupctl(["status", "--socket", daemon.socket])
        #expect(failing.status == 0, "\(failing.stderr)")
        let line = failing.stdout.split(separator: "\n").first { $0.hasPrefix("Sound") }.map(String.init)
        #expect(
            line
                == "Sound       FAILING: the sound device took the click but did not play it (its stream did not advance); "
                + "the clicks do not sound (faults since start: 1)", "\(failing.stdout)")
        let json = try lineupctl(["status", "--socket", daemon.socket, "--json"])
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(fields["sound_fault"] as? String == "sound-stalled", "\(json.stdout)")
        #expect(fields["sound_fault_why"] as? String == SoundFaultEndToEndTests.stalledWords)
        // docs/faults.md names the fields as lineupctl prints them (it said `soundFault`, issue 32).
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let doc = try String(contentsOf: root.appendingPathComponent("docs/faults.md"), encoding: .utf8)
        let paragraph = try #require(
            doc.components(separatedBy: "\n\n").first { $0.hasPrefix("`lineupctl status --json` carries") })
        let named = paragraph.components(separatedBy: "`").enumerated().filter { $0.offset % 2 == 1 }.map {
            String($0.element)
        }
        .filter { $0.range(of: #"^[A-Za-z_]+$"#, options: .regularExpression) != nil }
        #expect(named == ["sound_fault", "sound_fault_why", "sound_faults"], "\(paragraph)")
        for field in named { #expect(fields[field] != nil, "docs/faults.md names `\(field)`: \(json.stdout)") }
        // Trial 2 stalls too (its stream reopened, and as broken): the same run. Trial 3 plays.
        #expect(run(daemon, until: 3), "\(daemon.stderrSoFar)")
        #expect(eventually(5) { (try? daemon.client.status().soundFault) == nil })
        let after = try lineupctl(["status", "--socket", daemon.socket])
        #expect(
            after.stdout.split(separator: "\n").contains("Sound       plays; faults since start: 1"), "\(after.stdout)")
        let status = try daemon.client.status()
        #expect(status.failedClicks == 2, "\(status)")
        try daemon.client.endSession(suggestions: nil)
        #expect(daemon.terminate().status == 0)
    }

    static let stalledWords = "the sound device took the click but did not play it (its stream did not advance)"

    @Test(
        .enabled(
            if: AlertsEndToEndTests.hasAiosmtpd, "aiosmtpd is absent: pip install --break-system-packages aiosmtpd"))
    func aStalledSoundIsAlertedOnceAndResolvedOnce() throws {
        let helpers = AlertsEndToEndTests()
        guard let r = try helpers.receivers() else { return }
        defer { r.process.terminate() }
        guard let daemon = try station() else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        let config = """
            name = "Test station"
            check_every = "1s"
            repeat_every = "1h"
            [station]
            socket = "\(daemon.socket)"
            session_stalled_after = "off"
            sync_behind_after = "off"
            [[webhook]]
            url = "http://127.0.0.1:\(r.http)/hook"
            format = "json"
            """
        try config.write(toFile: r.dir + "/alerts.toml", atomically: true, encoding: .utf8)
        chmod(r.dir + "/alerts.toml", 0o600)
        let sender = try helpers.start(
            AlertsEndToEndTests.root.appendingPathComponent(".build/debug/lineup-alerts").path,
            ["--config", r.dir + "/alerts.toml"], output: r.dir + "/alerts.log")
        defer { if sender.isRunning { sender.terminate() } }
        func log() -> String { (try? String(contentsOfFile: r.dir + "/alerts.log", encoding: .utf8)) ?? "" }
        func arrives(_ notice: String) -> Bool {
            eventually(20) { AlertsEndToEndTests.Received(directory: r.dir).notices.contains(notice) }
        }
        // The sender has seen the healthy station before the first click.
        usleep(2_000_000)
        #expect(run(daemon, until: 1), "\(daemon.stderrSoFar)")
        #expect(arrives("alert sound"), "\(log())")
        let alert = try #require(
            AlertsEndToEndTests.Received(directory: r.dir).hooks.first { $0["key"] as? String == "sound" })
        #expect((alert["message"] as? String)?.contains(Self.stalledWords) == true, "\(alert)")
        // Trial 2 fails as well: the same fault, no second alert.
        #expect(run(daemon, until: 2), "\(daemon.stderrSoFar)")
        usleep(2_000_000)
        #expect(!AlertsEndToEndTests.Received(directory: r.dir).notices.contains("resolved sound"))
        #expect(run(daemon, until: 3), "\(daemon.stderrSoFar)")
        #expect(arrives("resolved sound"), "\(log())")
        try daemon.client.endSession(suggestions: nil)
        usleep(2_000_000)
        sender.terminate()
        sender.waitUntilExit()
        let notices = AlertsEndToEndTests.Received(directory: r.dir).notices
        #expect(notices == ["alert sound", "resolved sound"], "\(notices)\n\(log())")
    }
}
