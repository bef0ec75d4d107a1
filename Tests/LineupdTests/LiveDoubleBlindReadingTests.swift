import Foundation
import StationControl
import Testing

/// Issues 24 and 32, "double-blind from the log": while a double-blind session runs, no
/// `lineupctl` reading command shows its seed, its trials' layouts or outcomes, or its events,
/// and every one says it is withheld (naming the session and when it is readable) instead of
/// passing over it: a listing in one line beside its rows, a reading of that session refused in
/// one line with a non-zero exit (a verification that cannot verify yet does not pass). Once it
/// has ended, they all show it. Checked on every byte each command printed, against the ids and
/// the seed read from the log file itself. The commands come from `lineupctl --help`: each is a
/// reading below or named as no reading of the log.
@Suite(.ownThreads) struct LiveDoubleBlindReadingTests {
    static let samples = ["T-7", "C-1", "C-2", "C-3", "C-4", "C-5"]

    /// Readings that list other sessions' rows too: they answer, and say what they leave out.
    static let listings: [[String]] =
        [
            ["sessions"], ["sessions", "--json"], ["trials"], ["trials", "--json"], ["events"], ["events", "--json"],
            ["stats", "--by", "station"], ["stats", "--by", "session"], ["stats", "--by", "dog"],
            ["stats", "--by", "sample"], ["stats", "--json"], ["stats", "--guesses"], ["stats", "--sources"],
            ["stats", "--familiar-novel"], ["stats", "--threshold"], ["stats", "--threshold", "--json"],
            ["stats", "--threshold", "--threshold-by", "conditions"], ["progress", "--dog", "Rex"],
            ["progress", "--dog", "Rex", "--json"],
            ["report"], ["dogs"], ["dogs", "--json"], ["samples"], ["samples", "show", "T-7"],
            ["samples", "show", "T-7", "--json"],
            // Every session rescored: it passed over the running one without a word (issue 32).
            ["verify-scoring"], ["verify-scoring", "--json"],
        ]
        + ["trials", "events", "sessions", "samples", "milestones", "dogs", "guesses"].map { ["export", "--what", $0] }

    /// Readings of the running session itself: refused, exit 1.
    static func ofTheSession(_ session: String) -> [[String]] {
        [
            ["session", "show", session], ["session", "show", session, "--json"], ["trials", "--session", session],
            ["events", "--session", session], ["stats", "--session", session],
            ["stats", "--threshold", "--session", session], ["report", "--session", session],
            ["export", "--what", "trials", "--session", session], ["verify-blinding", session],
            ["verify-scoring", session],
        ]
    }

    /// `session` subcommands that act on the station's session rather than read the log, each
    /// refused while one runs.
    static let controllingTheSession: [[String]] = [["session", "resume"]]

    /// `lineupctl`'s commands that read nothing of the log's sessions (they control the station,
    /// add to the log through lineupd, copy it whole, or read programs, accounts, the board or the
    /// lab store).
    static let noReading: Set = [
        "selftest", "version", "backup", "merge", "pull", "programs", "program", "status", "layout",
        "ready", "guess", "watch", "simulate", "web", "lab", "trial", "help",
    ]

