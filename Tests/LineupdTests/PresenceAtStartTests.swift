import Foundation
import Glibc
import ReadingRows
import SessionLog
import StationControl
import Testing
import TrainingEngine

/// Issue 32, end to end: the sensors' state when a round starts is part of the round, and a
/// trainer's click is never a miss. The real lineupd (`--simulate --serve --no-virtual-dog`)
/// driven by the built lineupctl as a trainer would: the nose put at a station before ready,
/// then the clicker pressed.
@Suite("the nose at a station when a round starts", .serialized, .ownThreads)
struct PresenceAtStartTests {
    /// One trainer-led session's rounds: before each, the nose is put at `noseAt` (a station
    /// name, chosen from the round's layout, or nil); then ready; then the clicker.
    func rounds(
        step: String, noseAt picks: [([LayoutEntry]) -> String?]
    ) throws -> (db: String, outcomes: [TrialOutcome], indicated: [Int?], session: String)? {
        guard let daemon = try TrainerLedSessionTests.station() else { return nil }
        defer { if daemon.process.isRunning { _ = daemon.terminate() } }
        let client = daemon.client
        let env = ["LINEUP_SOCKET": daemon.socket]
        // 30 s rounds, 3 s at speed 10: time enough for three lineupctl runs.
        let start = try lineupctl(
            [
                "session", "start", "--dog", "Aino", "--program", "study", "--step", step, "--mode", "trainer-led",
                "--sample", "T-1", "--seed", "5", "--duration", "30", "--json",
            ], environment: env)
        #expect(start.status == 0, "\(start.stderr)")
        let session = try #require(try? JSONDecoder().decode(SessionStarted.self, from: Data(start.stdout.utf8)))
            .session
        for (n, pick) in picks.enumerated() {
            let station = pick(try client.layout(view: .handler))
            if let station {
                let on = try lineupctl(["simulate", station, "on"], environment: env)
                #expect(on.status == 0, "\(on.stderr)")
                // The edge has passed the debouncer and reached the engine before ready.
                #expect(
                    eventually(5) {
                        (try? client.status().inputLevels)?.first { $0.input == station }?.active == true
                    }, "station \(station) never read active")
            }
            let ready = try lineupctl(["ready"], environment: env)
            #expect(ready.status == 0, "\(ready.stderr)")
            let press = try lineupctl(["simulate", "clicker", "press"], environment: env)
            #expect(press.status == 0, "\(press.stderr)")
            if let station {
                let off = try lineupctl(["simulate", station, "off"], environment: env)
                #expect(off.status == 0, "\(off.stderr)")
            }
            #expect(eventually(15) { (try? client.status().exercisesDone) == n + 1 }, "round \(n + 1) never ended")
        }
        try client.endSession(suggestions: nil)
        #expect(daemon.terminate().status == 0)
        let reader = try SessionLog.openReader(path: daemon.db)
        let trials = try reader.trials(LogFilter(sessionId: session))
        return (daemon.db, trials.map(\.outcome), trials.map(\.indicatedStation), session)
    }

    @Test func aNoseAtTheTargetBeforeReadyIsAHitWhenClicked() throws {
        // indicate/1: one container, the target, at A.
        guard let run = try rounds(step: "indicate/1", noseAt: [{ _ in "A" }]) else { return }
        #expect(run.outcomes == [.hit])
        #expect(run.indicated == [1])
        // The click is attributed to A: the nose was there from the round's start.
        let reader = try SessionLog.openReader(path: run.db)
        let clicks = try reader.events(LogFilter(sessionId: run.session), limit: nil).filter {
            ($0.detail ?? "").contains("manual_click")
        }
        #expect(clicks.map(\.station) == [1], "\(clicks)")
    }

    @Test func aNoseAtTheBlankBeforeReadyIsAFalseAlertThereAndAClickAtNoStationAHit() throws {
        // target-scent/1: the target and a blank on A and B. Round 1: the nose rests at the
        // blank since before ready, the click is a false alert there. Round 2: the nose at no
        // station (lying down in front of the can), the click is the trainer's judgement: a hit.
        let blank: ([LayoutEntry]) -> String? = { layout in layout.first { $0.kind == .blank }?.station }
        guard let run = try rounds(step: "target-scent/1", noseAt: [blank, { _ in nil }]) else { return }
        #expect(run.outcomes == [.falseAlert, .hit])
        let reader = try SessionLog.openReader(path: run.db)
        let trials = try reader.trials(LogFilter(sessionId: run.session))
        let blankNumbers = trials.map { trial in trial.layout.first { $0.kind == .blank }?.station }
        let targetNumbers = trials.map { trial in trial.layout.first { $0.kind == .target }?.station }
        #expect(run.indicated == [blankNumbers[0], targetNumbers[1]], "\(trials)")
        // The second click's own event keeps its station unknown: no sensor saw the dog.
        let clicks = try reader.events(LogFilter(sessionId: run.session), limit: nil).filter {
            ($0.detail ?? "").contains("manual_click")
        }
        #expect(clicks.map(\.station) == [blankNumbers[0], nil], "\(clicks)")
    }
}
