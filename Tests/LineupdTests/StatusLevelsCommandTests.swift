import Foundation
import StationControl
import Testing

/// `lineupctl status` prints each input's level, in words and with --json, from a running
/// simulated lineupd: a nose put at C reads active there and nowhere else.
@Suite(.serialized, .ownThreads) struct StatusLevelsCommandTests {
    @Test func statusPrintsTheLevels() throws {
        guard let daemon = try ServingStationTests.Daemon(speed: 30) else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady(dogs: []))
        let env = ["LINEUP_SOCKET": daemon.socket]
        try daemon.client.simulate(SimulatedInput(input: "C", active: true))
        #expect(eventually(10) { (try? daemon.client.status().inputLevels?.first { $0.input == "C" }?.active) == true })

        let words = try lineupctl(["status"], environment: env)
        #expect(words.status == 0, "\(words.stderr)")
        let line = try #require(words.stdout.split(separator: "\n").first { $0.hasPrefix("Levels      ") })
        #expect(line.contains("A clear for "), "\(line)")
        #expect(line.contains("C active for "), "\(line)")
        #expect(line.contains("ready clear for "), "\(line)")
        #expect(!line.contains("B active"), "\(line)")

        let json = try lineupctl(["status", "--json"], environment: env)
        #expect(json.status == 0, "\(json.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let levels = try #require(object["input_levels"] as? [[String: Any]], "\(json.stdout)")
        #expect(levels.map { $0["input"] as? String } == ["A", "B", "C", "D", "E", "clicker", "error", "ready"])
        #expect(levels.filter { $0["active"] as? Bool == true }.map { $0["input"] as? String } == ["C"])
        #expect(levels.allSatisfy { $0["changed_at"] is String && $0["seconds_since_change"] is Double })
        #expect(daemon.terminate().status == 0)
    }
}
