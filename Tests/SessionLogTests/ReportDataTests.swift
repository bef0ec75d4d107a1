import Figures
import Foundation
import LineupBench
import ProgramFiles
import ReadingRows
import Readings
import Report
import Testing
import TrainingEngine

@testable import SessionLog

/// What `lineupctl report` counts: the same figures as `stats`, pooled without losing a trial,
/// the sample flag on a contaminated control, and faults by what failed.
@Suite struct ReportDataTests {
    @Test func aSessionPointIsItsStatsRowAndPoolingKeepsEveryTrial() throws {
        let log = try SessionLog(path: temporaryLogPath())
        var filler = LogFiller()
        filler.dogs = 2
        filler.sessionsPerDog = 10
        filler.trialsPerSession = 8
        filler.eventsPerTrial = 4
        filler.seed = 5
        try filler.fill(log)
        let reader = log.reader

        // Unpooled: each point is one session, with exactly `stats --by session`'s figures.
        let full = try reader.report()
        let bySession = Dictionary(uniqueKeysWithValues: try reader.stats(by: .session).map { ($0.groupId, $0) })
        #expect(full.dogs.count == 2 && full.trials == 160)
        for dog in full.dogs {
            #expect(dog.points.count == 10 && dog.sessionsPerPoint == 1)
            for point in dog.points {
                let id = full.sessions[point.sessions[0]].id
                #expect(point.figures == bySession[id]?.figures)
            }
        }

        // Pooled to at most 4 points: but the filler's ten sessions are on nine steps, and a point
        // never mixes steps (one line per program, step and mode), so the curve has a point per
        // step; every trial is still counted once, and each point's figures are those of its
        // sessions' trials together.
        let pooled = try reader.report(maxPoints: 4)
        let byDog = Dictionary(uniqueKeysWithValues: try reader.stats(by: .dog).map { ($0.groupId, $0) })
        for dog in pooled.dogs {
            #expect(dog.groups.count == 9)
            #expect(dog.points.map(\.sessions.count) == [2, 1, 1, 1, 1, 1, 1, 1, 1])
            #expect(
                Set(dog.points.flatMap(\.sessions)) == Set(dog.sessions) && dog.points.flatMap(\.sessions).count == 10)
            for point in dog.points {
                #expect(Set(point.sessions.map { pooled.sessions[$0].curveGroup }) == [dog.groups[point.group]])
            }
            var all = Tally()
            for point in dog.points {
                var expected = Tally()
                for index in point.sessions { expected.add(pooled.sessions[index].tally) }
                #expect(point.figures == expected.figures)
                all.add(point.tally)
            }
            let stats = try #require(byDog[dog.id])
            #expect(all.figures.results == stats.figures.results)
            #expect(all.figures.presentations == stats.figures.presentations)
            #expect(all.figures.sensitivity == stats.figures.sensitivity)
            #expect(all.figures.latency == stats.figures.latency)
        }

