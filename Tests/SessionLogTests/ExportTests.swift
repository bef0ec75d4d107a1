import Foundation
import Testing
import TrainingEngine

@testable import SessionLog

@Suite struct ExportTests {
    static func filledLog() throws -> SessionLog {
        let log = try SessionLog(path: temporaryLogPath())
        var filler = LogFiller()
        filler.dogs = 2
        filler.sessionsPerDog = 3
        filler.trialsPerSession = 6
        filler.eventsPerTrial = 10
        try filler.fill(log)
        return log
    }

    @Test func trialsCSVReadsBackRowForRow() throws {
        let log = try Self.filledLog()
        let text = try exportText(log.reader, .trials, .csv)
        #expect(text.hasSuffix("\r\n"))
        let records = parseCSV(text)
        let header = try #require(records.first)
        let rows = records.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(header, $0)) }
        #expect(Set(records.map(\.count)) == [header.count])
        let trials = try log.reader.trials()
        #expect(rows.count == trials.count)
        for (row, trial) in zip(rows, trials) {
            #expect(row["trial_id"] == trial.id)
            #expect(row["session_id"] == trial.sessionId)
            #expect(row["dog"] == trial.dog)
            #expect(row["number"] == "\(trial.number)")
            #expect(row["outcome"] == trial.outcome)
            #expect(row["indicated_station"] == (trial.indicatedStation.map { "\($0)" } ?? ""))
            #expect(row["seed"] == (trial.seed.map { "\($0)" } ?? ""))
            #expect(row["started"]?.hasSuffix("+02:00") == true)
            for slot in trial.layout {
                #expect(row["station_\(slot.station)_sample"] == (slot.sample ?? ""))
                #expect(row["station_\(slot.station)_kind"] == slot.kind)
            }
        }
    }

    @Test func eventsCSVAndJSONLinesReadBackRowForRow() throws {
        let log = try Self.filledLog()
        let events = try log.reader.events()
        let records = parseCSV(try exportText(log.reader, .events, .csv))
        let header = try #require(records.first)
        #expect(records.count - 1 == events.count)
        let index = Dictionary(uniqueKeysWithValues: header.enumerated().map { ($1, $0) })
        let lines = try exportText(log.reader, .events, .jsonl).split(separator: "\n")
        #expect(lines.count == events.count)
        for ((record, line), event) in zip(zip(records.dropFirst(), lines), events) {
            func field(_ name: String) -> String { record[index[name] ?? 0] }
            #expect(field("event_id") == event.id)
            #expect(field("kind") == event.kind)
            #expect(field("mono_ns") == "\(event.monoNs)")
            #expect(field("kernel_ns") == (event.kernelNs.map { "\($0)" } ?? ""))
            #expect(field("detail") == (event.detail ?? ""))
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["event_id"] as? String == event.id)
            #expect((object["mono_ns"] as? NSNumber)?.int64Value == event.monoNs)
            #expect(object["detail"] as? String == event.detail)
            #expect(object.keys.count == header.count)
        }
        // Details with commas and quotes were quoted, and came back intact.
        #expect(events.contains { $0.detail?.contains("\"") == true })
    }

    @Test func filtersNarrowTheExport() throws {
        let log = try Self.filledLog()
        let reader = log.reader
        let aino = try reader.resolveDog("aino")
        let sessions = try reader.sessions(LogFilter(dogId: aino))
        #expect(sessions.count == 3)
        let first = try #require(sessions.first)
        let bySession = parseCSV(try exportText(reader, .trials, .csv, LogFilter(sessionId: first.id)))
        #expect(bySession.count - 1 == 6)
        let byDog = parseCSV(try exportText(reader, .events, .csv, LogFilter(dogId: aino)))
        #expect(byDog.count - 1 == 3 * 6 * 10)
        // Since the second session started: two of Aino's three sessions.
        let since = try ResearcherDate.parse(sessions[1].started)
        let later = parseCSV(try exportText(reader, .sessions, .csv, LogFilter(dogId: aino, since: since)))
        #expect(later.count - 1 == 2)
        let samples = parseCSV(try exportText(reader, .samples, .csv))
        #expect(samples.count - 1 == 12)
        let sessionsCSV = parseCSV(try exportText(reader, .sessions, .csv))
        let header = try #require(sessionsCSV.first)
        let suggestions = try #require(header.firstIndex(of: "improvement_suggestions"))
        #expect(sessionsCSV.dropFirst().allSatisfy { $0[suggestions].contains("cheese") })
    }

    @Test func pandasReadsTheExportWhenItIsInstalled() throws {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import pandas"]
        probe.standardError = FileHandle(forWritingAtPath: "/dev/null")
        guard (try? probe.run()) != nil else { return }
        probe.waitUntilExit()
        guard probe.terminationStatus == 0 else { return }  // no pandas here: nothing to check
        let log = try Self.filledLog()
        let path = temporaryLogPath("trials.csv")
        try exportText(log.reader, .trials, .csv).write(toFile: path, atomically: true, encoding: .utf8)
        let check = Process()
        check.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        check.arguments = [
            "python3", "-c", "import pandas, sys; d = pandas.read_csv(sys.argv[1]); assert len(d) == 36, len(d)", path,
        ]
        try check.run()
        check.waitUntilExit()
        #expect(check.terminationStatus == 0)
    }
}