    func sqlite(_ db: String, _ query: String) throws -> [String] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        p.arguments = ["-readonly", db, query]
        let result = try runToEnd(p)
        try #require(result.status == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test func theCommandListCoversLineupctl() async throws {
        let help = try await runBuiltAwaited("lineupctl", ["--help"])
        // The block under SUBCOMMANDS, to its blank line; a description's wrapped lines are indented deeper.
        let block = help.stdout.components(separatedBy: "SUBCOMMANDS:\n").last?.components(separatedBy: "\n\n").first
        let commands = (block ?? "").split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  "), !line.hasPrefix("   "), let word = line.split(separator: " ").first else {
                return nil
            }
            return String(word)
        }
        #expect(commands.count > 20, "\(help.stdout)")
        let read = Set((Self.listings + Self.ofTheSession("x")).map { $0[0] })
        for command in commands {
            #expect(
                read.contains(command) || Self.noReading.contains(command),
                "lineupctl \(command): add it to the readings or to noReading")
        }
    }

    @Test func aRunningDoubleBlindSessionIsSaidToBeWithheldByEveryReading() async throws {
        guard let daemon = try ServingStationTests.Daemon(speed: 30) else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady())
        let client = daemon.client
        // The target is a dilution (issue 38): none of its dilutions may show mid-session.
        _ = try client.addSample(SampleEntry(label: "T-0", kind: .target))
        for label in Self.samples where label != "T-7" {
            _ = try client.addSample(SampleEntry(label: label, kind: .control))
        }
        let environment = ["LINEUP_DB": daemon.db, "LINEUP_SOCKET": daemon.socket]
        let dilution = try await runBuiltAwaited(
            "lineupctl", ["samples", "add", "T-7", "--stock", "T-0", "--factor", "1000"], environment: environment)
        #expect(dilution.status == 0, "\(dilution.stderr)")
        // A seed no other number in the output is likely to be, fixed at the station (lineupctl).
        let seed: UInt64 = 8_675_309_123
        let start = try await runBuiltAwaited(
            "lineupctl",
            [
                "session", "start", "--dog", "Rex", "--program", "research-5-station", "--step", "phase-3/1",
                "--trials",
                "10", "--seed", "\(seed)",
            ] + Self.samples.flatMap { ["--sample", $0] },
            environment: environment)
        #expect(start.status == 0, "\(start.stderr)")
        let session = try #require(try client.status().session)
        let short = String(session.prefix(8))
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

        func secrets(in output: String) -> [String] {
            (["\(seed)"] + trialIds + eventIds).filter { output.contains($0) }
        }
        func check(_ command: [String], _ result: (status: Int32, stdout: String, stderr: String)) {
            let said = result.stdout + result.stderr
            let name = "`lineupctl \(command.joined(separator: " "))`"
            let found = secrets(in: said)
            #expect(found.isEmpty, "\(name) showed \(found.prefix(3)) mid-session")
            // Layouts print as STATION:KIND or STATION:SAMPLE (`1:T-7 2:C-1 ...`, or by letter).
            let layout = said.range(
                of: #"[0-9A-Z]:(target|control|blank|distractor|T-7|C-[0-9])"#, options: .regularExpression)
            #expect(layout == nil, "\(name) showed a layout mid-session")
            if command.starts(with: ["stats", "--threshold"]) {
                #expect(!said.contains("T-7") && !said.contains("0.001"), "\(name) showed a dilution mid-session")
            }
            #expect(said.contains("double-blind session is running (session \(short)"), "\(name): \(said.suffix(400))")
            #expect(said.contains("withheld until it ends"), "\(name): \(said.suffix(400))")
        }
        for command in Self.listings {
            let result = try await runBuiltAwaited("lineupctl", command, environment: environment)
            #expect(result.status == 0, "\(command): \(result.stderr)")
            check(command, result)
        }
        for command in Self.ofTheSession(session) {
            let result = try await runBuiltAwaited("lineupctl", command, environment: environment)
            #expect(result.status == 1, "\(command) answered \(result.status): \(result.stdout.prefix(300))")
            #expect(result.stdout.isEmpty, "\(command): \(result.stdout.prefix(300))")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(command): \(result.stderr)")
            check(command, result)
        }
        // The commands that control the session (not in the lists above, which are lineupctl's
        // top-level ones): refused while it runs, naming nothing of it.
        for command in Self.controllingTheSession {
            let result = try await runBuiltAwaited("lineupctl", command, environment: environment)
            #expect(result.status == 1, "\(command) answered \(result.status): \(result.stdout.prefix(300))")
            let said = result.stdout + result.stderr
            #expect(secrets(in: said).isEmpty, "\(command): \(said)")
            #expect(said.contains("a session is running"), "\(command): \(said)")
        }
        let verify = try await runBuiltAwaited("lineupctl", ["verify-blinding", session], environment: environment)
        #expect(verify.stderr.contains("cannot be verified yet"), "\(verify.stderr)")

        // The handler's side at the station names no assistant's command or instruction.
        for command in [["layout"], ["status"]] {
            let result = try await runBuiltAwaited("lineupctl", command, environment: environment)
            let said = result.stdout + result.stderr + (command == ["status"] ? start.stdout + start.stderr : "")
            #expect(!said.contains("--assistant"), "`lineupctl \(command[0])`: \(said)")
            #expect(said.range(of: #"[Ll]oad trial [0-9]"#, options: .regularExpression) == nil, "\(said)")
        }

        try client.endSession(suggestions: nil)
        // Ended: the same readings show it (so the checks above could fail).
        let shown = try await runBuiltAwaited("lineupctl", ["session", "show", session], environment: environment)
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("\(seed)"), "\(shown.stdout)")
        #expect(!(shown.stdout + shown.stderr).contains("withheld"), "\(shown.stdout)")
        let listed = try await runBuiltAwaited("lineupctl", ["trials"], environment: environment)
        #expect(listed.stdout.contains(":T-7"), "\(listed.stdout.prefix(400))")
        #expect(!(listed.stdout + listed.stderr).contains("withheld"))
        let trials = try await runBuiltAwaited("lineupctl", ["export", "--what", "trials"], environment: environment)
        #expect(trialIds.allSatisfy { trials.stdout.contains($0) }, "\(trials.stdout.prefix(400))")
        let events = try await runBuiltAwaited("lineupctl", ["events", "--session", session], environment: environment)
        #expect(events.stdout.split(separator: "\n").count > 2, "\(events.stdout.prefix(400))")
        // The target's dilution shows once it has ended (the 1:1000 of T-0 as a fraction of it).
        if trials.stdout.contains(",T-7,T-0,1000.0,") {
            let threshold = try await runBuiltAwaited("lineupctl", ["stats", "--threshold"], environment: environment)
            #expect(threshold.stdout.contains("stock T-0") && threshold.stdout.contains("T-7"), "\(threshold.stdout)")
        } else {
            Issue.record("no trial of the ended session had its target's dilution: \(trials.stdout.prefix(600))")
        }
        let verified = try await runBuiltAwaited("lineupctl", ["verify-blinding", session], environment: environment)
        #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")
    }
}
