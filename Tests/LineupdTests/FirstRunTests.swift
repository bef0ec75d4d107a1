import Foundation
import Testing

/// A first run on a machine without the sound card asked for: ALSA's own library messages
/// (eight lines for one missing card) are kept out of stderr; the station says what is wrong
/// in one line of its own, naming ALSA's reason, and clicks into the null device.
@Suite(.ownThreads) struct FirstRunTests {
    @Test func aMissingSoundCardIsOneLine() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("first-run-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let run = try lineupd(
            [
                "--simulate", "--trials", "1", "--speed", "10", "--seed", "1", "--device", "hw:CARD=NoSuchCard",
                "--no-realtime", "--db", "\(dir)/x.db",
            ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(!run.stderr.contains("ALSA lib"), "\(run.stderr)")
        let lines = run.stderr.split(separator: "\n")
        let sound = lines.filter { $0.contains("no sound") }
        #expect(sound.count == 1, "\(run.stderr)")
        #expect(sound.first?.contains("hw:CARD=NoSuchCard") == true)
        #expect(sound.first?.contains("(ALSA: ") == true, "ALSA's reason is named: \(run.stderr)")
        #expect(lines.count == 1, "nothing else on stderr: \(run.stderr)")
    }
}

/// `--speed` divides the hold and its tolerance but not the debounce window: a speed at
/// which they would be under 6 and 1 windows is refused in one line, with nothing written.
@Suite(.ownThreads) struct HonestSpeedTests {
    @Test func aSpeedTooFastForHonestFiguresIsRefused() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("speed-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for arguments in [["--simulate"], ["--simulate", "--serve", "--socket", "\(dir)/s.sock"]] {
            let run = try lineupd(arguments + ["--speed", "1000", "--db", "\(dir)/x.db", "--no-realtime"])
            #expect(run.status == 1)
            #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
            #expect(
                run.stderr.contains("--speed 1000 is too fast") && run.stderr.contains("fastest allowed here is 30"))
            #expect(!FileManager.default.fileExists(atPath: "\(dir)/x.db"))
        }
    }
}

/// The simulated block registers its samples (SIM-T1.., SIM-C1..) once and logs its rounds
/// against them, as a board's log is; a second run on the same log reuses them.
@Suite(.ownThreads) struct SimulatedSamplesTests {
    @Test func roundsAreLoggedAgainstRegisteredSamples() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sim-samples-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for seed in ["1", "2"] {
            let run = try lineupd(
                [
                    "--simulate", "--trials", "3", "--speed", "30", "--seed", seed, "--device", "null", "--no-realtime",
                    "--db", "\(dir)/x.db",
                ])
            #expect(run.status == 0, "\(run.stderr)")
        }
        // Both blocks are one virtual dog's sessions.
        let dogs = try lineupctl(["dogs", "--db", "\(dir)/x.db", "--json"])
        #expect((try JSONSerialization.jsonObject(with: Data(dogs.stdout.utf8)) as? [[String: Any]])?.count == 1)
        let listed = try lineupctl(["samples", "--db", "\(dir)/x.db", "--json"])
        let samples = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        let labels = samples.compactMap { $0["label"] as? String }.sorted()
        #expect(labels == ["SIM-C1", "SIM-C2", "SIM-C3", "SIM-C4", "SIM-C5", "SIM-C6", "SIM-T1", "SIM-T2"])
        // Every non-blank station of the six trials held one of them: 6 trials x 4 stations.
        let uses = samples.compactMap { $0["uses"] as? Int }.reduce(0, +)
        #expect(uses == 6 * 4)
        let trials = try lineupctl(["trials", "--db", "\(dir)/x.db", "--json", "--limit", "0"])
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(trials.stdout.utf8)) as? [[String: Any]])
        for row in rows {
            let layout = try #require(row["layout"] as? [[String: Any]])
            for slot in layout where slot["kind"] as? String != "blank" {
                #expect((slot["sample"] as? String)?.hasPrefix("SIM-") == true, "\(slot)")
            }
        }
    }
}
