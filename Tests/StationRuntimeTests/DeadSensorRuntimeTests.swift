import SessionLog
import StationControl
import Testing
import TrainingEngine

@testable import StationRuntime

/// A dead sensor in virtual time: station C never goes active whatever the dog does. The
/// engine reports it silent once, at the end of the 20th trial in which the dog searched; the
/// log attributes the fault to that trial. (`lineupd --simulate --fault dead:C` runs this
/// for real in DeadSensorTests: its journal line.)
@Suite struct DeadSensorRuntimeTests {
    static let second: UInt64 = 1_000_000_000

    @Test func aDeadSensorIsReportedSilentAtTheEndOfTheTwentiethSearchedTrial() throws {
        let rig = try Rig(phase: "phase-3", step: "1", trials: 24)
        #expect(rig.configuration.silentAfterTrials == 20)
        // Trials 4 and 9: the dog searches nowhere (it stays away): they do not count.
        let unsearched: Set<Int> = [4, 9]
        for trial in 1...24 {
            #expect(rig.ready().answer == .started, "trial \(trial)")
            if !unsearched.contains(trial) {
                // Sniffs at every station but C, which the dead sensor never reports.
                for station in 0..<rig.stations where station != 2 {
                    rig.advance(by: Self.second / 2)
                    rig.nose(at: station, true)
                    rig.advance(by: Self.second / 2)
                    rig.nose(at: station, false)
                }
            }
            rig.advance(by: rig.configuration.searchTimeout + rig.configuration.interTrialInterval)
            try rig.drain()
            #expect(rig.feeder.committed.load(ordering: .acquiring) == trial)
            // Flagged from the 20th searched trial on, not before.
            let flagged = rig.flagged()
            if trial < 22 {
                #expect(flagged.isEmpty, "trial \(trial): \(flagged)")
            } else {
                #expect(flagged == [FlaggedStation(station: "C", fault: .silent)], "trial \(trial)")
            }
        }
        let silent = try rig.events(.fault)
        #expect(silent.count == 1, "\(silent)")
        let fault = try #require(silent.first)
        #expect(fault.station == 3)
        #expect(fault.detail == #"{"sensor":"silent"}"#)
        let twentieth = try #require(try rig.log.reader.trials().first { $0.number == 22 })
        #expect(fault.trialId == twentieth.id, "the 20th searched trial (22nd, after 2 unsearched)")
        #expect(rig.feeder.sensorFaults.withLock { $0 } == [.silent: 1])
    }
}
