import Figures
import Foundation
import SessionLog
import StationControl
import Testing
import TrainingEngine

@testable import StationIO
@testable import StationRuntime

/// The feeder writes each event's detail as the readers' own type (`SessionLog/EventDetail`):
/// flags as booleans, numbers as numbers, and each reads back as what was written.
@Suite struct TypedDetailTests {
    /// Every kind of detail the feeder writes, fed to it in one session, each at its own time.
    @Test func everyDetailTheFeederWritesReadsBackAsItsType() throws {
        let rig = try Rig(phase: "phase-1", step: "1", trials: 2)
        let feeder = rig.feeder
        var t: UInt64 = 5_000_000_000
        func next() -> UInt64 {
            t += 1_000_000
            return t
        }
        // A trial in progress, so a press names the sample at the nose's station.
        feeder.take(EngineNote.searchStarted(trial: 0, at: next()))
        let filled = try #require(rig.layouts[0].stations.firstIndex { $0.sampleID != nil })
        let sample = try #require(rig.layouts[0].stations[filled].sampleID)
        var expected: [(kind: EventKind, check: (String?) throws -> Void)] = []
        func expect<D: Codable & Equatable>(_ kind: EventKind, _ detail: D) {
            expected.append(
                (
                    kind,
                    { stored in
                        let stored = try #require(stored, "\(kind) \(detail) has a detail")
                        // Written exactly as the type encodes it: no "true", no numbers as strings.
                        #expect(stored == EventDetail.encode(detail))
                        #expect(try EventDetail.decode(D.self, from: stored) == detail, "\(stored)")
                    }
                ))
        }
        func expectFault(_ kind: EventKind, _ detail: FaultDetail) {
            expected.append(
                (
                    kind,
                    { stored in
                        let stored = try #require(stored, "\(kind) has a detail")
                        #expect(stored == EventDetail.encode(detail))
                        let read = try EventDetail.decode(FaultDetail.self, from: stored)
                        #expect(
                            read.sensor == detail.sensor && read.clickFailed == detail.clickFailed
                                && read.read == detail.read && read.errno == detail.errno && read.why == detail.why,
                            "\(stored)")
                    }
                ))
        }

        feeder.take(
            StationRecord.edge(SensorEdge(timestamp: next(), line: 3, isActive: true), acted: false, knownAt: 0))
        expect(.edge, EdgeDetail(chatter: true))
        feeder.take(
            StationRecord.edge(
                SensorEdge(timestamp: next(), line: rig.errorLine, isActive: true), acted: true, knownAt: 0))
        expect(.button, EdgeDetail(button: "error"))
        feeder.take(StationRecord.settled(SensorEdge(timestamp: next(), line: 3, isActive: false), knownAt: 0))
        expect(.note, SettledDetail())
        feeder.take(
            StationRecord.settled(SensorEdge(timestamp: next(), line: rig.readyLine, isActive: true), knownAt: 0))
        expect(.note, SettledDetail(button: "ready"))
        feeder.take(EngineNote.indication(station: 1, heldFrom: t, at: next(), atTarget: false))
        expect(.indication, IndicationDetail(atTarget: false))
        feeder.take(EngineNote.cue(trialStart: true, at: next()))
        expect(.cue, CueDetail(cue: "trial-start"))
        feeder.take(EngineNote.manualClick(station: filled, at: next()))
        expect(.note, PressDetail(press: .manualClick, sample: sample))
        feeder.take(EngineNote.errorMark(station: -1, at: next()))
        expect(.note, PressDetail(press: .errorMark))
        feeder.take(EngineNote.sensorFault(.stuck, station: 2, at: next()))
        expectFault(.fault, FaultDetail(sensor: "stuck"))
        feeder.take(EngineNote.sensorRecovered(station: 2, at: next()))
        expectFault(.note, FaultDetail(sensor: "recovered"))
        feeder.sourceFault(EdgeSourceFault(kind: .failed, descriptor: 0, errno: EIO, lines: 1 << 4, timestamp: next()))
        expectFault(.fault, FaultDetail(read: "failed", errno: EIO, why: String(cString: strerror(EIO))))
        feeder.sourceFault(
            EdgeSourceFault(kind: .recovered, descriptor: 0, errno: EIO, lines: 1 << 4, timestamp: next()))
        expectFault(.note, FaultDetail(read: "recovered", errno: EIO, why: String(cString: strerror(EIO))))
        feeder.take(EngineNote.exerciseStarted(repetition: 2, at: next()))
        expect(
            .cue, CueDetail(cue: "exercise-start", repetition: 2, seconds: Double(feeder.settings.roundLength) / 1e9))
        feeder.take(EngineNote.exerciseEnded(repetition: 2, clicks: 7, errors: 3, aborted: true, at: next()))
        expect(.cue, CueDetail(cue: "exercise-end", repetition: 2, clicks: 7, errors: 3, aborted: true))
        feeder.soundReport(SoundReport(kind: .failed, fault: .stalled, errno: 0, clickEdge: next(), timestamp: t))
        expectFault(.fault, FaultDetail(why: SoundFault.stalled.description, fault: "sound-stalled"))
        feeder.soundReport(SoundReport(kind: .failed, fault: .error, errno: EIO, clickEdge: next(), timestamp: t))
        expectFault(
            .fault,
            FaultDetail(
                errno: EIO, why: "\(SoundFault.error) (\(String(cString: strerror(EIO))))", fault: "sound-error"))
        feeder.soundReport(SoundReport(kind: .recovered, fault: .error, errno: 0, clickEdge: next(), timestamp: t))
        expectFault(.note, FaultDetail(why: "sound-error", fault: "sound-recovered"))
        feeder.clickRecord(.clickFailed(edgeTimestamp: next(), .deviceUnavailable), station: -1, trialId: nil)
        expectFault(.fault, FaultDetail(clickFailed: "\(ClickFailure.deviceUnavailable)"))
        feeder.clickRecord(.clickFailed(edgeTimestamp: next(), .notTaken), station: -1, trialId: nil)
        expectFault(.fault, FaultDetail(clickFailed: "the audio device took none of the click's frames"))
        try rig.drain()

