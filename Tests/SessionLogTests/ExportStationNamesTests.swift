import Foundation
import ReadingRows
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
        let target = SampleRecord(label: "T-1", kind: .target, facts: SampleFacts(source: "clinic"), time: tick())
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

    /// The names cost no SQL beside each row (a correlated list of the trial's stations and the
    /// session's settings with every row made the events' export 14 % slower and the trials' 17 %):
    /// a trial is named from its own stations (a trial of two of the session's three stations
    /// has the board's defaults, its list not fitting), an event outside a trial from all its
    /// session's trials even when a time or session choice leaves those trials out.
    @Test func namesAreReadOncePerSessionAndTrialNotBesideEachRow() throws {
        let log = try SessionLog(path: temporaryLogPath())
        var wall: Int64 = 1_740_000_000_000_000_000
        func tick() -> LogTime {
            wall += 1_000_000_000
            return LogTime(monoNs: wall - 1_700_000_000_000_000_000, wallNs: wall)
        }
        let program = ProgramRecord(name: "p", content: "x", time: tick())
        let dog = DogRecord(name: "Rex", time: tick())
        let target = SampleRecord(label: "T-1", kind: .target, facts: SampleFacts(source: "clinic"), time: tick())
        try log.append([program, dog, target])
        let session = SessionRecord(
            dogId: dog.id, programId: program.id, phase: "p", phaseSteps: 1, step: "1", exercise: "1",
            mode: .automated, settings: #"{"stations":"North,East,West"}"#, station: "bench", bootId: nil,
            time: tick())
        func trial(_ number: Int, _ stations: [Int]) -> TrialRecord {
            TrialRecord(
                sessionId: session.id, number: number,
                layout: stations.map {
                    StationSlot(station: $0, sampleId: $0 == 3 ? target.id : nil, kind: $0 == 3 ? .target : .blank)
                },
                outcome: .hit, indicatedStation: 3, latencyNs: 1_000_000_000, searchNs: 2_000_000_000, started: tick(),
                ended: tick())
        }
        let whole = trial(1, [1, 2, 3])
        try log.append([
            session, whole,
            LoggedEvent(kind: .indication, sessionId: session.id, trialId: whole.id, station: 3, time: tick()),
        ])
        let cut = wall + 1
        let part = trial(2, [1, 3])
        try log.append([
            part, LoggedEvent(kind: .indication, sessionId: session.id, trialId: part.id, station: 3, time: tick()),
            LoggedEvent(kind: .fault, sessionId: session.id, station: 2, time: tick(), detail: #"{"sensor":"stuck"}"#),
        ])
        func rows(_ table: ExportTable, _ filter: LogFilter) throws -> [[String: Any]] {
            try exportText(log.reader, table, .jsonl, filter).split(separator: "\n").map {
                try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
        }
        var later = LogFilter()
        later.since = cut
        var chosen = LogFilter()
        chosen.sessionId = session.id.logText
        for filter in [LogFilter(), later, chosen] {
            let trials = try rows(.trials, filter)
            let named = trials.map { trial in
                (1...3).map { (trial["station_\($0)_name"] as? String) ?? "-" }.joined(separator: ",")
                    + " " + ((trial["target_station_name"] as? String) ?? "-")
            }
            #expect(named == (filter.since == nil ? ["North,East,West West", "A,-,C C"] : ["A,-,C C"]), "\(trials)")
            let events = try rows(.events, filter)
            #expect(
                events.map { "\($0["station"] ?? "")=\($0["station_label"] ?? "")" }
                    == (filter.since == nil ? ["3=West", "3=C", "2=East"] : ["3=C", "2=East"]), "\(events)")
        }
        for table in [ExportTable.trials, .events] {
            let sql = try log.reader.exportQuery(table).sql
            #expect(!sql.contains("group_concat") && !sql.contains("settings"), "\(sql)")
        }
    }
}
