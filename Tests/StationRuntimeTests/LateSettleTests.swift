import Foundation
import Glibc
import SessionLog
import Testing
import TrainingEngine

@testable import StationIO
@testable import StationRuntime

/// The station's whole path (the hot loop on a simulated lineup, the engine, the log feeder, the
/// log) against `verify-scoring` when an edge reaches the loop late: the emulated tier's power-cut
/// run (seed 870930, trial 21) logged a false alert at A at 0.460 s that the re-scorer did not
/// see. The virtual dog sniffed A for 46 ms; its first chatter toggle was stamped 1 ms after the
/// arrival and reached the pipe only after the loop had decided the hold (the dog's thread held
/// up between stamping and writing). Taken as chatter, that edge left a settle owed whose window
/// had long closed: the loop settled the level after the hold it could not undo, and the log
/// must say when the station learnt it, as it does for an edge read late.
@Suite(.serialized) struct LateSettleTests {
    @Test func aLevelSettledAfterTheHoldWasDecidedRescoresAsTheStationDecided() throws {
        let rig = try Rig(phase: "phase-2", step: "1", trials: 1)
        let target = try #require(rig.layouts[0].targetStation)
        let away = (target + 1) % rig.stations
        let lineup = try SimulatedLineup(lineCount: rig.stations + 3)
        let loop = try HotLoop(
            source: lineup, debouncer: Debouncer(lineCount: rig.stations + 3, windowNanoseconds: 5_000_000),
            handler: rig.handler, player: nil, records: rig.stationRing)
        let thread = Thread { loop.run() }
        thread.start()
        var stopped = false
        func stop() {
            guard !stopped else { return }
            stopped = true
            loop.stop()
            while !thread.isFinished { usleep(1000) }
        }
        defer { stop() }
        let ms: UInt64 = 1_000_000
        // Every stamp lies in the past (a hold of 2 s, the search 60 s): the loop reads each
        // edge late, and the order of reading is the test's, not the clock's.
        let t0 = MonotonicClock.now() - 3_000 * ms
        #expect(lineup.inject(line: rig.readyLine, active: true, at: t0))
        #expect(lineup.inject(line: rig.readyLine, active: false, at: t0 + 20 * ms))
        #expect(lineup.inject(line: UInt32(away), active: true, at: t0 + 100 * ms))
        // The loop decides the hold at `away` (due at 2.1 s, already past) before the nose's
        // first chatter toggle, stamped 1 ms after its arrival, reaches it.
        var indicated = false
        for _ in 0..<500 where !indicated {
            usleep(10_000)
            try rig.drain()
            indicated = try !rig.events(.indication).isEmpty
        }
        try #require(indicated, "the loop never decided the hold")
        #expect(lineup.inject(line: UInt32(away), active: false, at: t0 + 101 * ms))
        var ended = false
        for _ in 0..<500 where !ended {
            usleep(10_000)
            try rig.drain()
            ended = try rig.log.reader.trials().count == 1
        }
        try #require(ended, "the trial never ended")
        stop()
        try rig.drain()

        // The settled note says when the station learnt the level: after the hold, at 2.1 s.
        let notes = try rig.events(.note).filter { $0.detail?.contains("\"settled\"") == true }
        #expect(notes.count == 1)
        #expect(notes.first?.detail?.contains("\"known_ns\":\(t0 + 2_100 * ms)") == true, "\(notes)")
        // The step ends a search at a false alert: the re-scorer, taking the settled level at
        // its window's close, saw no hold and said "miss" at the time-out (as in CI).
        let trial = try #require(try rig.log.reader.trials().first)
        #expect(trial.outcome == .falseAlert)
        #expect(rig.configuration.endOnFalseAlert)
        let verified = try rig.log.reader.verifyScoring(session: rig.sessionId.uuidString.lowercased())
        #expect(verified.notRescored == nil, "\(verified.notRescored ?? "")")
        #expect(verified.trials == 1)
        #expect(verified.disagreements.isEmpty, "\(verified.disagreements.map(\.line))")
    }
}