        // In the order written (the failed click is stamped with the clock, not with `t`).
        let events = try rig.events().filter { $0.detail != nil }.sorted { $0.seq < $1.seq }
        #expect(events.count == expected.count, "\(events.map(\.detail))")
        for (event, want) in zip(events, expected) {
            #expect(event.kind == want.kind.rawValue, "\(event.detail ?? "")")
            try want.check(event.detail)
        }
        #expect(feeder.sensorFaults.withLock { $0 } == [.stuck: 1, .unreadable: 1])
    }
}

/// `status`'s flagged stations come from what the hot thread publishes (the engine's masks and
/// the hot loop's lines out of service), and clear when the engine clears them.
@Suite struct FaultFlagTests {
    static let millisecond: UInt64 = 1_000_000

    @Test func aChatteringStationIsFlaggedUntilItIsQuiet() throws {
        let rig = try Rig(phase: "phase-1", step: "1", trials: 2)
        #expect(rig.flagged().isEmpty)
        // A storm on station D: 20 debounced edges 5 ms apart.
        for k in 0..<20 {
            rig.edge(line: 3, active: k % 2 == 0)
            rig.advance(by: 5 * Self.millisecond)
        }
        #expect(rig.flagged() == [FlaggedStation(station: "D", fault: .chatter)])
        try rig.drain()
        #expect(rig.feeder.sensorFaults.withLock { $0 } == [.chatter: 1])
        // Quiet for longer than `chatterQuiet`: its next edge is trusted again, and the flag goes.
        rig.advance(by: 300 * Self.millisecond)
        rig.edge(line: 3, active: false)
        #expect(rig.flagged().isEmpty)
    }

    @Test func anUnreadableLineIsFlaggedAtItsStationOnly() throws {
        let rig = try Rig(phase: "phase-1", step: "1", trials: 2)
        // Line 1 (station B) and the ready button's line are out of service: the button is no station.
        #expect(
            rig.flagged(unreadable: 1 << 1 | 1 << UInt64(rig.readyLine))
                == [FlaggedStation(station: "B", fault: .unreadable)])
    }

    /// One fault per board station, the engine's stations mapped to the board's.
    @Test func eachStationShowsTheFaultThatExplainsMost() {
        var values = EngineSnapshot.Values(
            activity: .searching, begun: 1, endsAt: 0, readyPending: false, noseAtStation: false, blockedStation: -1)
        // The session uses board stations E, A and C, in that order.
        values.activeAtStart = 1 << 0  // E
        values.stuck = 1 << 1  // A
        values.silent = 1 << 1  // A as well: stuck says more
        values.chatter = 1 << 2  // C
        let flagged = values.flaggedStations(
            unreadableLines: 1 << 4 | 1 << 6, usedStations: [4, 0, 2], stationNames: ["A", "B", "C", "D", "E"])
        #expect(
            flagged == [
                FlaggedStation(station: "A", fault: .stuck), FlaggedStation(station: "C", fault: .chatter),
                FlaggedStation(station: "E", fault: .unreadable),
            ])
    }
}
