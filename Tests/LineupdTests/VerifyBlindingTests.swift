import Foundation
import Testing

/// `lineupctl verify-blinding` on the real station's log: a simulated double-blind block run by
/// lineupd in real time, whose commitments a researcher recomputes with `sha256sum` from the
/// trials' export and the salts `verify-blinding --json` gives, byte for byte as
/// docs/figures.md defines them; a copy of the log altered with sqlite3 fails with exit 1,
/// naming its trial.
@Suite(.serialized, .ownThreads) struct VerifyBlindingTests {
    @Test func commitmentsRecomputedWithSha256sumFromTheExport() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("blinding-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = "\(dir)/lineup.db"
        let run = try await lineupdAwaited(
            [
                "--simulate", "--trials", "4", "--seed", "3", "--speed", "30", "--device", "null", "--no-realtime",
                "--db", db,
            ])
        #expect(run.status == 0, "\(run.stderr)")

        let export = try await runBuiltAwaited(
            "lineupctl", ["export", "--what", "trials", "--format", "jsonl", "--db", db])
        #expect(export.status == 0, "\(export.stderr)")
        let trials = try export.stdout.split(separator: "\n").map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(trials.count == 4)
        let session = try #require(trials.first?["session_id"] as? String)

        let verified = try await runBuiltAwaited("lineupctl", ["verify-blinding", session, "--db", db])
        #expect(verified.status == 0 && verified.stderr.isEmpty, "\(verified.stderr)")
        #expect(verified.stdout.contains("all 4 trials match the layouts committed before they started"))
        let json = try await runBuiltAwaited("lineupctl", ["verify-blinding", session, "--db", db, "--json"])
        let object = try #require(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let checked = try #require(object["trials"] as? [[String: Any]])
        #expect(checked.count == 4)

        for trial in trials {
            let number = try #require(trial["number"] as? Int)
            let entry = try #require(checked.first { $0["number"] as? Int == number })
            let salt = try #require(entry["salt"] as? String)
            let digest = try #require(entry["digest"] as? String)
            // docs/figures.md, "Committed layouts": the bytes, from the export's columns.
            var text = "lineup layout commitment v1\nsession \(session)\ntrial \(number)\n"
            var station = 1
            while let kind = trial["station_\(station)_kind"] as? String {
                text += "station \(station) \(kind) \((trial["station_\(station)_sample"] as? String) ?? "")\n"
                station += 1
            }
            #expect(station > 1, "the export names the trial's stations")
            text += "salt \(salt)\n"
            #expect(try Self.sha256sum(text) == digest, "trial \(number)")
        }

        // Merged into a lab log, the session's commitments and salts come along: it verifies there too.
        let lab = "\(dir)/lab.db"
        let merged = try await runBuiltAwaited("lineupctl", ["merge", db, "--into", lab])
        #expect(merged.status == 0, "\(merged.stderr)")
        let inLab = try await runBuiltAwaited("lineupctl", ["verify-blinding", session, "--db", lab])
        #expect(inLab.status == 0, "\(inLab.stdout)\(inLab.stderr)")
        #expect(inLab.stdout.contains("all 4 trials match the layouts committed before they started"))

        // A copy where trial 3's station 1 holds the other kind, its triggers dropped to do it.
        let copy = "\(dir)/altered.db"
        #expect(try await runBuiltAwaited("lineupctl", ["backup", copy, "--db", db]).status == 0)
        let trial3 = try #require(trials.first { $0["number"] as? Int == 3 }?["trial_id"] as? String)
        let sql = """
            DROP TRIGGER trial_station_append_only_update;
            UPDATE trial_station SET kind = CASE kind WHEN 'target' THEN 'control' ELSE 'target' END
                WHERE trial_id = '\(trial3)' AND station = 1;
            """
        let altered = Process()
        altered.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        altered.arguments = [copy, sql]
        try altered.run()
        altered.waitUntilExit()
        #expect(altered.terminationStatus == 0)
        let caught = try await runBuiltAwaited(
            "lineupctl", ["verify-blinding", String(session.prefix(8)), "--db", copy])
        #expect(caught.status == 1)
        #expect(caught.stdout.contains("1 of 4 trials fail"), "\(caught.stdout)")
        #expect(caught.stdout.contains("trial 3: its layout column (trial.layout) disagrees with its stations"))
        #expect(caught.stdout.contains("trial 3: its layout does not match its commitment"), "\(caught.stdout)")
        #expect(!caught.stdout.contains("trial 1:") && !caught.stdout.contains("trial 2:"))
    }

    /// The digest `sha256sum` prints for `text`'s UTF-8 bytes.
    static func sha256sum(_ text: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return String(printed.prefix(64))
    }
}
