import Foundation
import StationControl
import Testing

/// `lineupctl version` says what this build links and then what the running lineupd was built
/// with, asked over the control socket (the `version` request); without a daemon it still
/// prints its own libraries and says lineupd is not running.
@Suite("lineupctl version asks the running lineupd", .serialized, .ownThreads)
struct DaemonVersionTests {
    @Test func theRunningDaemonSaysWhatItWasBuiltWith() throws {
        guard let daemon = try ServingStationTests.Daemon(speed: 1) else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady(dogs: []))
        let answer = try daemon.client.send(VersionRequest())
        #expect(answer.protocolVersion == ControlProtocol.version)
        #expect(answer.libgpiod.contains(" API)"), "\(answer.libgpiod)")
        #expect(!answer.alsaLib.isEmpty)

        let shown = try lineupctl(["version", "--socket", daemon.socket])
        #expect(shown.status == 0)
        let lines = shown.stdout.split(separator: "\n").map(String.init)
        // The first line stays this build's libgpiod: the emulated tier's guest.sh reads it.
        #expect(lines.first == "libgpiod \(answer.libgpiod)", "\(shown.stdout)")
        #expect(
            lines.last
                == "lineupd on \(daemon.socket): libgpiod \(answer.libgpiod), alsa-lib \(answer.alsaLib), protocol 1",
            "\(shown.stdout)")
        #expect(daemon.terminate().status == 0)
    }

    @Test func withoutADaemonItSaysSoAndStillSucceeds() throws {
        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("none-\(UUID().uuidString).sock")
            .path
        let shown = try lineupctl(["version", "--socket", socket])
        #expect(shown.status == 0)
        let lines = shown.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(shown.stdout)")
        #expect(lines.first?.hasPrefix("libgpiod ") == true)
        #expect(lines.last == "lineupd is not running (no socket at \(socket))", "\(shown.stdout)")
    }
}
