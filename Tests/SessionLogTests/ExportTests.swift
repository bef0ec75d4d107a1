import Foundation
import LineupBench
import ReadingRows
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
            #expect(row["outcome"] == trial.outcome.rawValue)
            #expect(row["indicated_station"] == (trial.indicatedStation.map { "\($0)" } ?? ""))
            #expect(row["seed"] == (trial.seed.map { "\($0)" } ?? ""))
            #expect(row["started"]?.hasSuffix("+02:00") == true)
            for slot in trial.layout {
                #expect(row["station_\(slot.station)_sample"] == (slot.sample ?? ""))
                #expect(row["station_\(slot.station)_kind"] == slot.kind.rawValue)
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

/// Milestones and dogs exported as the other tables are: a row per milestone or dog, each with
/// the station it came from, in CSV and JSON Lines alike, in one log and in a lab's merged log.
@Suite struct MilestoneAndDogExportTests {
    /// A filled log (dogs Aino and Bruno, three sessions each) with milestones: Aino passed
    /// two steps and graduated the phase in her first two sessions; Bruno passed a step with
    /// no session named (as a log might hold from before sessions were linked).
    static func logWithMilestones(seed: UInt64 = 1) throws -> (SessionLog, [MilestoneRecord]) {
        let log = try SessionLog(path: temporaryLogPath())
        var filler = LogFiller()
        filler.dogs = 2
        filler.sessionsPerDog = 3
        filler.trialsPerSession = 4
        filler.eventsPerTrial = 2
        filler.seed = seed
        try filler.fill(log)
        let reader = log.reader
        let aino = try #require(UUID(uuidString: try reader.resolveDog("Aino")))
        let bruno = try #require(UUID(uuidString: try reader.resolveDog("Bruno")))
        let sessions = try reader.sessions(LogFilter(dogId: aino.uuidString.lowercased()))
            .compactMap { UUID(uuidString: $0.id) }
        func at(_ n: Int64) -> LogTime {
            LogTime(monoNs: 9_000_000_000_000 + n, wallNs: filler.startWallNs + 864_000_000_000_000 + n * 1_000_000_000)
        }
        let milestones = [
            MilestoneRecord(
                dogId: aino, sessionId: sessions[0], phase: "discrimination", step: "1",
                criterion: "90 % of the last 20 trials correct (met after 24 scored trials)", time: at(1)),
            MilestoneRecord(
                dogId: aino, sessionId: sessions[1], phase: "discrimination", step: "2",
                criterion: "30 consecutive correct trials, or \"40\" correct within at least 100 trials", time: at(2)),
            MilestoneRecord(
                dogId: aino, sessionId: sessions[1], phase: "discrimination",
                criterion: "every step of the phase passed (2)", time: at(3)),
            MilestoneRecord(dogId: bruno, phase: "indicate", step: "1", criterion: nil, time: at(4)),
        ]
        try log.append(milestones)
        return (log, milestones)
    }

    static func identity(_ log: SessionLog) throws -> String {
        try log.pool.read { db in try String.fetchOne(db, sql: "SELECT id FROM log_identity")! }
    }

    /// CSV rows as dictionaries by header, and the JSON Lines objects; both must agree.
    static func rows(_ reader: LogReader, _ table: ExportTable, _ filter: LogFilter = LogFilter()) throws -> (
        csv: [[String: String]], json: [[String: Any]]
    ) {
        let records = parseCSV(try exportText(reader, table, .csv, filter))
        let header = try #require(records.first)
        #expect(Set(records.map(\.count)) == [header.count])
        let csv = records.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(header, $0)) }
        let json = try exportText(reader, table, .jsonl, filter).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(json.count == csv.count)
        for (row, object) in zip(csv, json) {
            #expect(Set(object.keys) == Set(header))
            for (key, value) in row {
                // Empty in CSV is null in JSON; numbers and text read back the same.
                let same =
                    value.isEmpty
                    ? object[key] is NSNull
                    : (object[key] as? String == value || (object[key] as? NSNumber)?.stringValue == value)
                #expect(same, "\(table) \(key): CSV \(value), JSON \(String(describing: object[key]))")
            }
        }
        return (csv, json)
    }

    @Test func milestonesCarryTheirDogSessionAndStation() throws {
        let (log, milestones) = try Self.logWithMilestones()
        let reader = log.reader
        let own = try Self.identity(log)
        let (rows, _) = try Self.rows(reader, .milestones)
        #expect(rows.map { $0["milestone_id"] } == milestones.map { $0.id.uuidString.lowercased() })
        #expect(rows.map { $0["dog"] } == ["Aino", "Aino", "Aino", "Bruno"])
        #expect(rows.map { $0["milestone"] } == ["step passed", "step passed", "phase graduated", "step passed"])
        #expect(rows.map { $0["step"] } == ["1", "2", "", "1"])
        #expect(rows[1]["criterion"] == milestones[1].criterion)
        #expect(rows[3]["criterion"] == "")
        for (row, milestone) in zip(rows, milestones) {
            #expect(row["session_id"] == (milestone.sessionId?.uuidString.lowercased() ?? ""))
            #expect(row["dog_id"] == milestone.dogId.uuidString.lowercased())
            #expect(row["mono_ns"] == "\(milestone.time.monoNs)")
            #expect(row["time"]?.hasSuffix("+02:00") == true)
            // A milestone's station is its session's; without a session, none is claimed.
            let hasSession = milestone.sessionId != nil
            #expect(row["station_name"] == (hasSession ? "pi" : ""))
            #expect(row["station_id"] == (hasSession ? own : ""))
            #expect(row["program"] == (hasSession ? "default" : ""))
        }
        let aino = try reader.resolveDog("Aino")
        #expect(try Self.rows(reader, .milestones, LogFilter(dogId: aino)).csv.count == 3)
        let second = try #require(milestones[1].sessionId).uuidString.lowercased()
        #expect(try Self.rows(reader, .milestones, LogFilter(sessionId: second)).csv.count == 2)
        // Since the third: the phase's graduation and Bruno's step.
        let since = try ResearcherDate.parse(try #require(rows[2]["time"]))
        #expect(try Self.rows(reader, .milestones, LogFilter(since: since)).csv.map { $0["dog"] } == ["Aino", "Bruno"])
    }

    @Test func dogsCarryTheirCountsAndStations() throws {
        let (log, _) = try Self.logWithMilestones()
        let reader = log.reader
        let own = try Self.identity(log)
        let (rows, _) = try Self.rows(reader, .dogs)
        let dogs = try reader.dogs()
        #expect(rows.count == dogs.count && dogs.count == 2)
        for (row, dog) in zip(rows, dogs) {
            #expect(row["dog_id"] == dog.id)
            #expect(row["dog"] == dog.name)
            #expect(row["born"] == (dog.born ?? ""))
            #expect(row["sessions"] == "\(dog.sessions)")
            #expect(row["trials"] == "\(dog.trials)")
            #expect(row["station_ids"] == own)
            #expect(row["station_names"] == "pi")
            #expect(row["last_session"]?.hasSuffix("+02:00") == true)
        }
        #expect(rows.map { $0["steps_passed"] } == ["2", "1"])
        #expect(rows.map { $0["phases_graduated"] } == ["1", "0"])
        #expect(rows.map { $0["sessions"] } == ["3", "3"])
        let bruno = try reader.resolveDog("Bruno")
        #expect(try Self.rows(reader, .dogs, LogFilter(dogId: bruno)).csv.map { $0["dog"] } == ["Bruno"])
        let ainoSession = try #require(try reader.sessions(LogFilter(dogId: try reader.resolveDog("Aino"))).first)
        #expect(try Self.rows(reader, .dogs, LogFilter(sessionId: ainoSession.id)).csv.map { $0["dog"] } == ["Aino"])
    }

    @Test func aLabLogSaysWhichStationEachMilestoneCameFrom() throws {
        let (a, fromA) = try Self.logWithMilestones(seed: 1)
        let (b, fromB) = try Self.logWithMilestones(seed: 2)
        let lab = try SessionLog(path: temporaryLogPath())
        _ = try lab.merge(from: a.path)
        _ = try lab.merge(from: b.path)
        let (idA, idB) = (try Self.identity(a), try Self.identity(b))
        let rows = try Self.rows(lab.reader, .milestones).csv
        #expect(rows.count == fromA.count + fromB.count)
        let station = Dictionary(uniqueKeysWithValues: rows.map { ($0["milestone_id"]!, $0["station_id"]!) })
        for (milestones, id) in [(fromA, idA), (fromB, idB)] {
            for m in milestones {
                #expect(station[m.id.uuidString.lowercased()] == (m.sessionId == nil ? "" : id))
            }
        }
        // The same dogs by name on both stations: one row each, trained on both.
        let dogs = try Self.rows(lab.reader, .dogs).csv
        #expect(dogs.map { $0["dog"] } == ["Aino", "Bruno"])
        #expect(dogs.allSatisfy { $0["station_ids"] == [idA, idB].sorted().joined(separator: " | ") })
        #expect(dogs.map { $0["sessions"] } == ["6", "6"])
        #expect(dogs.map { $0["steps_passed"] } == ["4", "2"])
    }

    @Test func theToolExportsThemToo() throws {
        let (log, milestones) = try Self.logWithMilestones()
        for (what, count) in [("milestones", milestones.count), ("dogs", 2)] {
            for format in ["csv", "jsonl"] {
                let result = try runLineupctl(["export", "--db", log.path, "--what", what, "--format", format])
                #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
                let lines = result.stdout.split(whereSeparator: \.isNewline)
                #expect(lines.count == count + (format == "csv" ? 1 : 0), "\(what) \(format)")
            }
        }
        let wrong = try runLineupctl(["export", "--db", log.path, "--what", "milestone"])
        #expect(wrong.status != 0 && wrong.stdout.isEmpty)
        #expect(wrong.stderr.contains("milestones"), "\(wrong.stderr)")
    }
}

