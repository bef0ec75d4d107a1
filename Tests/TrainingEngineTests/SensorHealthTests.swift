import Testing

@testable import TrainingEngine

/// Sensor health, decided by the engine from debounced edges and time: a station active at
/// the start refuses it, a station active far longer than any indication is stuck (no more
/// holds, the trial marked), and a station never active while the dog searches is silent.
@Suite struct SensorHealthTests {
    @Test func aStationActiveAtTheStartRefusesItUntilClear() {
        var d = Driver(automated(stations: 3))
        d.take(d.machine.stationEdge(station: 2, present: true, at: 0))  // a fallen lid
        d.take(d.machine.load(layout: TrialLayout(kinds: [.target, .blank, .blank]), at: sec))
        d.take(d.machine.readyButton(at: sec))
        #expect(d.machine.activity == .loading)
        #expect(d.records.contains(.sensorFault(.activeAtStart, station: 2, at: sec)))
        #expect(!d.log.contains(.cue(.trialStart, at: sec)))
        d.edge(2, false, at: 2 * sec)
        d.take(d.machine.readyButton(at: 3 * sec))
        #expect(d.machine.activity == .searching)
        #expect(d.log.contains(.cue(.trialStart, at: 3 * sec)))
    }

    @Test func aStationActiveFarLongerThanAHoldIsStuck() {
        var d = Driver(automated(stations: 3))  // hold 2 s: stuck after 20 s
        startTrial(&d, kinds: [.target, .blank, .blank])
        d.edge(2, true, at: sec)  // a beam blocked during the search
        d.advance(to: 21 * sec)
        #expect(d.records.contains(.sensorFault(.stuck, station: 2, at: 21 * sec)))
        #expect(d.machine.stuckMask == 0b100)
        // Its edges are no longer the dog's: chatter on it makes no visit, hold or click.
        d.edge(2, true, at: 22 * sec)
        // The dog finds the target; the trial is marked.
        d.edge(0, true, at: 23 * sec)
        d.advance(to: 25 * sec)
        #expect(d.outcomes == [.falseAlert])  // the blocked beam completed a hold before it was known stuck
        #expect(d.machine.lastTrial?.sensorFaultMask == 0b100)
        // Cleared: trusted again.
        d.edge(2, false, at: 26 * sec)
        #expect(d.records.contains(.sensorRecovered(station: 2, at: 26 * sec)))
        #expect(d.machine.stuckMask == 0)
    }

    @Test func aStuckStationNeverCompletesAHold() {
        var d = Driver(automated(stations: 3))
        startTrial(&d, kinds: [.blank, .blank, .target])
        d.edge(2, true, at: 0)
        // Stuck from the start of the search on the target: a hold is complete at 2 s and
        // clicks (nothing can know yet); the next trial cannot start while it stays active.
        d.advance(to: 40 * sec)
        #expect(d.outcomes == [.hit])
        d.take(d.machine.load(layout: TrialLayout(kinds: [.target, .blank, .blank]), at: 41 * sec))
        d.take(d.machine.readyButton(at: 41 * sec))
        #expect(d.records.contains(.sensorFault(.activeAtStart, station: 2, at: 41 * sec)))
        #expect(d.machine.activity == .loading)
    }

    @Test func aStationNeverActiveWhileTheDogSearchesIsSilent() {
        var config = automated(stations: 3)
        config.silentAfterTrials = 3
        var d = Driver(config)
        var t: Nanoseconds = 0
        for _ in 0..<4 {
            startTrial(&d, kinds: [.target, .blank, .blank], at: t)
            d.edge(0, true, at: t + sec)
            d.edge(0, false, at: t + 4 * sec)
            d.advance(to: t + 20 * sec)
            t += 20 * sec
        }
        let silent = d.records.compactMap { r -> Int? in
            if case .sensorFault(.silent, let station, _) = r { return station }
            return nil
        }
        // Stations 1 and 2, one per trial end, each once.
        #expect(silent == [1, 2])
        #expect(d.machine.silentMask == 0b110)
        d.edge(1, true, at: t + sec)
        #expect(d.machine.silentMask == 0b100)
    }

    @Test func stuckDetectionCanBeTurnedOff() {
        var config = automated(stations: 2)
        config.stuckAfter = 0
        var d = Driver(config)
        startTrial(&d, kinds: [.blank, .target])
        d.edge(0, true, at: 0)
        d.advance(to: 29 * sec)
        #expect(d.machine.stuckMask == 0)
    }

    /// A storm on station 0 while the dog holds at the target (station 2): debounced edges
    /// every 5 ms, as a 1 ms toggle comes through a 5 ms debouncer.
    @Test func aStormElsewhereDoesNotTakeTheHoldFromTheTarget() {
        var d = Driver(automated(stations: 3))
        startTrial(&d, kinds: [.control, .blank, .target])
        d.edge(2, true, at: sec)  // the dog arrives at the target
        var t = sec + 500 * ms
        var level = false
        for _ in 0..<60 {  // 300 ms of storm from 1.5 s
            level.toggle()
            d.edge(0, level, at: t)
            t += 5 * ms
        }
        if level { d.edge(0, false, at: t) }  // the storm ends with the line at rest
        let flagged = d.records.compactMap { r -> Nanoseconds? in
            if case .sensorFault(.chatter, 0, let at) = r { return at }
            return nil
        }
        // Flagged once, at the 20th quick edge (the first opens the run).
        #expect(flagged == [sec + 500 * ms + 19 * 5 * ms])
        #expect(d.machine.chatterMask == 0b1)
        d.advance(to: 4 * sec)
        // The hold at the target counts from the dog's arrival: clicked at 3 s, a hit, marked.
        #expect(d.clicks == [.click(station: 2, triggeredAt: 3 * sec, automatic: true)])
        #expect(d.outcomes == [.hit])
        #expect(d.machine.lastTrial?.sensorFaultMask == 0b1)
        // Quiet for longer than chatterQuiet: its next edge is trusted again.
        d.edge(2, false, at: 5 * sec)
        d.edge(0, true, at: 6 * sec)
        #expect(d.records.contains(.sensorRecovered(station: 0, at: 6 * sec)))
        #expect(d.machine.chatterMask == 0)
    }

    @Test func aNoseThatComesAndGoesIsNoStorm() {
        // Edges 15 ms apart (beyond chatterGap) for a whole second: a restless nose, not a storm.
        var d = Driver(automated(stations: 3))
        startTrial(&d, kinds: [.control, .blank, .target])
        var level = false
        for k in 0..<60 {
            level.toggle()
            d.edge(0, level, at: sec + Nanoseconds(k) * 15 * ms)
        }
        #expect(d.machine.chatterMask == 0)
        #expect(!d.records.contains { if case .sensorFault(.chatter, _, _) = $0 { true } else { false } })
    }
}
