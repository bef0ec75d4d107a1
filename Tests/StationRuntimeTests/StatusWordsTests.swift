import StationControl
import Testing
import TrainingEngine

@testable import StationRuntime

/// `status`'s words from the engine's snapshot alone, at a virtual time: what the trainer reads
/// as a block runs.
@Suite struct StatusWordsTests {
    static let second: UInt64 = 1_000_000_000

    private func words(
        _ rig: Rig, speed: Double = 1, done: Int = 0, autoStart: Bool = false, blind: Bool = false
    ) -> StationStatus {
        var status = StationStatus(state: .idle, audio: "", gpio: "")
        StationService.describe(
            StationService.StatusInputs(
                engine: rig.handler.snapshot.read(), total: rig.layouts.count, done: done,
                trainerLed: rig.configuration.mode == .trainerLed, aborted: false, autoStart: autoStart,
                usedStations: Array(0..<rig.stations), stationNames: ["A", "B", "C", "D", "E"], speed: speed,
                now: rig.now, blind: blind),
            into: &status)
        return status
    }

    /// Issue 32: a `ready = "auto"` step starts each trial by itself once no station is active;
    /// its status never asks for a load and a ready press, waiting, blocked or between trials.
    /// And a double-blind block's status (every page is sent it, the handler's too) says what
    /// the station waits for, never what to load.
    @Test func anAutoStartOrDoubleBlindStepsWordsAskForNoLoadingNorPress() throws {
        let rig = try Rig(phase: "phase-1", step: "1", trials: 2)
        #expect(words(rig, autoStart: true).activity == "trial 1 of 2 starts by itself once no station is active")
        #expect(words(rig, blind: true).activity == "trial 1 of 2 waits for ready")

        rig.nose(at: 2, true)
        _ = rig.ready()
        #expect(
            words(rig, autoStart: true).activity
                == "trial 1 of 2 cannot start: station C is active; it starts by itself once the station is clear")
        rig.nose(at: 2, false)

        _ = rig.ready()
        let target = try #require(rig.layouts[0].targetStation)
        rig.nose(at: target, true)
        rig.advance(by: 3 * Self.second)
        rig.nose(at: target, false)
        let auto = words(rig, done: 1, autoStart: true)
        #expect(auto.state == .interval)
        #expect(
            auto.activity
                == "interval after trial 1; trial 2 starts by itself once it is over and no station is active")
        #expect(words(rig, done: 1, blind: true).activity == "interval after trial 1; then trial 2 waits for ready")
        // The same moment of a block that is neither: the loading words stand (so the check can fail).
        #expect(words(rig, done: 1).activity == "interval after trial 1; load trial 2, then press ready")
    }

    @Test func theStatusWordsFollowTheSnapshot() throws {
        let rig = try Rig(phase: "phase-1", step: "1", trials: 2)
        var status = words(rig)
        #expect(status.state == .waitingForReady)
        #expect(status.activity == "load trial 1 of 2, then press ready")

        // A lid on station C: the start is refused and status names it.
        rig.nose(at: 2, true)
        _ = rig.ready()
        status = words(rig)
        #expect(status.state == .blocked)
        #expect(status.activity == "trial 1 of 2 cannot start: station C is active; clear it, then press ready")
        rig.nose(at: 2, false)

        _ = rig.ready()
        rig.advance(by: 10 * Self.second)
        status = words(rig)
        #expect(status.state == .searching && status.trial == 1 && status.trials == 2)
        #expect(status.secondsLeft == 50, "60 s of search, 10 s gone")
        // At 10× real time the seconds left are the protocol's: ten times the wall clock's.
        #expect(words(rig, speed: 10).secondsLeft == 500)

        let target = try #require(rig.layouts[0].targetStation)
        rig.nose(at: target, true)
        status = words(rig)
        #expect(status.state == .holding)
        #expect(status.activity == "trial 1 of 2: the dog is searching, its nose at a station now")

        rig.advance(by: 3 * Self.second)
        rig.nose(at: target, false)
        _ = rig.ready()
        status = words(rig, done: 1)
        #expect(status.state == .interval && status.trialsDone == 1)
        #expect(status.activity == "interval after trial 1; trial 2 is loaded and starts when it is over")
    }

    @Test func aTrainerLedExerciseSaysItsRepetitions() throws {
        let rig = try Rig(phase: "initial", step: "food")
        _ = rig.ready()
        var status = words(rig)
        #expect(status.state == .roundRunning && status.exercise == 1 && status.exerciseRepeats == 4)
        for _ in 1...4 {
            rig.advance(by: rig.configuration.exerciseDuration + Self.second)
            _ = rig.ready()
        }
        status = words(rig, done: 4)
        #expect(status.state == .repetitionsDone)
        #expect(status.activity == "every repetition (4) is done: end the session (lineupctl session end)")
    }
}
