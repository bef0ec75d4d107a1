import Foundation
import Testing
import TrainingEngine

@testable import SessionLog

/// Issue 32: the exports name each station as its session logged the board's names, beside the
/// number, by the rule `StationNames` keeps (a session logged before names: the board's
/// defaults A, B, ...).
@Suite struct ExportStationNamesTests {
    @Test func trialsAndEventsNameEachStationAsItsSessionLoggedIt() throws {
        let log = try SessionLog(path: temporaryLogPath())
        var wall: Int64 = 1_740_000_000_000_000_000
        func tick() -> LogTime {
            wall += 1_000_000_000
            return LogTime(monoNs: wall - 1_700_000_000_000_000_000, wallNs: wall)
        }
        let program = ProgramRecord(name: "p", content: "x", time: tick())
        let dog = DogRecord(name: "Rex", time: tick())
        let target = SampleRecord(label: "T-1", kind: .target, source: "clinic", time: tick())
        try log.append([program, dog, target])
        for settings in [#"{"stations":"North,East,West"}"#, #"{"hold_s":2}"#] {
            let session = SessionRecord(
                dogId: dog.id, programId: program.id, phase: "p", phaseSteps: 1, step: "1", exercise: "1",
                mode: .automated, settings: settings, station: "bench", bootId: nil, time: tick())
            let layout = (1...3).map { station in
                StationSlot(
                    station: station, sampleId: station == 3 ? target.id : nil, kind: station == 3 ? .target : .blank)
            }
            let trial = TrialRecord(
                sessionId: session.id, number: 1, layout: layout, outcome: .falseAlert, indicatedStation: 2,
                latencyNs: 1_000_000_000, searchNs: 2_000_000_000, started: tick(), ended: tick())
            try log.append([
                session, trial,
                LoggedEvent(kind: .indication, sessionId: session.id, trialId: trial.id, station: 2, time: tick()),
                // Outside a trial: named from the session's stations.
                LoggedEvent(
                    kind: .fault, sessionId: session.id, station: 1, time: tick(), detail: #"{"sensor":"stuck"}"#),
            ])
        }
        func rows(_ table: ExportTable) throws -> [[String: Any]] {
            try exportText(log.reader, table, .jsonl).split(separator: "\n").map {
                try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
        }
        let trials = try rows(.trials)
        #expect(trials.count == 2)
        for (trial, names) in zip(trials, [["North", "East", "West"], ["A", "B", "C"]]) {
            for (index, name) in names.enumerated() {
                #expect(trial["station_\(index + 1)_name"] as? String == name, "\(trial)")
            }
            #expect(trial["indicated_station"] as? Int == 2 && trial["indicated_station_name"] as? String == names[1])
            #expect(trial["target_station"] as? Int == 3 && trial["target_station_name"] as? String == names[2])
        }
        let events = try rows(.events)
        #expect(
            events.map { "\($0["station"] ?? "")=\($0["station_label"] ?? "")" }
                == ["2=East", "1=North", "2=B", "1=A"], "\(events)")
        // The header says the name beside the number, in CSV as in JSON Lines.
        let header = try #require(parseCSV(try exportText(log.reader, .trials, .csv)).first)
        let first = try #require(header.firstIndex(of: "station_1_name"))
        #expect(header[first + 1] == "station_1_sample")
        #expect(header.contains("indicated_station_name") && header.contains("target_station_name"))
    }
}
