import Foundation
import StationControl
import Testing

/// Issue 24, "double-blind from the log": while a double-blind session runs, no `lineupctl`
/// reading command shows its seed, its trials' layouts or outcomes, or its events; once it
/// has ended, they all do. Checked on every byte each command printed, against the ids and
/// the seed read from the log file itself.
@Suite struct LiveDoubleBlindReadingTests {
    /// Every reading command a group member could run on the log.
    static func readings(session: String) -> [[String]] {
        [
            ["sessions"], ["session", "show", session], ["trials"], ["trials", "--session", session], ["events"],
            ["events", "--session", session], ["stats", "--by", "station"], ["stats", "--by", "session"],
            ["stats", "--by", "dog"], ["stats", "--by", "sample"], ["export", "--what", "trials"],
            ["export", "--what", "events"], ["export", "--what", "sessions"], ["export", "--what", "trials", "--json"],
            ["progress", "--dog", "Rex"], ["report"],
        ]
    }

    func sqlite(_ db: String, _ query: String) throws -> [String] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        p.arguments = ["-readonly", db, query]
        let result = try runToEnd(p)
        try #require(result.status == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test func aRunningDoubleBlindSessionIsInNoReadingUntilItEnds() async throws {
        guard let daemon = try ServingStationTests.Daemon(speed: 30) else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady())
        let client = daemon.client
        // A seed no other number in the output is likely to be.
        let seed: UInt64 = 8_675_309_123
        let session = try client.startSession(
            SessionRequest(
                dog: "Rex", program: "research-5-station", step: "phase-3/1", mode: .doubleBlind, trials: 10,
                seed: seed, unlabelled: true))
        for trial in 1...3 {
            _ = try await onOwnThread { try client.ready() }
            #expect(
                await eventuallyAwaited(15) { (try? client.status().trialsDone ?? 0) ?? 0 >= trial },
                "trial \(trial) never ended")
        }
        // What the file holds (the test reads it as any group member could with sqlite3).
        let trialIds = try sqlite(daemon.db, "SELECT id FROM trial WHERE session_id = '\(session)'")
        let eventIds = try sqlite(daemon.db, "SELECT id FROM event WHERE session_id = '\(session)' LIMIT 50")
        #expect(trialIds.count >= 3)
        #expect(!eventIds.isEmpty)
        let settings = try sqlite(daemon.db, "SELECT settings FROM session WHERE id = '\(session)'").joined()
        #expect(settings.contains("\(seed)"), "the file holds the seed: \(settings)")

        let environment = ["LINEUP_DB": daemon.db]
        func secrets(in output: String) -> [String] {
            (["\(seed)"] + trialIds + eventIds).filter { output.contains($0) }
        }
        for command in Self.readings(session: session) {
            let result = try await runBuiltAwaited("lineupctl", command, environment: environment)
            #expect(result.status == 0, "\(command): \(result.stderr)")
            let found = secrets(in: result.stdout + result.stderr)
            #expect(
                found.isEmpty, "`lineupctl \(command.joined(separator: " "))` showed \(found.prefix(3)) mid-session")
            // Layouts print as STATION:KIND (`A:target B:blank ...`).
            let layouts = [":target", ":control", ":blank", ":distractor"].filter { result.stdout.contains($0) }
            #expect(layouts.isEmpty, "`lineupctl \(command.joined(separator: " "))` showed a layout mid-session")
        }

        // `session show` says why its trials are missing, not only that there are none.
        let midShow = try await runBuiltAwaited("lineupctl", ["session", "show", session], environment: environment)
        #expect(midShow.stdout.contains("withheld while this double-blind session runs"), "\(midShow.stdout)")

        try client.endSession(suggestions: nil)
        // Ended: the same readings show it (so the check above could fail).
        let shown = try await runBuiltAwaited("lineupctl", ["session", "show", session], environment: environment)
        #expect(shown.stdout.contains("\(seed)"), "\(shown.stdout)")
        #expect(!shown.stdout.contains("withheld"), "\(shown.stdout)")
        let listed = try await runBuiltAwaited("lineupctl", ["trials"], environment: environment)
        #expect(listed.stdout.contains(":target") || listed.stdout.contains(":blank"), "\(listed.stdout.prefix(400))")
        let trials = try await runBuiltAwaited("lineupctl", ["export", "--what", "trials"], environment: environment)
        #expect(trialIds.allSatisfy { trials.stdout.contains($0) }, "\(trials.stdout.prefix(400))")
        let events = try await runBuiltAwaited("lineupctl", ["events", "--session", session], environment: environment)
        #expect(events.stdout.split(separator: "\n").count > 2, "\(events.stdout.prefix(400))")
    }
}
