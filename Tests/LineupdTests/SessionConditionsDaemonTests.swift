import Foundation
import SessionLog
import StationControl
import Testing
import TrainingEngine

/// Issue 38's conditions through the station: `session start --temperature --humidity
/// --conditions` records them with the session and `session show` gives them; a humidity over
/// 100 or a temperature no room has is refused in one line naming it, and no session starts.
@Suite(.serialized, .ownThreads) struct SessionConditionsDaemonTests {
    @Test func conditionsGoWithTheSessionAndBadOnesStartNothing() throws {
        guard let daemon = try ServingStationTests.Daemon(speed: 30) else { return }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        #expect(daemon.waitReady(dogs: []))
        let env = ["LINEUP_SOCKET": daemon.socket, "LINEUP_DB": daemon.db]
        let start = [
            "session", "start", "--dog", "Rex", "--new-dog", "--program", "research-5-station", "--step", "phase-3/1",
            "--unlabelled",
        ]
        func sessions() throws -> Int { try SessionLog.openReader(path: daemon.db).sessions().count }
        let before = try sessions()
        for (bad, named) in [
            (["--humidity", "101"], "--humidity 101: relative humidity is a percentage, 0 to 100"),
            (["--temperature", "104"], "--temperature 104: a room's temperature in °C is between -40 and 60"),
        ] {
            let refused = try lineupctl(start + bad, environment: env)
            #expect(refused.status != 0 && refused.stdout.isEmpty, "\(refused.stdout)")
            #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
            #expect(refused.stderr.contains(named), "\(refused.stderr)")
        }
        // The station refuses them too, whoever asks (the page sends the same request).
        #expect(throws: ControlClientError.self) {
            var request = SessionRequest(
                dog: "Rex", program: "research-5-station", step: "phase-3/1", newDog: true, unlabelled: true)
            request.humidityPercent = 150
            _ = try daemon.client.sessionStart(request)
        }
        #expect(try sessions() == before, "a refused start wrote")

        let started = try lineupctl(
            start + ["--temperature", "21.5", "--humidity", "50", "--conditions", "climate room B, fan off", "--json"],
            environment: env)
        #expect(started.status == 0 && started.stderr.isEmpty, "\(started.stderr)")
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let reply = try decoder.decode(SessionStarted.self, from: Data(started.stdout.utf8))
        #expect(reply.conditionsRecorded == true)
        _ = try lineupctl(["session", "end"], environment: env)
        let show = try lineupctl(["session", "show", reply.session], environment: env)
        #expect(show.stdout.contains("Conditions  21.5 °C, 50 % RH; climate room B, fan off\n"), "\(show.stdout)")
    }
}
