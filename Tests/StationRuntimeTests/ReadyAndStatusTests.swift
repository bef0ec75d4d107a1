import StationControl
import Testing
import TrainingEngine

@testable import StationRuntime

/// `ready`'s answers and `status`'s words through a double-blind block of 2 trials, in
/// virtual time: what `lineupctl ready` and `lineupctl status` say at each point, from the
/// engine's own answer and snapshot (no process, no sleep). The wire is
/// SessionTruthTests.readyAndStatusAreTheEnginesAnswer's.
@Suite struct ReadyAndStatusTests {
    static let second: UInt64 = 1_000_000_000

    /// The press as `StationService.ready` answers it: the engine's answer in words.
    private func press(_ rig: Rig) throws(ControlRefusal) -> ReadyReply {
        _ = rig.ready()
        return try StationService.readyReply(
            rig.handler.snapshot.answer.load(ordering: .acquiring), trainerLed: rig.configuration.mode == .trainerLed,
            total: rig.layouts.count, usedStations: Array(0..<rig.stations), stationNames: ["A", "B", "C", "D", "E"])
    }

    /// `status` as `StationService.status` says it, with the trials the feeder committed.
    private func status(_ rig: Rig) throws -> StationStatus {
        try rig.drain()
        var status = StationStatus(state: .idle, audio: "", gpio: "")
        StationService.describe(
            StationService.StatusInputs(
                engine: rig.handler.snapshot.read(), total: rig.layouts.count,
                done: rig.feeder.committed.load(ordering: .acquiring), trainerLed: false, aborted: false,
                autoStart: false, usedStations: Array(0..<rig.stations), stationNames: ["A", "B", "C", "D", "E"],
                speed: 1, now: rig.now, blind: rig.configuration.mode == .doubleBlind),
            into: &status)
        return status
    }

    private func refusal(_ rig: Rig) -> ControlRefusal? {
        do {
            _ = try press(rig)
            return nil
        } catch { return error }
    }

    @Test func readyAndStatusThroughABlockOfTwoTrials() throws {
        let rig = try Rig(phase: "phase-3", step: "1", trials: 2, blind: true)
        #expect(rig.configuration.mode == .doubleBlind)
        var now = try status(rig)
        #expect(now.state == .waitingForReady && now.trial == 1 && now.trials == 2 && now.trialsDone == 0)
        // Double-blind: status reaches the handler's page too, so it gives no loading instruction.
        #expect(now.activity == "trial 1 of 2 waits for ready")

        // A station active: the start is refused, naming it.
        rig.nose(at: 2, true)
        #expect(
            refusal(rig)
                == ControlRefusal(
                    .notReady,
                    "trial 1 of 2 did not start: station C is active (a lid, a paw, a cable?); clear it, then press ready again"
                ))
        now = try status(rig)
        #expect(now.state == .blocked && now.trial == 1, "\(now)")
        rig.nose(at: 2, false)

        // Started: it says so, and status agrees (trial 1 of 2, the whole search left).
        rig.advance(by: Self.second)
        #expect(try press(rig) == ReadyReply(result: "started", trial: 1, message: "trial 1 of 2 started"))
        now = try status(rig)
        #expect(now.state == .searching && now.trial == 1 && now.trialsDone == 0, "\(now)")
        #expect(now.secondsLeft == Double(rig.configuration.searchTimeout) / 1e9)
        // A press while it runs starts nothing, and says so.
        rig.advance(by: Self.second)
        #expect(refusal(rig) == ControlRefusal(.notReady, "trial 1 of 2 is running: the press started nothing"))
        #expect(try status(rig).secondsLeft == Double(rig.configuration.searchTimeout) / 1e9 - 1)

        // The search times out: the interval follows, with its time left.
        rig.advance(by: rig.configuration.searchTimeout)
        now = try status(rig)
        #expect(now.trialsDone == 1 && now.state == .interval && now.trial == 1, "\(now)")
        let intervalLeft = try #require(now.secondsLeft)
        #expect(intervalLeft > 0 && intervalLeft < Double(rig.configuration.interTrialInterval) / 1e9)
        #expect(now.activity == "interval after trial 1; then trial 2 waits for ready")
        // Loaded during the interval: queued, said so.
        #expect(
            try press(rig)
                == ReadyReply(
                    result: "queued", trial: 2,
                    message: "trial 2 of 2 is loaded: it starts when the inter-trial interval is over"))
        #expect(try status(rig).activity == "interval after trial 1; trial 2 is loaded and starts when it is over")
        rig.advance(by: rig.configuration.interTrialInterval)
        now = try status(rig)
        #expect(now.state == .searching && now.trial == 2, "\(now)")

        // Trial 2 times out; after its interval the block is complete.
        rig.advance(by: rig.configuration.searchTimeout)
        now = try status(rig)
        #expect(now.trialsDone == 2 && now.state == .interval && now.activity == "interval after the last trial (2)")
        rig.advance(by: rig.configuration.interTrialInterval)
        now = try status(rig)
        #expect(now.state == .blockComplete && now.trial == 2 && now.trialsDone == 2, "\(now)")
        #expect(now.activity == "the block is complete (2 trials): end the session (lineupctl session end)")
        #expect(
            refusal(rig)
                == ControlRefusal(
                    .notReady, "the block is complete (2 trials): end the session (lineupctl session end)"))
    }
}
