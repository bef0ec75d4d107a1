import StationControl
import Synchronization
import Testing
import TrainingEngine

@testable import StationRuntime

/// A block that stops when its log cannot be written (issue 36), in virtual time: the engine
/// asks the log's gate before each start, so a trial the log could not record never starts,
/// the one running finishes and is counted, and the block goes on once the log takes writes.
/// The gate here stands for the writer's `isFailing` (FullDiskTests fills a real disk).
@Suite struct LogPauseTests {
    static let second: UInt64 = 1_000_000_000

    final class Disk: Sendable {
        let full = Atomic<Bool>(false)
    }

    /// The service's gate (`StationService.logGate`) over a disk the test fills and frees.
    static func gate(_ rig: Rig, _ disk: Disk) {
        let feeder = rig.feeder
        rig.handler.logGate = { begun in
            if disk.full.load(ordering: .acquiring) { return .unwritable }
            return feeder.committed.load(ordering: .acquiring) < begun ? .behind : .open
        }
    }

    func reply(_ rig: Rig, problem: String? = "disk full") throws(ControlRefusal) -> ReadyReply {
        _ = rig.ready()
        return try StationService.readyReply(
            rig.handler.snapshot.answer.load(ordering: .acquiring), trainerLed: false, total: rig.layouts.count,
            usedStations: Array(0..<rig.stations), stationNames: ["A", "B", "C", "D", "E"], logProblem: problem)
    }

    func status(_ rig: Rig, paused: String?) throws -> StationStatus {
        try rig.drain()
        var status = StationStatus(state: .idle, audio: "", gpio: "")
        StationService.describe(
            StationService.StatusInputs(
                engine: rig.handler.snapshot.read(), total: rig.layouts.count,
                done: rig.feeder.committed.load(ordering: .acquiring), trainerLed: false, aborted: false,
                autoStart: false, usedStations: Array(0..<rig.stations), stationNames: ["A", "B", "C", "D", "E"],
                speed: 1, now: rig.now, logPaused: paused),
            into: &status)
        return status
    }

    @Test func noTrialStartsWhileTheLogCannotBeWrittenAndTheBlockGoesOnAfter() throws {
        let rig = try Rig(phase: "phase-3", step: "1", trials: 3)
        let disk = Disk()
        Self.gate(rig, disk)
        #expect(try reply(rig) == ReadyReply(result: "started", trial: 1, message: "trial 1 of 3 started"))
        // The disk fills during trial 1: the trial goes on to its end and is counted.
        disk.full.store(true, ordering: .releasing)
        rig.advance(by: Self.second)
        let words = StationService.logPausedWords("disk full")
        var now = try status(rig, paused: words)
        #expect(now.state == .searching, "\(now)")
        #expect(now.activity?.hasSuffix("; the block pauses after it: \(words)") == true, "\(now)")
        rig.advance(by: rig.configuration.searchTimeout)
        // A press during the interval is refused too: it would be kept for a start the log refuses.
        #expect(
            throws: ControlRefusal(.notReady, "trial 2 of 3 did not start: \(words); press ready again once it can")
        ) {
            try reply(rig)
        }
        rig.advance(by: rig.configuration.interTrialInterval)
        now = try status(rig, paused: words)
        #expect(now.trialsDone == 1 && now.state == .paused && now.trial == 2, "\(now)")
        #expect(now.activity == "paused before trial 2 of 3: \(words); then press ready", "\(now)")
        // A press starts nothing, says why, and is not kept.
        #expect(
            throws: ControlRefusal(.notReady, "trial 2 of 3 did not start: \(words); press ready again once it can")
        ) {
            try reply(rig)
        }
        rig.advance(by: 600 * Self.second)
        #expect(rig.handler.snapshot.read().begun == 1, "no trial started while the disk was full")
        // Room again: the next press starts trial 2.
        disk.full.store(false, ordering: .releasing)
        #expect(
            try reply(rig, problem: nil) == ReadyReply(result: "started", trial: 2, message: "trial 2 of 3 started"))
    }

    /// A trial starts only once the one before has come back from the log's writer (written,
    /// or spooled and counted): a disk that fills at a trial's commit costs that trial alone.
    @Test func aTrialWaitsForTheOneBeforeToReachTheLog() throws {
        let rig = try Rig(phase: "phase-3", step: "1", trials: 2)
        Self.gate(rig, Disk())
        _ = try reply(rig, problem: nil)
        // Trial 1 times out; the feeder has not taken its end from the ring yet (no drain).
        rig.advance(by: rig.configuration.searchTimeout + rig.configuration.interTrialInterval)
        #expect(rig.feeder.committed.load(ordering: .acquiring) == 0)
        #expect(
            try reply(rig, problem: nil)
                == ReadyReply(
                    result: "queued", trial: 2, message: "trial 2 of 2 is loaded: it starts once trial 1 is in the log")
        )
        rig.advance(by: 10 * Self.second)
        #expect(rig.handler.snapshot.read().begun == 1, "trial 2 started before trial 1 was in the log")
        try rig.drain()
        #expect(rig.feeder.committed.load(ordering: .acquiring) == 1)
        // The engine looks again within its recheck: the pressed trial starts by itself.
        rig.advance(by: EngineHandler.logRecheck)
        #expect(rig.handler.snapshot.read().begun == 2)
        #expect(rig.handler.snapshot.read().activity == .searching)
    }
}
