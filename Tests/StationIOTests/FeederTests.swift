import Foundation
import Synchronization
import Testing

@testable import StationIO

/// The feeder's schedule in virtual time, and the hot loop pulsing a feeder line after a click.
@Suite struct FeederTests {
    @Test func thePulseStartsAfterItsDelayAndLastsItsWidth() {
        var feeder = FeederSchedule(delayNanoseconds: 250_000_000, widthNanoseconds: 40_000_000)
        #expect(feeder.nextDeadline == .max)
        let scheduled = feeder.clicked(clickEdge: 999, at: 1_000)
        #expect(scheduled)
        #expect(feeder.nextDeadline == 250_001_000)
        let beforeItsDelay = feeder.due(now: 250_000_999)
        #expect(beforeItsDelay == .none)
        let atItsDelay = feeder.due(now: 250_001_000)
        #expect(atItsDelay == .switchOn)
        // The line went on a little late (the loop's wake-up): the width counts from then.
        let unfed = feeder.switchedOn(at: 250_001_200, ok: true)
        #expect(unfed == nil)
        #expect(feeder.isOn)
        #expect(feeder.nextDeadline == 290_001_200)
        let beforeItsWidth = feeder.due(now: 290_001_199)
        #expect(beforeItsWidth == .none)
        let atItsWidth = feeder.due(now: 290_001_200)
        #expect(atItsWidth == .switchOff)
        #expect(
            feeder.switchedOff(at: 290_001_300)
                == FeederPulse(clickEdge: 999, onAt: 250_001_200, offAt: 290_001_300))
        #expect(!feeder.isOn)
        #expect(feeder.nextDeadline == .max)
    }

    @Test func aClickDuringAPulseIsNotFedTwiceAndTheNextOneIs() {
        var feeder = FeederSchedule(delayNanoseconds: 0, widthNanoseconds: 100)
        let first = feeder.clicked(clickEdge: 1, at: 10)
        #expect(first)
        let whilePending = feeder.clicked(clickEdge: 2, at: 10)
        #expect(!whilePending, "pending")
        let on = feeder.due(now: 10)
        #expect(on == .switchOn)
        _ = feeder.switchedOn(at: 10, ok: true)
        let whileOn = feeder.clicked(clickEdge: 3, at: 50)
        #expect(!whileOn, "on")
        let off = feeder.due(now: 110)
        #expect(off == .switchOff)
        let pulse = feeder.switchedOff(at: 110)
        #expect(pulse.clickEdge == 1)
        let afterThePulse = feeder.clicked(clickEdge: 4, at: 200)
        #expect(afterThePulse)
    }

    @Test func aLineThatCannotBeSetIsAFailedPulseNotWaitedOn() {
        var feeder = FeederSchedule(delayNanoseconds: 5, widthNanoseconds: 100)
        _ = feeder.clicked(clickEdge: 7, at: 0)
        let due = feeder.due(now: 5)
        #expect(due == .switchOn)
        let failed = feeder.switchedOn(at: 6, ok: false)
        #expect(failed == FeederPulse(clickEdge: 7, onAt: 6, offAt: 0, failed: true))
        #expect(!feeder.isOn)
        #expect(feeder.nextDeadline == .max)
    }

    /// The real loop: the click's buzzer first, the feeder's line on after its delay and off
    /// after its width, one `.feeder` record; no pulse for an edge that earned no click.
    @Test func theHotLoopPulsesTheFeederAfterTheClickOnly() throws {
        let lineup = try SimulatedLineup(lineCount: 2)
        let buzzer = RecordingBuzzer()
        let feeder = RecordingBuzzer()
        let ring = EventRing<StationRecord>(capacity: 64)
        let delay: UInt64 = 30_000_000
        let width: UInt64 = 20_000_000
        let loop = try HotLoop(
            source: lineup, debouncer: Debouncer(lineCount: 2, windowNanoseconds: 5_000_000),
            handler: FirstStationRule(), player: nil, buzzer: buzzer, buzzerPulseNanoseconds: 10_000_000, records: ring,
            feeder: feeder, feederDelayNanoseconds: delay, feederPulseNanoseconds: width)
        let thread = Thread { loop.run() }
        thread.start()
        lineup.inject(line: 1, active: true)  // another station: no click, no food
        #expect(eventually { loop.edgeCount == 1 })
        let edgeAt = MonotonicClock.now()
        lineup.inject(line: 0, active: true, at: edgeAt)
        #expect(eventually { feeder.switches.withLock { $0.count } == 2 })
        loop.stop()
        #expect(eventually { thread.isFinished })
        let fed = feeder.switches.withLock { $0 }
        let buzzed = buzzer.switches.withLock { $0 }
        try #require(fed.count == 2 && buzzed.count == 2)
        #expect(fed[0].0 == true && fed[1].0 == false)
        #expect(buzzed[0].1 <= fed[0].1, "the click first")
        #expect(fed[0].1 - edgeAt >= delay)
        #expect(fed[1].1 - fed[0].1 >= width)
        var pulses: [FeederPulse] = []
        var order: [String] = []
        ring.drain {
            switch $0 {
            case .feeder(let p):
                pulses.append(p)
                order.append("feeder")
            case .buzzer: order.append("buzzer")
            default: break
            }
        }
        #expect(order == ["buzzer", "feeder"])
        try #require(pulses.count == 1)
        #expect(pulses[0].clickEdge == edgeAt)
        #expect(!pulses[0].failed)
        #expect(pulses[0].onAt >= edgeAt + delay)
        #expect(pulses[0].offAt - pulses[0].onAt >= width)
    }

    /// A loop stopped mid-pulse, or before a due pulse started, still feeds and switches the
    /// line off after its width: the dog earned it, and no dispenser's trigger is left held on.
    @Test(arguments: [UInt64(0), 200_000_000])
    func stoppingTheLoopFinishesTheDuePulse(delay: UInt64) throws {
        let lineup = try SimulatedLineup(lineCount: 1)
        let feeder = RecordingBuzzer()
        let ring = EventRing<StationRecord>(capacity: 64)
        let loop = try HotLoop(
            source: lineup, debouncer: Debouncer(lineCount: 1, windowNanoseconds: 5_000_000),
            handler: FirstStationRule(), player: nil, records: ring, feeder: feeder, feederDelayNanoseconds: delay,
            feederPulseNanoseconds: 100_000_000)
        let thread = Thread { loop.run() }
        thread.start()
        lineup.inject(line: 0, active: true)
        // Stopped once the edge is read (its pass clicks before it looks at the stop), before
        // or during the pulse.
        #expect(eventually { loop.edgeCount == 1 })
        loop.stop()
        #expect(eventually { thread.isFinished })
        let switches = feeder.switches.withLock { $0 }
        try #require(switches.count == 2)
        #expect(switches[0].0 == true && switches[1].0 == false)
        #expect(switches[1].1 - switches[0].1 >= 100_000_000)
        var pulses: [FeederPulse] = []
        ring.drain { if case .feeder(let p) = $0 { pulses.append(p) } }
        #expect(pulses.count == 1)
        #expect(pulses.first?.failed == false)
    }
}
