import Foundation
import SessionLog
import StationControl
import Testing
import TrainingEngine

@testable import StationIO
@testable import StationRuntime

/// The live session in virtual time: no process, no sleep. Each test drives the engine handler
/// as the hot loop would and drains the log feeder by hand, then reads the real log.
@Suite struct SessionRuntimeTests {
    static let second: UInt64 = 1_000_000_000

    /// Trial 1 of an automated block run to a hit: the dog holds at the target for the hold.
    /// Returns the click's edge time.
    private func hit(_ rig: Rig, trial: Int = 0) throws -> UInt64 {
        let target = try #require(rig.layouts[trial].targetStation)
        rig.advance(by: Self.second)
        rig.nose(at: target, true)
        let clicks = rig.advance(by: 3 * Self.second)
        #expect(clicks.count == 1, "a hold for the step's 2 s asks one click")
        return try #require(clicks.first)
    }

    @Test func aHitLogsItsClickAgainstItsTrialAndStationAndCommitsTheTrial() throws {
        let rig = try Rig(phase: "phase-1", step: "1", trials: 3)
        let target = try #require(rig.layouts[0].targetStation)
        #expect(rig.ready().answer == .started)
        let clickAt = try hit(rig)
        rig.nose(at: target, false)
        try rig.drain()

        let trials = try rig.log.reader.trials()
        #expect(trials.count == 1)
        let trial = try #require(trials.first)
        #expect(trial.number == 1)
        #expect(trial.outcome == .hit)
        #expect(trial.indicatedStation == target + 1)
        // Every station's sample, as laid out: what every statistic by sample rests on.
        #expect(trial.layout.map(\.station) == Array(1...5))
        #expect(trial.layout.map(\.kind) == rig.layouts[0].stations.map(\.kind))
        #expect(
            trial.layout.map(\.sample) == rig.layouts[0].stations.map { $0.sampleID.flatMap { rig.sampleLabels[$0] } })
        #expect(trial.layout.contains { $0.sample != nil }, "the target's sample at least")
        #expect(trial.layout[target].indicated == true)