/// A trial's row names its dog (id and name), program and handler (issue 32: the trials export
/// lacked program, handler and dog id, so a trial could not be read without the sessions export).
@Suite struct TrialsExportOwnerTests {
    @Test func everyTrialNamesItsDogProgramAndHandler() throws {
        var research = try ResearchLog()
        try research.session("study", "target-scent/2", mode: .automated, handler: "H-1", outcomes: [.hit, .miss])
        try research.session(nil, "p/1", mode: .trainerLed, outcomes: [.hit])
        let records = parseCSV(try exportText(research.log.reader, .trials, .csv))
        let header = try #require(records.first)
        let rows = records.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(header, $0)) }
        #expect(rows.count == 3)
        let dogId = research.dog.id.uuidString.lowercased()
        #expect(rows.allSatisfy { $0["dog_id"] == dogId && $0["dog"] == "Rex" })
        #expect(rows.map { $0["program"] } == ["study", "study", ""])
        #expect(rows.map { $0["handler"] } == ["H-1", "H-1", ""])
        // Added after the columns readers already index by position.
        #expect(Array(header.prefix(3)) == ["trial_id", "dog", "session_id"])
        let stationId = try #require(header.firstIndex(of: "station_id"))
        #expect(Array(header[(stationId + 1)...(stationId + 3)]) == ["dog_id", "program", "handler"])
    }
}
