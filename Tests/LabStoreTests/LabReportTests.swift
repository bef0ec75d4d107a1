import Figures
import Foundation
import LabStore
import LineupBench
import PostgresNIO
import SessionLog
import Testing
import TrainingEngine

/// `lineupctl report --lab` over three stations synced into a real PostgreSQL (TestServer)
/// writes, byte for byte, the HTML `lineupctl report --db` writes over the same logs merged by
/// `lineupctl merge`, but for the time it was made.
@Suite(.serialized, .timeLimit(.minutes(5)), .ownThreads) struct LabReportTests {
    func directory() throws -> String {
        let directory = NSTemporaryDirectory() + "lab-report-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Two filled logs of different dogs and samples (merge matches dogs by name and samples by
    /// label; the store keeps each station's), with notes, clicks and ends; and a simulated
    /// double-blind block of the study program (a step with a criterion, so the report's
    /// rolling accuracy is drawn), one of its hits corrected to a miss.
    func stationLogs(in directory: String) throws -> (logs: [String], corrected: String) {
        var logs: [String] = []
        for (index, prefix) in ["A-", "B-"].enumerated() {
            let path = "\(directory)/station-\(index + 1).db"
            var filler = LogFiller()
            filler.dogs = 2
            filler.sessionsPerDog = 3
            filler.trialsPerSession = 10
            filler.eventsPerTrial = 4
            filler.seed = UInt64(31 + index)
            filler.namePrefix = prefix
            _ = try filler.fill(try SessionLog(path: path))
            logs.append(path)
        }
        guard let lineupd = builtProduct("lineupd") else {
            throw TestServerError(message: "lineupd is not built: run `swift build` before `swift test`")
        }
        let blind = "\(directory)/station-3.db"
        let block = try Child([lineupd, "--simulate", "--fast", "--trials", "40", "--seed", "7", "--db", blind])
        #expect(try block.wait(within: .seconds(120), for: "the simulated block") == 0, "\(block.stderr())")
        // A hit in the middle of the block: its correction must count where the trial stood.
        let hit = try sqlite(
            blind, "SELECT id FROM trial WHERE outcome = 'hit' ORDER BY number LIMIT 1 OFFSET 3")
        _ = try SessionLog(path: blind).correctTrial(
            hit, outcome: .miss, indicatedStation: nil, reason: "video review: no hold")
        try addCriterionSessions(to: blind)
        logs.append(blind)
        return (logs, hit)
    }

    /// A step whose criterion looks at the last three trials: the rolling accuracy at a
    /// session's end depends on the trials' order.
    static let program = """
        name = "order"
        title = "Order"
        description = "One double-blind step with a criterion over the last three trials."

        [[phases]]
        id = "p"
        title = "P"
        description = "The only phase."

        [[phases.steps]]
        id = "1"
        title = "Target among a control and a blank"
        mode = "double-blind"
        lineup = { stations = 3, targets = 1, controls = 1, blanks = 1 }
        hold_s = 2.0
        inter_trial_s = 15
        criterion = [{ kind = "accuracy-window", accuracy = 0.8, window = 3 }]

        [[phases.steps.exercises]]
        id = "1"
        title = "Block of 12"
        instruction = "Load as told."
        duration_s = 60
        trials = 12
        """

    /// Two double-blind sessions of that step, the second's trial 2 corrected from a hit to a
    /// miss (its correction's row comes after the session's), a milestone, a sensor's fault in
    /// a session and a fault outside any.
    func addCriterionSessions(to path: String) throws {
        let log = try SessionLog(path: path)
        var wall: Int64 = 1_760_000_000_000_000_000
        func tick() -> LogTime {
            wall += 7_000_000_000
            return LogTime(monoNs: wall - 1_700_000_000_000_000_000, wallNs: wall)
        }
        let program = ProgramRecord(name: "order", content: Self.program, time: tick())
        let dog = DogRecord(name: "C-Rex", time: tick())
        let target = SampleRecord(label: "C-T-1", kind: .target, facts: SampleFacts(source: "clinic C"), time: tick())
        let control = SampleRecord(label: "C-C-1", kind: .control, facts: SampleFacts(source: "clinic D"), time: tick())
        try log.append([program, dog, target, control])
        var random = SeededGenerator(seed: 17)
        var corrected: UUID?
        for sessionIndex in 0..<2 {
            let session = SessionRecord(
                dogId: dog.id, programId: program.id, phase: "p", phaseSteps: 1, step: "1", exercise: "1",
                mode: .doubleBlind,
                // The board's own names: the report and stats name the stations so, on either source.
                settings: #"{"stations":"North,East,West"}"#, station: "bench-c", bootId: nil, time: tick())
            var records: [any AppendableRecord] = [session]
            for number in 1...12 {
                let started = tick()
                let at = Int.random(in: 1...3, using: &random)
                let hit = number % 4 != 0
                let layout = (1...3).map { station in
                    let isTarget = station == at
                    return StationSlot(
                        station: station, sampleId: isTarget ? target.id : (station == at % 3 + 1 ? control.id : nil),
                        kind: isTarget ? .target : (station == at % 3 + 1 ? .control : .blank),
                        seen: StationSeen(
                            visited: true, indicated: isTarget && hit,
                            firstIndicationNs: isTarget && hit ? 3_000_000_000 : nil,
                            sniffs: 1, dwellNs: 900_000_000))
                }
                let trial = TrialRecord(
                    sessionId: session.id, number: number, layout: layout, outcome: hit ? .hit : .miss,
                    indicatedStation: hit ? at : nil, latencyNs: hit ? 3_000_000_000 : nil, searchNs: 5_000_000_000,
                    started: started, ended: tick())
                records.append(trial)
                if sessionIndex == 1 && number == 2 { corrected = trial.id }
                if hit {
                    records.append(
                        LoggedEvent(
                            kind: .click, sessionId: session.id, trialId: trial.id, station: at, time: tick(),
                            click: ClickTiming(onsetLatencyNs: Int64(2_000_000 + number * 10_000))))
                }
            }
            records.append(
                LoggedEvent(
                    kind: .fault, sessionId: session.id, station: 2, time: tick(), detail: #"{"sensor":"stuck"}"#))
            records.append(
                SessionNote(sessionId: session.id, kind: .comment, text: "steady \(sessionIndex)", time: tick()))
            records.append(SessionEnd(sessionId: session.id, how: .ended, detail: "ended", time: tick()))
            try log.append(records)
        }
        _ = try log.correctTrial(
            corrected!.uuidString.lowercased(), outcome: .miss, indicatedStation: nil, reason: "video review")
        try log.append([
            MilestoneRecord(dogId: dog.id, phase: "p", step: "1", criterion: "by hand", time: tick()),
            LoggedEvent(kind: .fault, time: tick(), detail: #"{"fault":"log-events-dropped"}"#),
        ])
    }

    /// A researcher's connection file, mode 0600.
    func researcherFile(_ lab: TestServer.Lab, in directory: String) -> String {
        let path = "\(directory)/researcher.conf"
        let c = lab.researcher
        let text =
            "host = \(c.host)\nport = \(c.port)\ndatabase = \(c.database)\nuser = \(c.user)\npassword = \(c.password!)\n"
        FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        return path
    }

    func sync(_ logs: [String], into lab: TestServer.Lab) async throws {
        for path in logs {
            let store = try await LabStore.connect(lab.station)
            // Closed before any failure is thrown: an unclosed connection traps in postgres-nio.
            let report: SyncReport
            do {
                report = try await StationSync(
                    reader: try SessionLog.openReader(path: path, everything: true), store: store, batchSize: 97
                ).run()
            } catch {
                await store.close()
                throw error
            }
            await store.close()
            #expect(report.complete, "\(path): \(report)")
        }
    }

    /// The report with the time it was made (`Made 2026-…T…+00:00.`) taken out.
    func withoutTimeMade(_ html: String) -> String {
        html.replacingOccurrences(of: #"Made [^<]*\.</p>"#, with: "Made (time).</p>", options: .regularExpression)
    }

    @Test func reportOnTheLabIsTheReportOnTheMergedLogs() async throws {
        guard let server = try await TestServer.startOrSkip("reportOnTheLabIsTheReportOnTheMergedLogs") else { return }
        let lab = try await server.makeLab()
        let directory = try directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (logs, corrected) = try stationLogs(in: directory)
        try await sync(logs, into: lab)
        let merged = "\(directory)/merged.db"
        let merge = try lineupctl(["merge"] + logs + ["--into", merged])
        #expect(merge.status == 0, "\(merge.stderr)")
        let conf = researcherFile(lab, in: directory)

        let onLog = try lineupctl(["report", "--db", merged, "-o", "\(directory)/log.html"])
        let onLab = try lineupctl(["report", "--lab", conf, "-o", "\(directory)/lab.html"])
        #expect(onLog.status == 0 && onLab.status == 0, "\(onLog.stderr) \(onLab.stderr)")
        #expect(onLab.stderr.isEmpty && onLab.stdout.isEmpty, "\(onLab.stderr)")
        let logHTML = try String(contentsOfFile: "\(directory)/log.html", encoding: .utf8)
        let labHTML = try String(contentsOfFile: "\(directory)/lab.html", encoding: .utf8)
        #expect(withoutTimeMade(labHTML) == withoutTimeMade(logHTML))
        #expect(withoutTimeMade(labHTML) != labHTML, "the time made was not found to take out")
        // To stdout as well (through a file: the report is more than a pipe holds).
        let toStdout = try Child([builtProduct("lineupctl")!, "report", "--lab", conf])
        #expect(try toStdout.wait(within: .seconds(120), for: "report --lab to stdout") == 0)
        #expect(withoutTimeMade(toStdout.stdout()) == withoutTimeMade(logHTML))

        // Not an empty agreement: every station's dogs, the double-blind block with its
        // criterion's rolling accuracy, the corrected trial counted once, as corrected.
        let trials = try await value("SELECT count(*)::text FROM public.trials_current", as: lab.researcher)
        #expect(trials == "184")
        #expect(labHTML.contains("data-trials=\"184\""))
        for dog in ["A-Aino", "A-Bruno", "B-Aino", "B-Bruno", "C-Rex"] { #expect(labHTML.contains(dog), "\(dog)") }
        #expect(labHTML.contains("double-blind"))
        // C-Rex's sessions end on trials 10, 11 and 12 (hit, hit, miss); the correction of the
        // second session's trial 2 counts there, not last.
        #expect(labHTML.contains("data-rolling-accuracy=\"0.6666666666666666\""), "no rolling accuracy drawn")
        #expect(!labHTML.contains("data-rolling-accuracy=\"0.3333333333333333\""))
        // A sensor's fault names its station as the session's board did (issue 32).
        #expect(labHTML.contains("sensor stuck at station East (2)") && labHTML.contains("log-events-dropped"))
        #expect(!labHTML.contains("at station 2"))
        // Issue 32: C-Rex's stations by the names their sessions logged, in the position bias and
        // the station table, the number beside the name; stats --by station alike on both sources.
        #expect(labHTML.contains(">target at North<") && labHTML.contains("data-station=\"3:West\""))
        #expect(labHTML.contains("<td>East</td><td>2</td>"))
        for format in [[], ["--json"]] {
            let byStation = ["stats", "--by", "station", "--dog", "C-Rex"] + format
            let onLab = try lineupctl(byStation + ["--lab", conf])
            let onMerged = try lineupctl(byStation + ["--db", "\(directory)/merged.db"])
            #expect(onLab.status == 0 && onLab.stdout == onMerged.stdout, "\(onLab.stderr)")
            #expect(onLab.stdout.contains("North"), "\(onLab.stdout)")
        }
        // The exports name them so too, beside the numbers, the same bytes on both sources: a
        // trial's every station and the one indicated, and a fault outside a trial (station 2).
        for what in ["trials", "events"] {
            let export = ["export", "--what", what, "--dog", "C-Rex", "--format", "jsonl"]
            let onLab = try exported(export + ["--lab", conf])
            let onMerged = try exported(export + ["--db", "\(directory)/merged.db"])
            #expect(onLab.status == 0 && onLab.stdout == onMerged.stdout, "\(what): \(onLab.stderr)")
            let rows = try onLab.stdout.split(separator: "\n").map {
                try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
            #expect(rows.count > 1, "\(what)")
            let names = [1: "North", 2: "East", 3: "West"]
            for row in rows {
                if what == "trials" {
                    for (number, name) in names { #expect(row["station_\(number)_name"] as? String == name) }
                    if let indicated = row["indicated_station"] as? Int {
                        #expect(row["indicated_station_name"] as? String == names[indicated])
                    }
                } else if let station = row["station"] as? Int {
                    #expect(row["station_label"] as? String == names[station], "\(row)")
                }
            }
        }
        #expect(
            try await value(
                "SELECT outcome FROM public.trials_current WHERE corrects = '\(corrected)'", as: lab.researcher)
                == "miss")
    }

    @Test func reportOnTheLabIsRefusedInOneLine() async throws {
        let directory = try directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func refused(_ arguments: [String], saying words: [String], environment: [String: String] = [:]) throws {
            let output = "\(directory)/refused.html"
            let run = try lineupctl(arguments + ["-o", output], environment: environment)
            let lines = run.stderr.split(separator: "\n")
            #expect(run.status == 1, "\(arguments)")
            #expect(lines.count == 1, "\(arguments): \(run.stderr)")
            #expect(run.stdout.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: output), "\(arguments) wrote a report")
            for word in words { #expect(run.stderr.contains(word), "\(arguments): \(run.stderr) lacks \(word)") }
        }
        try refused(
            ["report", "--lab", "postgres://reader_r@%2Ftmp%2Fno-lab-here:5432/lab"],
            saying: ["the lab store reader_r@/tmp/no-lab-here:5432/lab cannot be reached"],
            environment: ["PGPASSFILE": "/nonexistent"])
        try refused(["report", "--db", "x.db", "--lab", "postgres://reader_r@db.example/lab"], saying: ["not both"])

        guard let server = try await TestServer.startOrSkip("reportOnTheLabIsRefusedInOneLine") else { return }
        let lab = try await server.makeLab()
        var filler = LogFiller()
        filler.dogs = 1
        filler.sessionsPerDog = 1
        filler.trialsPerSession = 5
        filler.seed = 3
        let log = "\(directory)/station.db"
        _ = try filler.fill(try SessionLog(path: log))
        try await sync([log], into: lab)
        let conf = researcherFile(lab, in: directory)
        #expect(try lineupctl(["report", "--lab", conf, "-o", "\(directory)/fine.html"]).status == 0)
        // A selection word the store has nothing for, named as on a log.
        try refused(["report", "--dog", "Nobody", "--lab", conf], saying: ["no dog \"Nobody\" in the lab store"])
        try refused(["report", "--step", "p/9", "--lab", conf], saying: ["--step p/9", "in the lab store"])

        // A row no station writes, put in by the owner: a layout naming station 300000000. The
        // store refuses it since v9; a store from before v9 may hold one, so the owner lifts the check.
        let owner = try await LabStore.connect(lab.owner)
        do {
            try await owner.execute("ALTER TABLE store.trial DROP CONSTRAINT trial_layout_is_stations")
            try await owner.execute(
                """
                INSERT INTO store.trial (id, station_id, session_id, number, outcome, started_mono_ns,
                    started_wall_ns, layout, mono_ns, wall_ns)
                SELECT 'hostile-trial', station_id, id, 99, 'hit', mono_ns, wall_ns, '300000000:target:;',
                    mono_ns, wall_ns
                FROM store.session LIMIT 1
                """)
        } catch {
            await owner.close()
            throw error
        }
        await owner.close()
        // The report leaves it out, named once on standard error, and draws every other trial.
        let damaged = try lineupctl(["report", "--lab", conf, "-o", "\(directory)/damaged.html"])
        #expect(damaged.status == 0, "\(damaged.stderr)")
        let named = damaged.stderr.split(separator: "\n").filter { $0.contains("hostile-trial") }
        #expect(named.count == 1 && named[0].contains("a layout that is not stations"), "\(damaged.stderr)")
        #expect(FileManager.default.fileExists(atPath: "\(directory)/damaged.html"))
    }
}
