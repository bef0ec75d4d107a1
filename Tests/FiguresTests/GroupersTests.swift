import Figures
import Foundation
import Testing
import TrainingEngine

/// The groupers and counters from hand-built trials: what `stats`, `stats --guesses` and the
/// report count, with no log beneath them.
@Suite struct GroupersTests {
    /// Two stations: target `t1` at 1, control `c1` at 2, every station visited.
    func trial(_ outcome: TrialOutcome, targetIndicated: Bool, controlIndicated: Bool) -> ScoredTrial {
        ScoredTrial(
            outcome: outcome, latencyNs: targetIndicated || controlIndicated ? 2_000_000_000 : nil,
            stations: [
                StationObservation(
                    station: 1, kind: .target, sample: "t1",
                    seen: StationSeen(
                        visited: true, indicated: targetIndicated,
                        firstIndicationNs: targetIndicated ? 2_000_000_000 : nil)),
                StationObservation(
                    station: 2, kind: .control, sample: "c1",
                    seen: StationSeen(
                        visited: true, indicated: controlIndicated,
                        firstIndicationNs: controlIndicated ? 2_000_000_000 : nil)),
            ])
    }

    let rex = TrialContext(dogId: "d-rex", dog: "Rex", sessionId: "s-rex", sessionWallNs: 2_000)
    let ada = TrialContext(dogId: "d-ada", dog: "Ada", sessionId: "s-ada", sessionWallNs: 1_000)

    func grouped(_ grouping: StatsGrouping) -> [StatsRow] {
        var grouper = StatsGrouper(by: grouping, sampleLabels: ["t1": "T-1", "c1": "C-1"])
        grouper.add(trial(.hit, targetIndicated: true, controlIndicated: false), rex)
        grouper.add(trial(.falseAlert, targetIndicated: false, controlIndicated: true), rex)
        grouper.add(trial(.aborted, targetIndicated: false, controlIndicated: false), rex)
        grouper.add(trial(.hit, targetIndicated: true, controlIndicated: false), ada)
        return grouper.rows()
    }

    @Test func byDogEachTrialOnceInNameOrder() {
        let rows = grouped(.dog)
        #expect(rows.map(\.group) == ["Ada", "Rex"])
        #expect(rows.map(\.groupId) == ["d-ada", "d-rex"])
        let r = rows[1].figures
        #expect(r.results.trials == 3)
        #expect(r.results.aborted == 1)
        #expect((r.results.hits, r.results.falseAlerts) == (1, 1))
        #expect((r.sensitivity.successes, r.sensitivity.trials) == (1, 2))
        #expect((r.specificity.successes, r.specificity.trials) == (1, 2))
        #expect(rows[1].started == nil)
    }

    @Test func bySessionOldestFirst() {
        let rows = grouped(.session)
        #expect(rows.map(\.groupId) == ["s-ada", "s-rex"])
        #expect(rows.map(\.group) == ["Ada s-ada", "Rex s-rex"])
        #expect(rows.allSatisfy { $0.started != nil })
    }

    @Test func bySampleAndStationEachStationItsOwnRow() {
        let samples = grouped(.sample)
        #expect(samples.map(\.group) == ["C-1", "T-1"])
        #expect(samples.map(\.kind) == [.control, .target])
        // The control: one false alert of three examined; the target: two hits of three.
        #expect(samples[0].figures.presentations.falseAlerts == 1)
        #expect(samples[0].figures.presentations.correctRejections == 2)
        #expect((samples[1].sensitivity.successes, samples[1].sensitivity.trials) == (2, 3))
        // Alone of its kind: no other sample to be judged against.
        #expect(samples.allSatisfy { $0.sampleFlag == nil })
        let stations = grouped(.station)
        // Sessions that logged no names: the board's default names, the number beside them.
        #expect(stations.map(\.group) == ["station A", "station B"])
        #expect(stations.map(\.groupId) == ["1:A", "2:B"])
        #expect(stations.map(\.station) == [NamedStation(number: 1, name: "A"), NamedStation(number: 2, name: "B")])
        #expect(stations.map { $0.figures.results.trials } == [4, 4])
    }

    /// Issue 32: `stats --by station` named stations by number. Each session's stations are
    /// named as it logged them (`StationNames`), the number kept beside the name.
    @Test func byStationEachStationByTheNameItsSessionLogged() throws {
        var grouper = StatsGrouper(by: .station)
        var named = rex
        named.sessionSettings = #"{"stations":"North,East"}"#
        grouper.add(trial(.hit, targetIndicated: true, controlIndicated: false), named)
        grouper.add(trial(.falseAlert, targetIndicated: false, controlIndicated: true), named)
        // A session logged before names were kept: the defaults, a row of their own.
        grouper.add(trial(.hit, targetIndicated: true, controlIndicated: false), ada)
        let rows = grouper.rows()
        #expect(rows.map(\.group) == ["station A", "station North", "station B", "station East"])
        #expect(rows.map(\.groupId) == ["1:A", "1:North", "2:B", "2:East"])
        #expect(rows.map { $0.figures.results.trials } == [1, 2, 1, 2])
        #expect(rows[1].figures.presentations.hits == 1 && rows[3].figures.presentations.falseAlerts == 1)
        // In JSON, as lineupctl prints it: the number and the name beside the figures.
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let object = try #require(
            try JSONSerialization.jsonObject(with: encoder.encode(rows[1])) as? [String: Any])
        #expect(object["station_number"] as? Int == 1 && object["station_name"] as? String == "North")
        #expect(try JSONDecoder().decode(StatsRow.self, from: JSONEncoder().encode(rows[1])) == rows[1])
    }

    @Test func aTrialWithoutStationDataNamesItsSession() {
        var grouper = StatsGrouper(by: .dog)
        var old = trial(.hit, targetIndicated: true, controlIndicated: false)
        for i in old.stations.indices { old.stations[i].seen = nil }
        grouper.add(old, rex)
        let row = grouper.rows()[0]
        #expect(row.sessionsWithoutStationData == ["s-rex"])
        #expect(row.figures.trialsWithoutStationData == 1)
        #expect(row.figures.sensitivity.trials == 0)
    }

    @Test func aGuessCountsOnlyBeforeTheFirstIndication() {
        var counter = GuessCounter(by: .handler)
        let hit = trial(.hit, targetIndicated: true, controlIndicated: false)
        // Started at 10 s, first indication 2 s later: a guess at 11 s counts, at 13 s is late.
        counter.add(
            guess: 1, guessedAtMonoNs: 11_000_000_000, trial: hit, startedMonoNs: 10_000_000_000, sessionId: "s",
            dog: "Rex", handler: "H1")
        counter.add(
            guess: 2, guessedAtMonoNs: 13_000_000_000, trial: hit, startedMonoNs: 10_000_000_000, sessionId: "s",
            dog: "Rex", handler: "H1")
        let missed = trial(.falseAlert, targetIndicated: false, controlIndicated: true)
        counter.add(
            guess: 2, guessedAtMonoNs: 0, trial: missed, startedMonoNs: 0, sessionId: "s", dog: "Rex", handler: nil)
        let figures = counter.figures
        #expect(figures.map(\.group) == ["H1", "(no handler code)"])
        #expect((figures[0].guesses, figures[0].hits, figures[0].lateGuesses) == (1, 1, 1))
        #expect(figures[0].chance == 0.5)
        // The wrong guess at 2 and the dog's false alert at 2: one false alert, at the guess.
        #expect((figures[1].falseAlerts, figures[1].falseAlertsAtGuess) == (1, 1))
    }
}
