import Figures
import Foundation
import Testing
import TrainingEngine

/// The report's assembly from plain rows, as a log or the lab store hands them over: no query,
/// no SQLite.
@Suite struct ReportAssemblyTests {
    func session(_ id: String, dog: String, at wallNs: Int64, mode: String = "automated") -> ReportAssembly.SessionRow {
        ReportAssembly.SessionRow(
            id: id, dogId: "id-\(dog)", dog: dog, wallNs: wallNs, phase: nil, step: nil, exercise: nil, mode: mode,
            station: nil, stationId: nil, programId: nil, endedHow: "ended", endDetail: nil)
    }

    /// Target `t1` at station 1, control `c1` at station 2, both visited.
    func trial(_ outcome: TrialOutcome, hit: Bool) -> ScoredTrial {
        ScoredTrial(
            outcome: outcome, latencyNs: 1_000_000_000,
            stations: [
                StationObservation(
                    station: 1, kind: .target, sample: "t1",
                    seen: StationSeen(visited: true, indicated: hit, firstIndicationNs: hit ? 1_000_000_000 : nil)),
                StationObservation(
                    station: 2, kind: .control, sample: "c1",
                    seen: StationSeen(visited: true, indicated: !hit, firstIndicationNs: hit ? nil : 1_000_000_000)),
            ])
    }

    func assembled(_ scope: ReportAssembly.Scope = .init()) throws -> ReportData {
        var a = try ReportAssembly(
            scope: scope, maxPoints: 120,
            sessions: [session("s1", dog: "Rex", at: 1_000), session("s2", dog: "Rex", at: 2_000)], programs: [:])
        // The source says which trials the filter chose: with a window from 1.5 µs, only s2's.
        let s1Chosen = scope.since == nil
        a.addTrial(trial(.hit, hit: true), dogId: "id-Rex", dog: "Rex", sessionId: "s1", inScope: s1Chosen)
        a.addTrial(trial(.falseAlert, hit: false), dogId: "id-Rex", dog: "Rex", sessionId: "s1", inScope: s1Chosen)
        a.addTrial(trial(.hit, hit: true), dogId: "id-Rex", dog: "Rex", sessionId: "s2", inScope: true)
        a.addNote(sessionId: "s1", kind: "improvement", text: "shorter sessions")
        a.addNote(sessionId: "s1", kind: "comment", text: "windy")
        a.addClick(sessionId: "s1", onsetNs: 2_000_000)
        a.addFault(sessionId: "s1", named: "click-failed")
        a.addFault(sessionId: nil, named: "unreadable")
        a.addMilestone(dogId: "id-Rex", sessionId: "s1", phase: "1", step: "a", criterion: nil, wallNs: 3_000)
        return a.finish(
            samples: [
                .init(id: "t1", label: "T-1", kind: "target", facts: SampleFacts()),
                .init(id: "c1", label: "C-1", kind: "control", facts: SampleFacts()),
            ], generatedWallNs: 4_000)
    }

    @Test func everyTrialCountsInItsSessionItsDogsStationsAndItsSamples() throws {
        let data = try assembled()
        #expect(data.trials == 3)
        #expect(data.sessions.map(\.id) == ["s1", "s2"])
        #expect(data.sessions[0].figures.results.hits == 1)
        #expect(data.sessions[0].figures.results.falseAlerts == 1)
        #expect(data.sessions[0].suggestions == ["shorter sessions"])
        #expect(data.sessions[0].comments == ["windy"])
        #expect(data.sessions[0].clickOnsetNs == [2_000_000])
        #expect(data.sessions[0].criterionNote == "no program logged")
        #expect(data.faults == ["click-failed": 1, "unreadable": 1])
        #expect(data.faultsOutsideSessions == 1)
        let rex = try #require(data.dogs.first)
        #expect(rex.points.count == 2)
        #expect(rex.stations[NamedStation(number: 1, name: "A")]?.presentations.hits == 2)
        #expect(rex.stations[NamedStation(number: 2, name: "B")]?.presentations.falseAlerts == 1)
        #expect(rex.milestones.map(\.phase) == ["1"])
        #expect(data.samples.map(\.label) == ["T-1", "C-1"])
        #expect(data.samples[0].rate?.successes == 2)
        #expect(data.samples[1].rate?.successes == 1)
        #expect(data.familiarNovel["id-Rex"] != nil)
    }

    /// Issue 32: the report's position bias and station table named stations by number. Each
    /// session's stations are named as it logged them (`StationNames`, as `stats --by station`).
    @Test func theStationsAreNamedAsEachSessionLoggedThem() throws {
        var named = session("s1", dog: "Rex", at: 1_000)
        named.settings = #"{"stations":"North,East"}"#
        var a = try ReportAssembly(
            scope: .init(), maxPoints: 120, sessions: [named, session("s2", dog: "Rex", at: 2_000)], programs: [:])
        a.addTrial(trial(.hit, hit: true), dogId: "id-Rex", dog: "Rex", sessionId: "s1", inScope: true)
        a.addTrial(trial(.falseAlert, hit: false), dogId: "id-Rex", dog: "Rex", sessionId: "s1", inScope: true)
        a.addTrial(trial(.hit, hit: true), dogId: "id-Rex", dog: "Rex", sessionId: "s2", inScope: true)
        let rex = try #require(a.finish(samples: [], generatedWallNs: 4_000).dogs.first)
        let north = NamedStation(number: 1, name: "North")
        let east = NamedStation(number: 2, name: "East")
        let a1 = NamedStation(number: 1, name: "A")
        #expect(Set(rex.stations.keys) == [north, east, a1, NamedStation(number: 2, name: "B")])
        #expect(rex.stations[north]?.presentations.hits == 1)
        #expect(rex.stations[east]?.presentations.falseAlerts == 1)
        #expect(rex.stations[a1]?.presentations.hits == 1)
        // The target stood at North in s1's trials and at A in s2's.
        #expect(rex.byTargetPosition[PositionKey(target: north, station: east)]?.presentations.falseAlerts == 1)
        #expect(rex.byTargetPosition[PositionKey(target: a1, station: a1)]?.presentations.hits == 1)
        #expect(rex.byTargetPosition[PositionKey(target: north, station: a1)] == nil)
    }

    @Test func theTimeWindowKeepsOnlyItsSessionsAndTrials() throws {
        let data = try assembled(.init(since: 1_500))
        // s1 started before the window and none of its trials was chosen: it is left out, and
        // its notes, clicks and faults with it.
        #expect(data.trials == 1)
        #expect(data.sessions.map(\.id) == ["s2"])
        #expect(data.faults == ["unreadable": 1])
    }

    @Test func aModeThisLineupDoesNotKnowNamesItsSession() {
        #expect(throws: ReportAssembly.UnknownWord.self) {
            _ = try ReportAssembly(
                scope: .init(), maxPoints: 120, sessions: [session("s9", dog: "Rex", at: 0, mode: "hypnotic")],
                programs: [:])
        }
        do {
            _ = try ReportAssembly(
                scope: .init(), maxPoints: 120, sessions: [session("s9", dog: "Rex", at: 0, mode: "hypnotic")],
                programs: [:])
        } catch let word as ReportAssembly.UnknownWord {
            #expect(word.table == "session")
            #expect(word.row == "s9")
            #expect(word.column == "mode")
            #expect(word.value == "hypnotic")
            #expect(word.known == TrainingMode.allCases.map(\.rawValue))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
