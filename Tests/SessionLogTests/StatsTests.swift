import Figures
import Foundation
import LineupBench
import ProgramFiles
import ReadingRows
import Readings
import Testing
import TrainingEngine

@testable import SessionLog

/// A small lineup worked out by hand (see each trial's comment).
struct HandFixture {
    let log: SessionLog
    let dog = DogRecord(name: "Aino")
    let targetA = SampleRecord(label: "T-A", kind: .target)
    let targetB = SampleRecord(label: "T-B", kind: .target)
    let controlA = SampleRecord(label: "C-A", kind: .control, facts: SampleFacts(source: "clinic, with \"quotes\""))
    let controlB = SampleRecord(label: "C-B", kind: .control)
    let session: SessionRecord
    var trials: [TrialRecord] = []

    init() throws {
        log = try SessionLog(path: temporaryLogPath())
        session = SessionRecord(
            dogId: dog.id, phase: "3 discrimination", phaseSteps: 4, step: "step 2", exercise: "exercise 1",
            mode: .doubleBlind)
        try log.append([dog, targetA, targetB, controlA, controlB, session])
        var time: Int64 = 1_000_000_000_000
        func at(_ seconds: Int64) -> LogTime {
            time += seconds * 1_000_000_000
            return LogTime(monoNs: time, wallNs: 1_740_819_600_000_000_000 + time)
        }
        // `seen`: "-" not visited, "v" visited (one sniff, 0.5 s), "i@S" indicated first S s into the search.
        func slot(_ station: Int, _ sample: SampleRecord?, _ seen: String) -> StationSlot {
            let indicated = seen.hasPrefix("i@")
            let first = indicated ? Int64(seen.dropFirst(2))! * 1_000_000_000 : nil
            return StationSlot(
                station: station, sampleId: sample?.id, kind: sample?.kind ?? .blank,
                seen: StationSeen(
                    visited: seen != "-", indicated: indicated, firstIndicationNs: first,
                    sniffs: seen == "v" ? 1 : 0, dwellNs: seen == "-" ? 0 : (indicated ? 2_000_000_000 : 500_000_000)))
        }
        // 1: hit at station 1 after 2 s; C-A sniffed; the blank not reached.
        let s1 = at(10)
        trials.append(
            TrialRecord(
                sessionId: session.id, number: 1,
                layout: [slot(1, targetA, "i@2"), slot(2, controlA, "v"), slot(3, nil, "-")],
                outcome: .hit, indicatedStation: 1, latencyNs: 2_000_000_000, started: s1, ended: at(2)))
        // 2: false alert at station 3 (C-B) after 4 s; the target at 2 was sniffed and missed.
        let s2 = at(10)
        trials.append(
            TrialRecord(
                sessionId: session.id, number: 2,
                layout: [slot(1, controlA, "v"), slot(2, targetA, "v"), slot(3, controlB, "i@4")],
                outcome: .falseAlert, indicatedStation: 3, latencyNs: 4_000_000_000, started: s2, ended: at(4)))
        // 3: first logged as a hit at station 3, then corrected to a miss (visits kept, no indication).
        let s3 = at(10)
        let wrong = TrialRecord(
            sessionId: session.id, number: 3,
            layout: [slot(1, controlA, "v"), slot(2, nil, "-"), slot(3, targetB, "i@9")],
            outcome: .hit, indicatedStation: 3, latencyNs: 9_000_000_000, started: s3, ended: at(30))
        trials.append(wrong)
        var corrected = wrong
        corrected.id = UUID()
        corrected.outcome = .miss
        corrected.indicatedStation = nil
        corrected.latencyNs = nil
        corrected.corrects = wrong.id
        corrected.reason = "video review: no hold"
        corrected.layout[2].seen = StationSeen(visited: true, indicated: false, dwellNs: 2_000_000_000)
        trials.append(corrected)
        // 4: no target, nothing indicated; C-B never reached (not examined), the blank passed.
        let s4 = at(10)
        trials.append(
            TrialRecord(
                sessionId: session.id, number: 4,
                layout: [slot(1, controlA, "v"), slot(2, controlB, "-"), slot(3, nil, "v")],
                outcome: .correctRejection, started: s4, ended: at(60)))
        // 5: aborted by the trainer: counted, never scored.
        let s5 = at(10)
        trials.append(
            TrialRecord(
                sessionId: session.id, number: 5,
                layout: [slot(1, targetB, "v"), slot(2, controlB, "i@1"), slot(3, nil, "-")],
                outcome: .aborted, indicatedStation: 2, latencyNs: 1_000_000_000, started: s5, ended: at(5),
                reason: "dog distracted"))
        let writer = log.makeWriter()
        defer { writer.close() }
        for trial in trials {
            writer.submit(
                LoggedEvent(
                    kind: .sniff, sessionId: session.id, trialId: trial.id, station: 1, time: trial.started,
                    durationNs: 300_000_000, detail: #"{"note":"a, b"}"#))
            try writer.commitTrial(trial)
        }
        try writer.commit([
            SessionNote(sessionId: session.id, kind: .improvement, text: "Use cheese, not kibble"),
            SessionNote(sessionId: session.id, kind: .comment, text: "Windy day"),
            MilestoneRecord(dogId: dog.id, sessionId: session.id, phase: "3 discrimination", step: "step 1"),
            SampleNote(sampleId: controlA.id, text: "lid cracked"),
        ])
    }
}

func expectWilson(_ p: Proportion, _ successes: Int, _ trials: Int, _ lower: Double, _ upper: Double) {
    #expect(p.successes == successes)
    #expect(p.trials == trials)
    #expect(abs((p.lower ?? -1) - lower) < 0.0005, "lower \(String(describing: p.lower)) vs \(lower)")
    #expect(abs((p.upper ?? -1) - upper) < 0.0005, "upper \(String(describing: p.upper)) vs \(upper)")
}

@Suite struct StatsTests {
    @Test func byDogMatchesTheHandCount() throws {
        let fixture = try HandFixture()
        let rows = try fixture.log.reader.stats(by: .dog)
        let row = try #require(rows.first)
        #expect(rows.count == 1)
        #expect(row.group == "Aino")
        // Trials 1-5 after the correction: hit, false alert, miss, correct rejection, aborted.
        #expect(row.results.trials == 5)
        #expect(row.results.hits == 1)
        #expect(row.results.falseAlerts == 1)
        #expect(row.results.misses == 1)
        #expect(row.results.correctRejections == 1)
        #expect(row.results.aborted == 1)
        // Targets presented in scored trials: T1 st1 (found), T2 st2, T3 st3 -> 1/3.
        // Wilson 95 % for 1/3: 0.0615 to 0.7923.
        expectWilson(row.sensitivity, 1, 3, 0.0615, 0.7923)
        // Controls examined: T1 st2, T2 st1, T2 st3 (alerted), T3 st1, T4 st1 -> 4/5; T4 st2
        // was never reached (not examined). Wilson 95 % for 4/5: 0.3755 to 0.9638.
        expectWilson(row.specificity, 4, 5, 0.3755, 0.9638)
        let f = row.figures
        #expect(f.presentations.notExamined == 1)
        #expect(f.presentations.blankPassed == 1)
        #expect(f.presentations.blankNotExamined == 2)
        // PPV: indications at T1 st1 (target) and T2 st3 (control) -> 1/2.
        expectWilson(f.positivePredictiveValue, 1, 2, 0.0945, 0.9055)
        // One non-target indicated over 4 scored trials.
        #expect(f.falseAlertsPerTrial == 0.25)
        // d′ with the log-linear correction: H = 1.5/4, F = 1.5/6 (scipy: 0.355850, c 0.496565).
        #expect(abs((f.dPrime ?? 0) - 0.355850) < 1e-5)
        #expect(abs((f.criterion ?? 0) - 0.496565) < 1e-5)
        // Latencies of scored trials: 2 s and 4 s (the corrected trial has none).
        #expect(f.latency == Spread(milliseconds: [2_000, 4_000]))
        #expect(f.latency?.median == 3_000)
        #expect(f.latency?.q1 == 2_500)
        #expect(f.latency?.q3 == 3_500)
        #expect(f.trialsWithoutStationData == 0)
        #expect(row.sessionsWithoutStationData.isEmpty)
    }

    @Test func bySampleAndStation() throws {
        let fixture = try HandFixture()
        let bySample = Dictionary(
            uniqueKeysWithValues: try fixture.log.reader.stats(by: .sample).map { ($0.group, $0) })
        // C-A: T1, T2, T3, T4 (scored), never indicated -> 4/4; also in no aborted trial.
        #expect(bySample["C-A"]?.specificity.successes == 4)
        #expect(bySample["C-A"]?.specificity.trials == 4)
        // C-B: T2 (indicated), T4 (not reached) -> 0/1; the false alert's 4 s is its latency.
        #expect(bySample["C-B"]?.specificity.successes == 0)
        #expect(bySample["C-B"]?.specificity.trials == 1)
        #expect(bySample["C-B"]?.figures.presentations.notExamined == 1)
        #expect(bySample["C-B"]?.figures.latency?.median == 4_000)
        #expect(bySample["C-B"]?.results.aborted == 1)
        // T-A: found in T1, not in T2 -> 1/2. T-B: missed in T3 -> 0/1 (T5 aborted).
        #expect(bySample["T-A"]?.sensitivity.successes == 1)
        #expect(bySample["T-A"]?.sensitivity.trials == 2)
        #expect(bySample["T-A"]?.figures.latency?.median == 2_000)
        #expect(bySample["T-B"]?.sensitivity.successes == 0)
        #expect(bySample["T-B"]?.sensitivity.trials == 1)
        expectWilson(try #require(bySample["T-B"]).sensitivity, 0, 1, 0, 0.7935)

        let byStation = Dictionary(
            uniqueKeysWithValues: try fixture.log.reader.stats(by: .station).map { ($0.groupId, $0) })
        // Station 1: target in T1 (found); controls in T2, T3, T4 (all passed).
        #expect(byStation["1:A"]?.sensitivity.successes == 1)
        #expect(byStation["1:A"]?.sensitivity.trials == 1)
        #expect(byStation["1:A"]?.specificity.successes == 3)
        #expect(byStation["1:A"]?.specificity.trials == 3)
        // Station 3: target T-B in T3 (missed); control C-B in T2 (alerted).
        #expect(byStation["3:C"]?.sensitivity.successes == 0)
        #expect(byStation["3:C"]?.specificity.successes == 0)
        #expect(byStation["3:C"]?.specificity.trials == 1)
        #expect(byStation["1:A"]?.results.trials == 5)
    }

    @Test func sessionDetailsAndProgress() throws {
        let fixture = try HandFixture()
        let reader = fixture.log.reader
        let details = try reader.session(id: fixture.session.id.uuidString.lowercased())
        #expect(details.step == "step 2")
        #expect(details.exercise == "exercise 1")
        #expect(details.mode == .doubleBlind)
        #expect(details.improvementSuggestions == ["Use cheese, not kibble"])
        #expect(details.comments == ["Windy day"])
        #expect(details.trials.map(\.number) == [1, 2, 3, 4, 5])
        #expect(details.trials[2].outcome == .miss)
        #expect(details.trials[2].corrects == fixture.trials[2].id.uuidString.lowercased())
        #expect(details.correct.successes == 2)
        #expect(details.correct.trials == 4)
        #expect(Set(details.samples.compactMap(\.label)) == ["T-A", "T-B", "C-A", "C-B"])
        // One implementation: the session's figures are `stats --by session`'s, and each
        // sample's are `stats --by sample`'s for this session.
        let bySession = try #require(try reader.stats(by: .session).first)
        #expect(details.figures == bySession.figures)
        let sampleFigures = Dictionary(
            uniqueKeysWithValues: try reader.stats(by: .sample, LogFilter(sessionId: details.id)).map {
                ($0.group, $0.figures)
            })
        for sample in details.samples where sample.label != nil {
            #expect(sample.figures == sampleFigures[sample.label!], "\(sample.label!)")
        }
        // C-B: indicated in trial 2, not reached in 4 -> presented in 2 scored trials, indicated in 1.
        let cB = try #require(details.samples.first { $0.label == "C-B" })
        #expect(cB.presented == 2)
        #expect(cB.indicated == 1)

        let progress = try reader.progress(dogId: fixture.dog.id.uuidString.lowercased())
        let phase = try #require(progress.first)
        #expect(progress.count == 1)
        #expect(phase.stepsPassed == 1)
        #expect(phase.phaseSteps == 4)
        #expect(phase.progressPercent == 25)
        #expect(phase.graduated == nil)
        #expect(phase.trials == 4)
        #expect(phase.recentCorrectPercent == 50)

        // Sample usage counts each trial once: the correction repeats trial 3's layout.
        let usage = Dictionary(uniqueKeysWithValues: try reader.samples().map { ($0.label, $0.uses) })
        #expect(usage == ["C-A": 4, "C-B": 3, "T-A": 2, "T-B": 2])
        #expect(try reader.sample(id: fixture.controlA.id.uuidString.lowercased()).notes.map(\.text) == ["lid cracked"])
    }

    @Test func aGraduatedPhaseIsComplete() throws {
        let fixture = try HandFixture()
        try fixture.log.append([
            MilestoneRecord(dogId: fixture.dog.id, phase: "3 discrimination", criterion: "30 consecutive correct")
        ])
        let phase = try #require(try fixture.log.reader.progress(dogId: fixture.dog.id.uuidString.lowercased()).first)
        #expect(phase.progressPercent == 100)
        #expect(phase.graduated != nil)
        #expect(phase.criterion == "30 consecutive correct")
    }

    @Test func statsOverAGeneratedLogAddUp() throws {
        let log = try SessionLog(path: temporaryLogPath())
        var filler = LogFiller()
        filler.dogs = 2
        filler.sessionsPerDog = 3
        filler.trialsPerSession = 20
        filler.eventsPerTrial = 4
        let summary = try filler.fill(log)
        let byDog = try log.reader.stats(by: .dog)
        #expect(byDog.map(\.results.trials).reduce(0, +) == summary.trials)
        let bySession = try log.reader.stats(by: .session)
        #expect(bySession.count == summary.sessions)
        #expect(bySession.map(\.results.hits).reduce(0, +) == byDog.map(\.results.hits).reduce(0, +))
    }
}

@Suite struct GraduationTests {
    /// A program of one phase: step a with a criterion (3 in a row), step b the same, step c
    /// trainer-led without one (its exercise's 2 rounds make it done).
    func program() -> Program {
        func automated(_ id: String) -> Step {
            Step(
                id: id, title: "Step \(id)", mode: .automated, lineup: LineupSetup(stations: 2, blanks: 1),
                criterion: .consecutiveCorrect(n: 3), exercises: [Exercise(id: "1", title: "Block", instruction: "")])
        }
        let c = Step(
            id: "c", title: "Step c", mode: .trainerLed, lineup: LineupSetup(stations: 1),
            exercises: [Exercise(id: "1", title: "E", instruction: "Click it.", repeats: 2)])
        return Program(
            name: "p", title: "P",
            phases: [Phase(id: "one", title: "One", steps: [automated("a"), automated("b"), c])],
            source: "test")
    }

    @Test func aStepIsPassedOnceAndThePhaseOnlyWhenEveryStepIs() throws {
        let log = try SessionLog(path: temporaryLogPath())
        let dog = DogRecord(name: "Aino")
        try log.append([dog])
        let p = program()
        let programId = try log.logProgram(ProgramRecord(name: "p", content: "p v1"))
        func session(step: String, outcomes: [TrialOutcome], mode: TrainingMode = .automated) throws -> UUID {
            let s = SessionRecord(
                dogId: dog.id, programId: programId, phase: "one", step: step, exercise: "1", mode: mode)
            try log.append([s])
            for (i, o) in outcomes.enumerated() {
                var t = trial(s, i + 1, outcome: o)
                t.sessionId = s.id
                try log.append([t])
            }
            return s.id
        }
        func graduate(_ id: UUID, _ step: String) throws -> [MilestoneRecord] {
            try log.recordGraduation(dogId: dog.id, sessionId: id, program: p, phase: "one", step: step)
        }
        // Two correct, then a miss: not yet.
        let first = try session(step: "a", outcomes: [.hit, .correctRejection, .miss])
        #expect(try graduate(first, "a").isEmpty)
        // Across sessions: three in a row (an aborted trial is not scored) passes step a only.
        let second = try session(step: "a", outcomes: [.hit, .aborted, .hit, .correctRejection])
        let passed = try graduate(second, "a")
        #expect(passed.map(\.step) == ["a"])
        #expect(passed.first?.criterion?.contains("met after 6 scored trials") == true)
        #expect(try graduate(second, "a").isEmpty)
        // Step c has no criterion: one round (and an aborted one) is not its two.
        let rounds = try session(step: "c", outcomes: [.miss, .aborted], mode: .trainerLed)
        #expect(try graduate(rounds, "c").isEmpty)
        var progress = try log.reader.progress(dogId: dog.id.uuidString.lowercased(), program: p)
        #expect(progress.first?.steps.map(\.percent) == [100, 0, 0])
        #expect(progress.first?.progressPercent == 33)
        // Rounds done are not rounds done correctly: a miss and a false alert (the exercise's 2
        // rounds) do not pass it (they did before: "each exercise done").
        let more = try session(step: "c", outcomes: [.falseAlert], mode: .trainerLed)
        #expect(try graduate(more, "c").isEmpty)
        progress = try log.reader.progress(dogId: dog.id.uuidString.lowercased(), program: p)
        let stepC = try #require(progress.first?.steps.last)
        #expect(stepC.percent == 0)
        #expect(stepC.exercises.first?.done == 2)
        #expect(stepC.exercises.first?.inARow == 0)
        #expect(stepC.verdict.met == false)
        #expect(stepC.verdict.evidence == "exercise 1: 0 of 2 correct in a row (2 rounds done, 0 correct)")
        // One correct round: half way; two in a row: the exercise is done, and so is the step.
        let hit = try session(step: "c", outcomes: [.hit], mode: .trainerLed)
        #expect(try graduate(hit, "c").isEmpty)
        progress = try log.reader.progress(dogId: dog.id.uuidString.lowercased(), program: p)
        #expect(progress.first?.steps.last?.percent == 50)
        let again = try session(step: "c", outcomes: [.hit], mode: .trainerLed)
        let c = try graduate(again, "c")
        #expect(c.map(\.step) == ["c"])
        #expect(
            c.first?.criterion
                == "each exercise done correctly (exercise 1: 2 correct rounds in a row): exercise 1: 2 correct in a row reached (4 rounds done, 2 correct)"
        )
        // Step b met: it and the phase.
        let third = try session(step: "b", outcomes: [.hit, .hit, .hit])
        #expect(try graduate(third, "b").map(\.step) == ["b", nil])
        progress = try log.reader.progress(dogId: dog.id.uuidString.lowercased(), program: p)
        #expect(progress.first?.stepsPassed == 3)
        #expect(progress.first?.progressPercent == 100)
        #expect(progress.first?.graduated != nil)
        #expect(progress.first?.steps.allSatisfy { $0.passed != nil } == true)
    }

    @Test func everyPhaseOfTheProgramIsShownThoseNotStartedAtZero() throws {
        let log = try SessionLog(path: temporaryLogPath())
        let dog = DogRecord(name: "Bo")
        try log.append([dog])
        let study = try Program.builtin(named: "study")
        let progress = try log.reader.progress(dogId: dog.id.uuidString.lowercased(), program: study)
        #expect(progress.map(\.phase) == ["indicate", "target-scent", "discrimination"])
        #expect(progress.allSatisfy { $0.progressPercent == 0 && $0.steps.count == 2 })
    }
}