        let click = try #require(try rig.events(.click).first)
        #expect(try rig.events(.click).count == 1)
        #expect(click.trialId == trial.id)
        #expect(click.station == target + 1)
        #expect(click.kernelNs == Int64(clickAt))
        #expect(click.clickOnsetLatencyNs == 40_000)
        let indication = try #require(try rig.events(.indication).first)
        #expect(indication.trialId == trial.id && indication.station == target + 1)
        #expect(rig.feeder.committed.load(ordering: .acquiring) == 1)
        #expect(rig.feeder.tally.figures.results.hits == 1)
    }

    @Test func aTrainersClickBetweenTrialsIsNotAttributedToTheNextTrial() throws {
        let rig = try Rig(phase: "phase-1", step: "1", trials: 3)
        let target = try #require(rig.layouts[0].targetStation)
        _ = rig.ready()
        _ = try hit(rig)
        rig.nose(at: target, false)
        try rig.drain()
        #expect(rig.handler.snapshot.read().activity == .interTrial)

        // The trainer clicks during the interval, at no station.
        #expect(rig.ready().answer == .startsAfterInterval)
        let trainerClickAt = rig.now
        #expect(rig.edge(line: rig.clickerLine, active: true), "the trainer's clicker clicks")
        rig.edge(line: rig.clickerLine, active: false)
        try rig.drain()
        // The interval ends and trial 2 starts (it was loaded); the feeder has seen its start.
        rig.advance(by: 20 * Self.second)
        #expect(rig.handler.snapshot.read().activity == .searching)
        try rig.drain()
        #expect(rig.feeder.searching.load(ordering: .acquiring) == 1)
        try rig.drain()

        let clicks = try rig.events(.click)
        #expect(clicks.count == 2)
        let trainers = try #require(clicks.first { $0.kernelNs == Int64(trainerClickAt) })
        #expect(trainers.trialId == nil, "between trials: no trial's click")
        #expect(trainers.station == nil)
        let press = try #require(try rig.events(.note).first { $0.detail?.contains("manual_click") == true })
        #expect(press.trialId == nil)
    }

    @Test func doubleBlindWatchersLearnNoStationNorOutcomeUntilTheLinesAreRevealed() throws {
        // Seed 7 lays a target in trial 1 (checked below).
        let rig = try Rig(phase: "phase-3", step: "1", trials: 3, blind: true)
        let target = try #require(rig.layouts[0].targetStation)
        let other = (target + 1) % rig.stations
        #expect(rig.ready().answer == .started)
        rig.advance(by: Self.second)
        // A sniff elsewhere, then the hold at the target.
        rig.nose(at: other, true)
        rig.advance(by: Self.second / 2)
        rig.nose(at: other, false)
        rig.nose(at: target, true)
        rig.advance(by: 3 * Self.second)
        rig.nose(at: target, false)
        try rig.drain()

        let objects = try rig.watchObjects()
        let kinds = Set(objects.compactMap { $0["kind"] })
        // Not vacuous: the lines that would tell are there, stripped.
        #expect(kinds.isSuperset(of: ["edge", "sniff", "indication", "click", "cue", "trial"]))
        for object in objects {
            #expect(object["station"] == nil, "\(object)")
            if object["kind"] != "cue" && object["kind"] != "fault" { #expect(object["detail"] == nil, "\(object)") }
        }
        let trialLines = objects.filter { $0["kind"] == "trial" }.compactMap { $0["line"] }
        #expect(trialLines.count == 1)
        let line = try #require(trialLines.first)
        #expect(line.contains("over (double-blind"))
        #expect(!line.contains("hit") && !line.contains("search:") && !line.contains("click"))
        // The log keeps everything.
        #expect(try rig.events(.sniff).first?.station == other + 1)
        #expect(try rig.log.reader.trials().first?.outcome == .hit)

        rig.feeder.revealLines()
        let revealed = try rig.watchObjects().filter { $0["kind"] == "revealed" }.compactMap { $0["line"] }
        #expect(revealed.count == 2)
        #expect(revealed.first?.contains("1 trial(s) in full") == true)
        let full = try #require(revealed.last)
        let names = ["A", "B", "C", "D", "E"]
        #expect(full.contains("search: \(names[other]) sniff, \(names[target]) held"))
        #expect(full.contains("indication: \(names[target])"))
        #expect(full.hasSuffix("hit"))
    }

    @Test func snapshotAndReadyAnswersFollowAnAutomatedBlock() throws {
        let rig = try Rig(phase: "phase-1", step: "1", trials: 2)
        let snapshot = rig.handler.snapshot
        #expect(snapshot.read().activity == .idle && snapshot.read().begun == 0)

        let started = rig.ready()
        #expect(started.answer == .started && started.number == 1 && started.station == -1)
        var values = snapshot.read()
        #expect(values.activity == .searching && values.begun == 1)
        #expect(values.endsAt == rig.now + rig.configuration.searchTimeout)
        #expect(!values.noseAtStation && !values.readyPending && values.blockedStation == -1)

        let target = try #require(rig.layouts[0].targetStation)
        rig.advance(by: Self.second)
        rig.nose(at: target, true)
        #expect(snapshot.read().noseAtStation, "status says holding")
        let running = rig.ready()
        #expect(running.answer == .running && running.number == 1)
        let clicks = rig.advance(by: 3 * Self.second)
        let clickAt = try #require(clicks.first)
        rig.nose(at: target, false)
        values = snapshot.read()
        #expect(values.activity == .interTrial)
        #expect(values.endsAt == clickAt + rig.configuration.interTrialInterval)

        let queued = rig.ready()
        #expect(queued.answer == .startsAfterInterval && queued.number == 2)
        #expect(snapshot.read().readyPending)
        rig.advance(by: rig.configuration.interTrialInterval)
        values = snapshot.read()
        #expect(values.activity == .searching && values.begun == 2 && !values.readyPending)

        // Trial 2 times out (a miss); after its interval the block is complete.
        rig.advance(by: rig.configuration.searchTimeout + rig.configuration.interTrialInterval + Self.second)
        #expect(snapshot.read().activity == .idle)
        let complete = rig.ready()
        #expect(complete.answer == .blockComplete)
    }

    @Test func aStartRefusedByAnActiveStationNamesItUntilTheSearchStarts() throws {
        let rig = try Rig(phase: "phase-1", step: "1", trials: 2)
        // A lid left on station C (2).
        rig.nose(at: 2, true)
        let refused = rig.ready()
        #expect(refused.answer == .refusedActive && refused.station == 2 && refused.number == 1)
        var values = rig.handler.snapshot.read()
        #expect(values.activity == .loading && values.blockedStation == 2)
        try rig.drain()
        #expect(rig.flagged() == [FlaggedStation(station: "C", fault: .activeAtStart)], "status flags station C")
        #expect(rig.feeder.sensorFaults.withLock { $0 } == [.activeAtStart: 1])
        rig.nose(at: 2, false)
        rig.advance(by: Self.second)
        let started = rig.ready()
        #expect(started.answer == .started && started.number == 1)
        values = rig.handler.snapshot.read()
        #expect(values.activity == .searching && values.blockedStation == -1)
        // The feeder saw the refusal: a fault at station C, flagged until the search started.
        try rig.drain()
        let fault = try #require(try rig.events(.fault).first)
        #expect(fault.station == 3 && fault.detail?.contains("active-at-start") == true)
        #expect(rig.feeder.refusedStarts.load(ordering: .acquiring) == 1)
        #expect(rig.flagged().isEmpty)
    }

    /// A round with the trainer's click and then the error press at the target is not correct
    /// (the project's rule): a miss, and its line shows the error press that made it one, so
    /// no one reads "miss" beside a click at the target without the reason (page_test.py's
    /// "miss; target at A; indication at A; your click at A").
    @Test func aRoundsLineShowsTheErrorPressThatMadeItAMiss() throws {
        let rig = try Rig(phase: "initial", step: "food")
        let names = ["A", "B", "C", "D", "E"]
        for round in 0..<2 {
            let target = try #require(rig.layouts[round].targetStation)
            #expect(rig.ready().answer == .started)
            rig.advance(by: Self.second)
            rig.nose(at: target, true)
            rig.advance(by: Self.second / 10)
            rig.edge(line: rig.clickerLine, active: true)
            rig.edge(line: rig.clickerLine, active: false)
            rig.advance(by: Self.second / 10)
            if round == 0 {
                rig.edge(line: rig.errorLine, active: true)
                rig.edge(line: rig.errorLine, active: false)
            }
            rig.advance(by: Self.second / 10)
            rig.nose(at: target, false)
            rig.advance(by: rig.configuration.exerciseDuration + Self.second)
        }
        try rig.drain()
        let lines = try rig.watchObjects().filter { $0["kind"] == "trial" }.compactMap { $0["line"] }
        #expect(lines.count == 2, "\(lines)")
        let first = try #require(lines.first)
        let target = names[try #require(rig.layouts[0].targetStation)]
        #expect(first.contains("trainer's click at \(target)") && first.hasSuffix("trainer's error at \(target)  miss"))
        // The round without an error press: its click at the target is a hit, and no error shows.
        let second = try #require(lines.last)
        #expect(second.hasSuffix("hit") && !second.contains("error"), "\(second)")
        #expect(try rig.log.reader.trials().map(\.outcome) == [.miss, .hit])
    }

    @Test func trainerLedRepetitionsAnswerStartedRunningThenDone() throws {
        let rig = try Rig(phase: "initial", step: "food")
        #expect(rig.layouts.count == 4, "the step's 4 repetitions")
        for repetition in 1...4 {
            let started = rig.ready()
            #expect(started.answer == .started && started.number == repetition)
            #expect(rig.handler.snapshot.read().activity == .exercise)
            #expect(rig.ready().answer == .running)
            rig.advance(by: rig.configuration.exerciseDuration + Self.second)
        }
        #expect(rig.ready().answer == .repetitionsDone)
        try rig.drain()
        #expect(try rig.log.reader.trials().count == 4)
        #expect(rig.feeder.exercisesDone.load(ordering: .acquiring) == 4)
    }
}
