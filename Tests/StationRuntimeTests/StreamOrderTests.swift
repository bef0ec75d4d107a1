import Foundation
import SessionLog
import Testing
import TrainingEngine

@testable import StationIO
@testable import StationRuntime

/// One ordered stream: the engine's notes share the hot loop's ring with the edges and clicks,
/// so the feeder attributes each by its place and never waits on a clock to rejoin them.
@Suite struct StreamOrderTests {
    static let second: UInt64 = 1_000_000_000

    /// Trial 1 started and seen by the feeder, then the dog's hold at the target to its click.
    private func holdToClick(_ rig: Rig) throws -> (target: Int, clickAt: UInt64) {
        let target = try #require(rig.layouts[0].targetStation)
        #expect(rig.ready().answer == .started)
        try rig.drain()
        rig.advance(by: Self.second)
        rig.nose(at: target, true)
        let clicks = rig.advance(by: 3 * Self.second)
        #expect(clicks.count == 1, "a hold for the step's 2 s asks one click")
        return (target, try #require(clicks.first))
    }

    @Test func aClickRecordAndItsTrialsEndInOneStreamAreCommittedInOneDrain() throws {
        let rig = try Rig(phase: "phase-1", step: "1", trials: 3)
        let (target, clickAt) = try holdToClick(rig)
        // One pass of the feeder, as soon as the hot thread has pushed them: nothing held back.
        try rig.drain()
        let trial = try #require(try rig.log.reader.trials().first)
        #expect(trial.outcome == .hit)
        #expect(rig.feeder.committed.load(ordering: .acquiring) == 1)
        let click = try #require(try rig.events(.click).first)
        #expect(click.trialId == trial.id && click.station == target + 1)
        #expect(click.kernelNs == Int64(clickAt) && click.clickOnsetLatencyNs == 40_000)
        #expect(rig.feeder.heldClick == nil)
        // The trial's line has the click's latency: its record was in before the trial ended.
        #expect(rig.feeder.handedLatencies == [40_000])
    }

    @Test func anEdgeAfterATrialsEndIsNotLoggedInThatTrial() throws {
        let rig = try Rig(phase: "phase-1", step: "1", trials: 3)
        let (target, _) = try holdToClick(rig)
        rig.advance(by: 1_000_000)
        // The dog lifts its nose after the click: the trial is over.
        rig.nose(at: target, false)
        rig.chatter(line: UInt32(target), active: true)
        try rig.drain()
        let trial = try #require(try rig.log.reader.trials().first)
        let edges = try rig.events(.edge)
        #expect(edges.count == 3)
        #expect(edges.first?.value == 1 && edges.first?.trialId == trial.id, "the hold's edge is the trial's")
        for edge in edges.dropFirst() {
            #expect(edge.trialId != trial.id, "after the trial's end: \(edge)")
            #expect(edge.trialId == nil, "the inter-trial interval belongs to no trial")
        }
    }

    @Test func anEdgeIsLoggedBeforeWhatItCaused() throws {
        // The ready press starts trial 1: the press is the assistant's, before the search;
        // its release comes during the search, and is the trial's.
        let rig = try Rig(phase: "phase-1", step: "1", trials: 3)
        rig.edge(line: rig.readyLine, active: true)
        #expect(rig.handler.snapshot.read().activity == .searching)
        rig.advance(by: Self.second / 10)
        rig.edge(line: rig.readyLine, active: false)
        // The trial ends on the search's time-out; the next press waits for the interval.
        rig.advance(by: rig.configuration.searchTimeout)
        try rig.drain()
        let trial = try #require(try rig.log.reader.trials().first)
        let presses = try rig.events(.button)
        #expect(presses.map(\.value) == [1, 0])
        #expect(presses.first?.trialId == nil, "the press that started the trial")
        #expect(presses.last?.trialId == trial.id, "the release during its search")
    }

    @Test func aClickWithoutARecordDoesNotHoldItsTrialBack() throws {
        // No audio device: a click asked leaves no record, and the trial is committed at once.
        let rig = try Rig(phase: "phase-1", step: "1", trials: 3)
        rig.clickLatency = nil
        let first = try holdToClick(rig)
        rig.nose(at: first.target, false)
        try rig.drain()
        #expect(try rig.log.reader.trials().first?.outcome == .hit)
        #expect(try rig.events(.click).isEmpty)
        // The next trial's click is still matched to its own ask, not to this one.
        rig.clickLatency = 55_000
        rig.advance(by: rig.configuration.interTrialInterval)
        #expect(rig.ready().answer == .started)
        let target = try #require(rig.layouts[1].targetStation)
        rig.advance(by: Self.second)
        rig.nose(at: target, true)
        let clicks = rig.advance(by: 3 * Self.second)
        try rig.drain()
        let trials = try rig.log.reader.trials()
        #expect(trials.count == 2)
        let click = try #require(try rig.events(.click).first)
        #expect(try rig.events(.click).count == 1)
        #expect(click.kernelNs == Int64(try #require(clicks.first)))
        #expect(click.trialId == trials.first { $0.number == 2 }?.id && click.station == target + 1)
        #expect(click.clickOnsetLatencyNs == 55_000)
    }

    @Test func everyEngineNoteComesBackFromItsRecords() {
        let end = TrialEnd(
            trial: 41, outcome: .falseAlert, target: 4, visitedMask: 0b10110, indicatedMask: 0b100, firstStation: 2,
            firstAt: 7_000_000_123, startedAt: 5_000_000_001, endedAt: 9_000_000_777, sensorFaultMask: 0b1000)
        let noTarget = TrialEnd(
            trial: 0, outcome: .correctRejection, target: -1, visitedMask: 0, indicatedMask: 0, firstStation: -1,
            firstAt: 0, startedAt: 1, endedAt: 2)
        let notes: [EngineNote] = [
            .searchStarted(trial: 3, at: .max - 1), .visit(station: 2, from: 10, to: 20, indicated: true),
            .visit(station: 0, from: 1, to: 2, indicated: false),
            .indication(station: 4, heldFrom: 100, at: 200, atTarget: false),
            .indication(station: 1, heldFrom: 1, at: 2, atTarget: true), .cue(trialStart: true, at: 5),
            .cue(trialStart: false, at: 6), .clickAsked(station: -1, at: 7, trainer: true),
            .clickAsked(station: 3, at: 8, trainer: false), .trialEnded(end), .trialEnded(noTarget),
            .interTrialOver(at: 9), .manualClick(station: -1, at: 10), .manualClick(station: 2, at: 11),
            .errorMark(station: 4, at: 12), .exerciseStarted(repetition: 2, at: 13),
            .exerciseEnded(repetition: 2, clicks: 7, errors: 3, aborted: true, at: 14),
            .exerciseEnded(repetition: 1, clicks: 0, errors: 0, aborted: false, at: 15),
            .sensorFault(.chatter, station: 1, at: 16), .sensorFault(.activeAtStart, station: 0, at: 18),
            .sensorRecovered(station: 1, at: 17),
        ]
        var decoder = EngineNote.Decoder()
        var decoded: [EngineNote] = []
        for note in notes {
            if let leading = note.leadingRecord { #expect(decoder.note(leading) == nil, "half of a note") }
            if let back = decoder.note(note.record) { decoded.append(back) }
        }
        #expect(decoded == notes)
        #expect(decoder.note(HandlerRecord(kind: 0)) == nil, "a kind no note has")
    }
}