        // A dog's stations are `stats --by station --dog`'s.
        for dog in full.dogs {
            let stations = try reader.stats(by: .station, LogFilter(dogId: dog.id))
            for row in stations {
                #expect(dog.stations[try #require(row.station)]?.figures == row.figures, "station \(row.groupId)")
            }
        }
    }

    @Test func aLongCurveIsPooledWithinEachProgramStepAndMode() throws {
        var log = try ResearchLog()
        // Ten automated sessions of one step, then four trainer-led ones on it, then two more
        // automated: two lines. At most 6 points: 3 sessions a point in each line.
        var ids: [String] = []
        for k in 0..<16 {
            let mode: TrainingMode = (10..<14).contains(k) ? .trainerLed : .automated
            ids.append(try log.session("study", "target-scent/2", mode: mode, outcomes: [.hit, .miss]).id.logText)
        }
        let report = try log.log.reader.report(maxPoints: 6)
        let dog = try #require(report.dogs.first)
        #expect(dog.groups == ["study · target-scent/2 · automated", "study · target-scent/2 · trainer-led"])
        #expect(dog.sessionsPerPoint == 3)
        let points = dog.points.map { $0.sessions.map { report.sessions[$0].id } }
        // Automated: 12 sessions in 4 points (3 + 3 + 3 + 3); trainer-led: 4 in 2 (3 + 1). In
        // order of their first session.
        let expected: [[String]] = [
            Array(ids[0..<3]), Array(ids[3..<6]), Array(ids[6..<9]), [ids[9], ids[14], ids[15]],
            Array(ids[10..<13]), [ids[13]],
        ]
        #expect(points == expected)
        #expect(dog.points.map(\.group) == [0, 0, 0, 0, 1, 1])
        // The trainer-led sessions are on an automated step: no criterion drawn for them, and the
        // criterion window over the step counts the automated trials only.
        for i in dog.sessions {
            let s = report.sessions[i]
            if s.mode == .trainerLed {
                #expect(s.criterion == nil && s.rollingAccuracy == nil)
                #expect(
                    s.criterionNote
                        == "target-scent/2 is run automated: its trainer-led sessions do not count toward its criterion"
                )
            } else {
                #expect(s.criterion != nil && s.rollingAccuracy == 0.5)
            }
        }
    }

    @Test func aCountCriterionIsDrawnAsHowFarAlongItIs() throws {
        var log = try ResearchLog()
        // research-5-station's phase-1/1: 30 in a row, or 40 correct within at least 100 trials.
        // Three sessions of 40 trials, three in four correct: 30, 60, 90 correct of 40, 80, 120.
        let block = (0..<40).map { $0 % 4 == 3 ? TrialOutcome.miss : .hit }
        for _ in 0..<3 { try log.session("research-5-station", "phase-1/1", mode: .automated, outcomes: block) }
        let report = try log.log.reader.report()
        let sessions = report.sessions
        #expect(sessions.map(\.countCorrect) == [30, 60, 90])
        #expect(sessions.map(\.countTrials) == [40, 80, 120])
        // The engine's own progress: the lesser of correct / 40 and trials / 100.
        let count = GraduationCriterion.correctWithin(correct: 40, minTrials: 100)
        var results: [Bool] = []
        var expected: [Double] = []
        for _ in 0..<3 {
            results += block.map(\.isCorrect)
            expected.append(count.progress(results))
        }
        #expect(sessions.map(\.countProgress) == expected.map { Optional($0) })
        #expect(expected == [0.4, 0.8, 1])
        // The criterion window is 30 in a row's: the last 30 trials.
        #expect(sessions.allSatisfy { $0.rollingWindow == 30 })
    }

    @Test func aControlTheDogFindsIsFlaggedAndTheOthersAreNot() throws {
        let log = try SessionLog(path: temporaryLogPath())
        let dog = DogRecord(name: "Aino")
        let target = SampleRecord(label: "T-1", kind: .target)
        let hot = SampleRecord(label: "C-HOT", kind: .control)
        let controls = (1...3).map { SampleRecord(label: "C-\($0)", kind: .control) }
        let session = SessionRecord(dogId: dog.id, phase: "discrimination", mode: .doubleBlind)
        var records: [any AppendableRecord] = [dog, target, hot, session] + controls
        var time: Int64 = 1_000_000_000_000
        func at() -> LogTime {
            time += 30_000_000_000
            return LogTime(monoNs: time, wallNs: 1_740_819_600_000_000_000 + time)
        }
        // 40 trials on four stations: the target, C-HOT and two of the others. The dog indicates
        // C-HOT in 12 of them (and the target otherwise); C-1 once; the rest it sniffs and passes.
        for n in 0..<40 {
            let others = [controls[n % 3], controls[(n + 1) % 3]]
            let hotIndicated = n % 10 < 3
            let oneSlip = n == 7 && others.contains { $0.id == controls[0].id }
            let samples = [target, hot] + others
            let layout = samples.enumerated().map { index, sample in
                let indicated =
                    sample.id == hot.id
                    ? hotIndicated
                    : (sample.id == target.id ? !hotIndicated : (oneSlip && sample.id == controls[0].id))
                return StationSlot(
                    station: index + 1, sampleId: sample.id, kind: sample.kind,
                    seen: StationSeen(
                        visited: true, indicated: indicated, firstIndicationNs: indicated ? 3_000_000_000 : nil))
            }
            let started = at()
            records.append(
                TrialRecord(
                    sessionId: session.id, number: n + 1, layout: layout,
                    outcome: hotIndicated || oneSlip ? .falseAlert : .hit, indicatedStation: hotIndicated ? 2 : 1,
                    latencyNs: 3_000_000_000, started: started, ended: at()))
        }
        try log.append(records)
        let samples = Dictionary(uniqueKeysWithValues: try log.reader.report().samples.map { ($0.label, $0) })
        let flagged = try #require(samples["C-HOT"])
        #expect(flagged.rate?.successes == 12 && flagged.rate?.trials == 40)
        #expect(flagged.flagged)
        for label in ["C-1", "C-2", "C-3"] { #expect(samples[label]?.flagged == false, "\(label)") }
        // The only target has no others to be compared with: never flagged.
        #expect(samples["T-1"]?.flagged == false && samples["T-1"]?.restRate == nil)
        // The rates are `stats --by sample`'s counts.
        let bySample = try log.reader.stats(by: .sample)
        for row in bySample {
            let sample = try #require(samples[row.group])
            #expect(sample.tally.figures == row.figures)
        }
    }

    /// Issue 32: a sensor's fault names its station as the session's board did, the number
    /// beside it (`StationNames`, as every other reading): by the names its trials were counted
    /// under; in a session with no trial, by its settings when they place the names (no board
    /// station left unused), else by the defaults, as for any list that does not fit.
    @Test func aSensorsFaultNamesItsStationAsTheSessionsBoard() throws {
        let log = try SessionLog(path: temporaryLogPath())
        let dog = DogRecord(name: "Rex")
        // Stations 1 and 3 of a four-station board: East (2) and South (4) unused.
        let chosen = SessionRecord(
            dogId: dog.id, mode: .doubleBlind, settings: #"{"stations":"North,West","unused_stations":"East,South"}"#)
        let whole = SessionRecord(
            dogId: dog.id, mode: .doubleBlind, settings: #"{"stations":"North,East,West","unused_stations":""}"#)
        let unplaced = SessionRecord(
            dogId: dog.id, mode: .doubleBlind, settings: #"{"stations":"North,West","unused_stations":"East,South"}"#)
        let layout = [1, 3].map { StationSlot(station: $0, sampleId: nil, kind: $0 == 1 ? .target : .blank) }
        try log.append([
            dog, chosen, whole, unplaced,
            TrialRecord(
                sessionId: chosen.id, number: 1, layout: layout, outcome: .miss, started: .now(), ended: .now()),
            LoggedEvent(kind: .fault, sessionId: chosen.id, station: 3, detail: #"{"sensor":"stuck"}"#),
            LoggedEvent(kind: .fault, sessionId: chosen.id, station: 2, detail: #"{"sensor":"chatter"}"#),
            LoggedEvent(kind: .fault, sessionId: whole.id, station: 2, detail: #"{"sensor":"silent"}"#),
            LoggedEvent(kind: .fault, sessionId: unplaced.id, station: 3, detail: #"{"sensor":"stuck"}"#),
        ])
        #expect(
            try log.reader.report().faults == [
                "sensor stuck at station West (3)": 1, "sensor chatter at station East (2)": 1,
                "sensor silent at station East (2)": 1, "sensor stuck at station C (3)": 1,
            ])
    }

    @Test func faultsAreCountedByWhatFailed() throws {
        let log = try SessionLog(path: temporaryLogPath())
        var filler = LogFiller()
        filler.dogs = 1
        filler.sessionsPerDog = 2
        filler.trialsPerSession = 3
        try filler.fill(log)
        let sessionId = try #require(try log.reader.sessions().first?.id)
        try log.append([
            LoggedEvent(
                kind: .fault, sessionId: UUID(uuidString: sessionId),
                detail: #"{"fault":"log-events-dropped","dropped_events":3}"#),
            LoggedEvent(kind: .fault, sessionId: UUID(uuidString: sessionId), detail: #"{"click_failed":"xrun"}"#),
            LoggedEvent(kind: .fault, detail: #"{"fault":"log-events-dropped","dropped_events":1}"#),
            // A flagged station: its sensor's fault names it.
            LoggedEvent(
                kind: .fault, sessionId: UUID(uuidString: sessionId), station: 2, detail: #"{"sensor":"stuck"}"#),
        ])
        let report = try log.reader.report()
        #expect(report.faults == ["log-events-dropped": 2, "click-failed": 1, "sensor stuck at station B (2)": 1])
        #expect(report.faultsOutsideSessions == 1)
        #expect(report.sessions.first { $0.id == sessionId }?.faults == 3)
        // A chosen dog leaves out what happened outside its sessions.
        let dogId = try #require(report.dogs.first?.id)
        let forDog = try log.reader.report(LogFilter(dogId: dogId))
        #expect(forDog.faults == ["log-events-dropped": 1, "click-failed": 1, "sensor stuck at station B (2)": 1])
        #expect(forDog.faultsOutsideSessions == 0)
    }

    @Test func theRollingAccuracyIsTheCriterionsWindowAcrossSessions() throws {
        let log = try SessionLog(path: temporaryLogPath())
        let dog = DogRecord(name: "Aino")
        try log.append([dog])
        let study = try #require(try Program.builtin(named: "study"))
        let programId = try log.logProgram(ProgramRecord(name: "study", content: study.text))
        // target-scent/2: 90 % of the last 20. Session 1: 10 hits then 5 misses; session 2: 10 hits.
        var sessionIds: [String] = []
        for outcomes in [
            Array(repeating: TrialOutcome.hit, count: 10) + Array(repeating: .miss, count: 5),
            Array(repeating: TrialOutcome.hit, count: 10),
        ] {
            let session = SessionRecord(
                dogId: dog.id, programId: programId, phase: "target-scent", step: "2", mode: .automated)
            try log.append([session])
            for (i, outcome) in outcomes.enumerated() { try log.append([trial(session, i + 1, outcome: outcome)]) }
            sessionIds.append(session.id.uuidString.lowercased())
        }
        let report = try log.reader.report()
        let rolling = sessionIds.map { id in report.sessions.first { $0.id == id }?.rollingAccuracy }
        // After session 1: 10 of 15; after session 2: trials 6 to 25, 15 of 20.
        #expect(rolling == [10.0 / 15.0, 0.75])
        #expect(report.sessions.allSatisfy { $0.rollingWindow == 20 })
    }
}
