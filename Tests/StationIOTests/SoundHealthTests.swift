import Foundation
import Glibc
import Synchronization
import Testing

@testable import StationIO

/// The click path's checks that the clicks sound: each failing run found within one click,
/// counted and reported once, and reported again as recovered once a click plays. Time is the
/// test's: the stream's check is called at the moment it falls due.
@Suite(.serialized) struct SoundHealthTests {
    init() { _ = alsaFixture }

    /// ALSA's real `null` stream, made to fail when told.
    func stopping() throws -> FailingPCM {
        FailingPCM(wrapping: try ALSAPlayback(device: "null", rate: 48_000, channels: 2, periodFrames: 64, periods: 2))
    }

    /// The device is handed out again on every reopen, as a real board's card would be.
    func player(over device: FailingPCM) throws -> ClickPlayer {
        let devices = DeviceSequence(Array(repeating: { device }, count: 8))
        return try ClickPlayer(sound: .standard, opener: devices.open, keepTrying: true, backoff: (0.005, 0.02))
    }

    /// Clicks now and checks its stream when it falls due; returns the click's outcome.
    @discardableResult
    func clickAndCheck(_ player: ClickPlayer, edge: UInt64) -> ClickOutcome {
        let outcome = player.click(edgeTimestamp: edge)
        if player.streamCheckDue != .max { player.checkStream(now: player.streamCheckDue) }
        return outcome
    }

    func reports(_ player: ClickPlayer) -> [SoundReport] {
        var all: [SoundReport] = []
        player.soundReports.drain { all.append($0) }
        return all
    }

    @Test func aDeviceThatTakesNoFramesIsFoundAtTheClickCountedOnceAndRecovered() throws {
        let device = try stopping()
        let player = try player(over: device)
        guard case .played = clickAndCheck(player, edge: 1) else {
            Issue.record("a working device did not click")
            return
        }
        #expect(reports(player).isEmpty && player.soundFault == nil && player.soundFaults == 0)

        device.mode = .takesNothing
        #expect(clickAndCheck(player, edge: 2) == .failed(edgeTimestamp: 2, .notTaken))
        #expect(player.soundFault == .notTaken)
        let failed = reports(player)
        #expect(failed.map(\.kind) == [.failed] && failed.first?.fault == .notTaken && failed.first?.clickEdge == 2)
        // Set right in place first.
        #expect(device.drops >= 1)

        // The run goes on: each click counted as failed, the run once.
        #expect(clickAndCheck(player, edge: 3) == .failed(edgeTimestamp: 3, .notTaken))
        #expect(reports(player).isEmpty)
        #expect(player.soundFaults == 1 && player.failedClicks == 2)
        // The second failure reopens the device through the supervisor.
        #expect(!player.isAvailable)
        #expect(eventually { player.isAvailable })

        device.mode = .works
        guard case .played = clickAndCheck(player, edge: 4) else {
            Issue.record("no click once the device took frames again")
            return
        }
        let recovered = reports(player)
        #expect(recovered.map(\.kind) == [.recovered] && recovered.first?.clickEdge == 4)
        #expect(player.soundFault == nil && player.soundFaults == 1 && player.failedClicks == 2)
    }

    @Test func aStreamThatDoesNotAdvanceIsFoundWithinOneClick() throws {
        let device = try stopping()
        let player = try player(over: device)
        device.mode = .stalls
        guard case .played = player.click(edgeTimestamp: 10) else {
            Issue.record("the stalling device refused the click's first frames")
            return
        }
        // Not before the click's frames should be playing: two periods and 10 ms after it.
        let due = player.streamCheckDue
        #expect(due != .max)
        #expect(!player.checkStream(now: due - 1))
        #expect(player.soundFault == nil)
        #expect(player.checkStream(now: due))
        #expect(player.soundFault == .stalled && player.soundFaults == 1 && player.failedClicks == 1)
        let failed = reports(player)
        #expect(failed.map(\.kind) == [.failed] && failed.first?.fault == .stalled && failed.first?.clickEdge == 10)
        // The check runs once per click.
        #expect(player.streamCheckDue == .max)

        clickAndCheck(player, edge: 11)
        #expect(reports(player).isEmpty && player.soundFaults == 1 && player.failedClicks == 2)
        #expect(eventually { player.isAvailable })

        device.mode = .works
        guard case .played = clickAndCheck(player, edge: 12) else {
            Issue.record("no click once the stream played again")
            return
        }
        #expect(reports(player).map(\.kind) == [.recovered])
        #expect(player.soundFault == nil && player.soundFaults == 1)
    }

    @Test func aWriteErrorAndAVanishedDeviceAreOneRunWithItsRecovery() throws {
        let first = try FaultyPCM()
        let devices = DeviceSequence([{ first }, { throw StationIOError(.audio, "still gone") }, { try FaultyPCM() }])
        let player = try ClickPlayer(sound: .standard, opener: devices.open, keepTrying: true, backoff: (0.005, 0.02))
        first.failNextWrites = [EIO]
        #expect(player.click(edgeTimestamp: 5) == .failed(edgeTimestamp: 5, .deviceUnavailable))
        #expect(player.soundFault == .error)
        let failed = reports(player)
        #expect(failed.count == 1 && failed.first?.errno == EIO)
        #expect(eventually { player.isAvailable })
        guard case .played = clickAndCheck(player, edge: 6) else {
            Issue.record("no click after the device came back")
            return
        }
        #expect(reports(player).map(\.kind) == [.recovered])
        #expect(player.soundFault == nil && player.soundFaults == 1)
    }

    /// Real ALSA: ALSA's `null` and `file` streams play what they take, so the check passes.
    @Test(arguments: ["null", "clickfile:FILE=/dev/null"])
    func aStreamThatPlaysIsNeverTakenForAFault(device: String) throws {
        let player = try ClickPlayer(audio: .init(device: device), keepTrying: false)
        for edge in UInt64(1)...3 {
            guard case .played = player.click(edgeTimestamp: edge) else {
                Issue.record("\(device) did not click")
                return
            }
            finishClick(player)
            #expect(player.checkStream(now: player.streamCheckDue) == false)
        }
        #expect(player.soundFault == nil && player.soundFaults == 0 && player.failedClicks == 0)
        #expect(reports(player).isEmpty)
    }

    /// Real ALSA: a `file` stream whose file cannot be written (/dev/full: no space) fails the
    /// click's writes once its buffer of written frames fills: an error on the PCM, found while
    /// the click is written and reported once, at the click's edge.
    @Test func aPCMThatFailsItsWritesIsAnErrorOnThePCM() throws {
        let player = try ClickPlayer(audio: .init(device: "clickfile:FILE=/dev/full"), keepTrying: false)
        var edge: UInt64 = 0
        while player.soundFault == nil, edge < 4 {
            edge += 1
            _ = player.click(edgeTimestamp: edge)
            finishClick(player)
        }
        #expect(player.soundFault == .error)
        let failed = reports(player)
        #expect(failed.count == 1 && failed.first?.errno == EIO && failed.first?.clickEdge == edge, "\(failed)")
        #expect(player.soundFaults == 1)
    }

    /// The hot loop checks the stream by itself, from its own deadline, after the click.
    @Test func theHotLoopChecksTheStreamAfterTheClick() throws {
        let device = try stopping()
        device.mode = .stalls
        let player = try player(over: device)
        let lineup = try SimulatedLineup(lineCount: 1)
        let ring = EventRing<StationRecord>(capacity: 64)
        let loop = try HotLoop(
            source: lineup, debouncer: Debouncer(lineCount: 1, windowNanoseconds: 1_000_000),
            handler: FirstStationRule(), player: player, records: ring)
        let thread = Thread { loop.run() }
        thread.start()
        lineup.inject(line: 0, active: true)
        #expect(eventually { player.soundFault == .stalled })
        loop.stop()
        #expect(eventually { thread.isFinished })
        var clicked = 0
        ring.drain { if case .click = $0 { clicked += 1 } }
        #expect(clicked == 1)
        #expect(reports(player).map(\.fault) == [.stalled])
    }
}
