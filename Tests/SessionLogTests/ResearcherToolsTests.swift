import Figures
import Foundation
import ProgramFiles
import ReadingRows
import Readings
import Testing
import TrainingEngine

@testable import SessionLog

/// A log written session by session in virtual time: each session's program, step, mode,
/// handler, station and outcomes chosen by the test, trials on five stations named A to E.
struct ResearchLog {
    let log: SessionLog
    let path: String
    let dog = DogRecord(name: "Rex", time: LogTime(monoNs: 1, wallNs: ResearchLog.start))
    var programs: [String: UUID] = [:]
    var handlers: [String: UUID] = [:]
    /// Virtual time: every record a minute after the one before, unless told otherwise.
    var wallNs = ResearchLog.start
    /// 2025-03-01T09:00:00Z.
    static let start: Int64 = 1_740_819_600_000_000_000

    init() throws {
        path = temporaryLogPath()
        log = try SessionLog(path: path)
        try log.append([dog])
    }

    mutating func tick(_ ns: Int64 = 60_000_000_000) -> LogTime {
        wallNs += ns
        return LogTime(monoNs: wallNs - Self.start, wallNs: wallNs)
    }

    /// A session of `program` (a built-in's name, logged with its text) on `step` (phase/step),
    /// one trial per outcome; the target at station 2 (B), controls elsewhere. Returns its id.
    @discardableResult
    mutating func session(
        _ program: String?, _ step: String, mode: TrainingMode, handler: String? = nil,
        outcomes: [TrialOutcome], startGap: Int64 = 60_000_000_000, comment: String? = nil
    ) throws -> SessionRecord {
        var programId: UUID? = nil
        if let program {
            if programs[program] == nil {
                let text = try #require(try Program.builtin(named: program)).text
                programs[program] = try log.logProgram(ProgramRecord(name: program, content: text))
            }
            programId = programs[program]
        }
        var handlerId: UUID? = nil
        if let handler {
            if handlers[handler] == nil { handlers[handler] = try log.logHandler(code: handler) }
            handlerId = handlers[handler]
        }
        let parts = step.split(separator: "/").map(String.init)
        let session = SessionRecord(
            dogId: dog.id, handlerId: handlerId, programId: programId, phase: parts[0],
            step: parts.count > 1 ? parts[1] : nil,
            exercise: "1", mode: mode, settings: #"{"stations":"A,B,C,D,E"}"#, station: "pi-7", bootId: nil,
            time: tick(startGap))
        var records: [any AppendableRecord] = [session]
        for (n, outcome) in outcomes.enumerated() {
            let started = tick(10_000_000_000)
            let indicated: Int? =
                switch outcome {
                case .hit: 2
                case .falseAlert: 4
                default: nil
                }
            let layout = (1...5).map { station in
                StationSlot(
                    station: station, sampleId: nil, kind: station == 2 ? .target : .control,
                    seen: StationSeen(
                        visited: true, indicated: station == indicated,
                        firstIndicationNs: station == indicated ? 3_000_000_000 : nil, sniffs: 1,
                        dwellNs: 500_000_000))
            }
            records.append(
                TrialRecord(
                    sessionId: session.id, number: n + 1, layout: layout, outcome: outcome, indicatedStation: indicated,
                    latencyNs: indicated == nil ? nil : 3_000_000_000, started: started, ended: tick(5_000_000_000)))
        }
        if let comment {
            records.append(SessionNote(sessionId: session.id, kind: .comment, text: comment, time: tick(1)))
        }
        records.append(SessionEnd(sessionId: session.id, how: .ended, time: tick(1_000_000)))
        try log.append(records)
        return session
    }

    /// What lineupd does at a session's end: the milestones it earns.
    func graduate(_ session: SessionRecord, _ program: String) throws -> [MilestoneRecord] {
        try log.recordGraduation(
            dogId: dog.id, sessionId: session.id, program: try #require(try Program.builtin(named: program)),
            phase: session.phase!, step: session.step!)
    }

    func lineupctl(_ arguments: [String]) throws -> ProcessResult {
        try runLineupctl(arguments + ["--db", path])
    }

    func json(_ arguments: [String]) throws -> [[String: Any]] {
        let run = try lineupctl(arguments + ["--json"])
        #expect(run.status == 0, "\(arguments): \(run.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]])
    }
}

/// The researcher's tools tell the truth: progress per program, graduation in the step's own
/// mode, `sessions --limit`, `stats`' columns and selection, station names in corrections.
@Suite struct ResearcherToolsTests {
    static let hits20 = Array(repeating: TrialOutcome.hit, count: 20)

    // MARK: Progress, one program at a time

    @Test func progressShowsEachProgramsOwnPhasesOnly() throws {
        var log = try ResearchLog()
        try log.session("study", "indicate/1", mode: .trainerLed, outcomes: [.hit, .hit])
        try log.session("research-5-station", "phase-3/1", mode: .doubleBlind, outcomes: [.hit, .miss])
        let reader = log.log.reader
        let dogId = log.dog.id.logText

        // Asked for one program: its phases and nothing else.
        let research = try reader.progress(
            dogId: dogId, program: try #require(try Program.builtin(named: "research-5-station")))
        #expect(research.map(\.phase) == ["initial", "phase-1", "phase-2", "phase-3"])
        #expect(research.allSatisfy { $0.program == "research-5-station" })
        #expect(research.first { $0.phase == "phase-3" }?.trials == 2)
        let study = try reader.progress(dogId: dogId, program: try #require(try Program.builtin(named: "study")))
        #expect(study.map(\.phase) == ["indicate", "target-scent", "discrimination"])
        #expect(study.first { $0.phase == "indicate" }?.sessions == 1)

        // Without --program: each program the dog ran, the latest session's first, each whole.
        let all = try reader.progress(dogId: dogId)
        #expect(
            all.map(\.program) == Array(repeating: "research-5-station", count: 4) + Array(repeating: "study", count: 3)
        )
        #expect(all.map(\.phase) == research.map(\.phase) + study.map(\.phase))

        // The text, a block per program, each with its own phases.
        let text = try log.lineupctl(["progress", "--dog", "Rex", "--program", "research-5-station"])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(!text.stdout.contains("target-scent") && !text.stdout.contains("indicate "), "\(text.stdout)")
        let both = try log.lineupctl(["progress", "--dog", "Rex"])
        let blocks = both.stdout.components(separatedBy: "\nProgram ")
        #expect(blocks.count == 2, "\(both.stdout)")
        #expect(
            blocks[0].hasPrefix("Program research-5-station (the latest session's)")
                && !blocks[0].contains("target-scent"))
        #expect(blocks[1].hasPrefix("study") && blocks[1].contains("target-scent") && !blocks[1].contains("phase-3"))
    }

    // MARK: Graduation counts the step's own mode only

    @Test func aSessionInAnotherModeDoesNotCountTowardTheStep() throws {
        var log = try ResearchLog()
        // study's target-scent/2 is automated: 90 % of the last 20. Twenty trainer-led hits on it
        // are logged, and pass nothing.
        let trainerLed = try log.session("study", "target-scent/2", mode: .trainerLed, outcomes: Self.hits20)
        #expect(try log.graduate(trainerLed, "study").isEmpty)
        let reader = log.log.reader
        let before = try #require(
            try reader.progress(dogId: log.dog.id.logText).first { $0.phase == "target-scent" }?.steps.first {
                $0.step == "2"
            })
        #expect(before.trials == 0 && before.otherModeTrials == 20 && before.percent == 0 && before.passed == nil)
        // Nineteen automated hits are not yet twenty: still not passed.
        let short = try log.session(
            "study", "target-scent/2", mode: .automated, outcomes: Array(Self.hits20.dropLast()))
        #expect(try log.graduate(short, "study").isEmpty)
        // One more, in the step's mode: passed, after 20 scored trials.
        let last = try log.session("study", "target-scent/2", mode: .automated, outcomes: [.hit])
        let earned = try log.graduate(last, "study")
        #expect(earned.map(\.step) == ["2"])
        #expect(earned.first?.criterion?.contains("met after 20 scored trials") == true, "\(earned)")
        let shown = try log.lineupctl(["progress", "--dog", "Rex"])
        #expect(shown.stdout.contains("20 trials in another mode not counted"), "\(shown.stdout)")
    }

    // MARK: sessions --limit

    @Test func sessionsLimitGivesTheLatest() throws {
        var log = try ResearchLog()
        var ids: [String] = []
        for _ in 0..<3 {
            ids.append(try log.session("study", "indicate/1", mode: .trainerLed, outcomes: [.hit]).id.logText)
        }
        let latest = try log.json(["sessions", "--limit", "2"]).map { $0["id"] as? String }
        #expect(latest == [ids[2], ids[1]])
        let turned = try log.json(["sessions", "--limit", "2", "--oldest-first"]).map { $0["id"] as? String }
        #expect(turned == [ids[1], ids[2]])
        #expect(try log.json(["sessions"]).count == 3)
        let text = try log.lineupctl(["sessions", "--limit", "1"])
        #expect(
            text.status == 0 && text.stdout.contains(String(ids[2].prefix(8)))
                && !text.stdout.contains(String(ids[1].prefix(8))))
        let bad = try log.lineupctl(["sessions", "--limit", "-1"])
        #expect(bad.status != 0 && bad.stderr.contains("--limit"), "\(bad.stderr)")
    }

    // MARK: stats: what each column counts, and which trials

    @Test func statsBySampleHeadsEachKindsVerdicts() throws {
        var log = try ResearchLog()
        let target = SampleRecord(label: "T-1", kind: .target, time: log.tick())
        let control = SampleRecord(label: "C-1", kind: .control, time: log.tick())
        let session = SessionRecord(dogId: log.dog.id, phase: "p", mode: .automated, bootId: nil, time: log.tick())
        var records: [any AppendableRecord] = [target, control, session]
        // Two trials: the dog indicates the control in the first (a false alert on C-1), the
        // target in the second (a hit on T-1, C-1 passed).
        for (n, atControl) in [true, false].enumerated() {
            let layout = [
                StationSlot(
                    station: 1, sampleId: target.id, kind: .target,
                    seen: StationSeen(
                        visited: true, indicated: !atControl, firstIndicationNs: atControl ? nil : 2_000_000_000)),
                StationSlot(
                    station: 2, sampleId: control.id, kind: .control,
                    seen: StationSeen(
                        visited: true, indicated: atControl, firstIndicationNs: atControl ? 2_000_000_000 : nil)),
            ]
            records.append(
                TrialRecord(
                    sessionId: session.id, number: n + 1, layout: layout, outcome: atControl ? .falseAlert : .hit,
                    indicatedStation: atControl ? 2 : 1, latencyNs: 2_000_000_000, started: log.tick(),
                    ended: log.tick()))
        }
        try log.log.append(records)
        let run = try log.lineupctl(["stats", "--by", "sample"])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines[0] == "Trials of all dogs; every program, step, mode and handler; all dates")
        let header = lines[1].split(separator: "  ", omittingEmptySubsequences: true).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        #expect(!header.contains("HIT") && !header.contains("FA"), "\(lines[1])")
        func cell(_ label: String, _ head: String) -> String? {
            guard let row = lines.first(where: { $0.hasPrefix(label + " ") }), let at = lines[1].range(of: head)
            else { return nil }
            let offset = lines[1].distance(from: lines[1].startIndex, to: at.lowerBound)
            return String(row.dropFirst(offset).prefix { $0 != " " })
        }
        #expect(cell("C-1", "CONTROL FA") == "1" && cell("C-1", "CONTROL PASSED") == "1")
        #expect(cell("C-1", "TARGET HIT") == "-" && cell("T-1", "TARGET HIT") == "1")
        // In the first trial the target was sniffed and passed: a miss on T-1 (docs/figures.md).
        #expect(cell("T-1", "TARGET MISSED") == "1" && cell("T-1", "CONTROL FA") == "-")
        #expect(cell("C-1", "KIND") == "control")
        // JSON carries the sample's kind beside its figures.
        let json = try log.json(["stats", "--by", "sample"])
        #expect(Set(json.compactMap { $0["kind"] as? String }) == ["target", "control"])
    }

    @Test func statsSelectsByModeStepProgramHandlerAndDate() throws {
        var log = try ResearchLog()
        try log.session("study", "target-scent/2", mode: .trainerLed, handler: "H-1", outcomes: [.hit, .hit, .hit])
        try log.session("study", "discrimination/2", mode: .doubleBlind, handler: "H-2", outcomes: [.miss, .hit])
        // Half a minute before the last session starts: its trials are after, the others' before.
        let since = log.wallNs + 30_000_000_000
        try log.session("research-5-station", "phase-3/1", mode: .doubleBlind, handler: "H-2", outcomes: [.falseAlert])
        func trials(_ options: [String]) throws -> Int {
            try log.json(["stats"] + options).reduce(0) {
                $0 + (($1["results"] as? [String: Any])?["trials"] as? Int ?? 0)
            }
        }
        #expect(try trials([]) == 6)
        #expect(try trials(["--mode", "double-blind"]) == 3)
        #expect(try trials(["--mode", "trainer-led"]) == 3)
        #expect(try trials(["--step", "discrimination/2"]) == 2)
        #expect(try trials(["--step", "discrimination"]) == 2)
        #expect(try trials(["--program", "research-5-station"]) == 1)
        #expect(try trials(["--handler", "H-2", "--program", "study"]) == 2)
        let sinceText = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(since) / 1e9))
        #expect(try trials(["--since", sinceText]) == 1)
        // The sensitivity of double-blind work alone: 1 hit, 1 miss (the false-alert trial's target missed).
        let blind = try #require(try log.json(["stats", "--mode", "double-blind"]).first)
        #expect((blind["sensitivity"] as? [String: Any])?["successes"] as? Int == 1)
        // The first line says which trials the table covers.
        let text = try log.lineupctl(["stats", "--mode", "double-blind", "--step", "discrimination"])
        #expect(
            text.stdout.hasPrefix(
                "Trials of all dogs, step discrimination, mode double-blind; every program and handler; all dates\n"),
            "\(text.stdout)")
        // The same selection in exports and the report.
        let exported = try log.lineupctl(["export", "--what", "trials", "--mode", "double-blind"])
        #expect(parseCSV(exported.stdout).count == 1 + 3)
        let sessions = try log.lineupctl(["export", "--what", "sessions", "--handler", "H-1"])
        #expect(parseCSV(sessions.stdout).count == 1 + 1)
        let report = try log.log.reader.report(LogFilter(mode: .doubleBlind))
        #expect(report.trials == 3 && report.sessions.count == 2)

        // Bad values: one line naming the option, the value and what the log has; exit 1.
        for (options, says) in [
            (["--mode", "blind"], "--mode blind: not a mode (trainer-led, automated, double-blind)"),
            (["--step", "discrimination/9"], "--step discrimination/9: no session of that step in the log (known: "),
            (["--step", "/1"], "--step /1: give PHASE/STEP"),
            (
                ["--program", "nope"],
                "--program nope: no session of a program so named in the log (known: research-5-station, study)"
            ),
            (["--handler", "H-9"], "--handler H-9: no handler so coded in the log (known: H-1, H-2)"),
            (["--since", "yesterday"], "--since yesterday: malformed date"),
            (["--until", "2025-13-01"], "--until 2025-13-01: malformed date"),
        ] {
            for command in [["stats"], ["export", "--what", "trials"], ["report"]] {
                let run = try log.lineupctl(command + options)
                #expect(run.status == 1 && run.stdout.isEmpty, "\(command + options)")
                #expect(run.stderr.hasPrefix("lineupctl: " + says), "\(command + options): \(run.stderr)")
                #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
            }
        }
    }

    // MARK: Corrections by the board's station names

    @Test func aCorrectionTakesTheStationsLetter() throws {
        var log = try ResearchLog()
        try log.session("research-5-station", "phase-3/1", mode: .doubleBlind, outcomes: [.hit, .hit])
        let trials = try log.log.reader.trials()
        let first = String(trials[0].id.prefix(8))
        let run = try log.lineupctl([
            "trial", "correct", first, "--outcome", "false-alert", "--indicated", "d", "--reason", "video: held at D",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try log.log.reader.trials().first { $0.corrects == trials[0].id }?.indicatedStation == 4)
        // A name the board does not have: one line listing the trial's stations.
        let second = String(trials[1].id.prefix(8))
        let bad = try log.lineupctl([
            "trial", "correct", second, "--outcome", "false-alert", "--indicated", "Q", "--reason", "x",
        ])
        #expect(bad.status == 1 && bad.stderr.split(separator: "\n").count == 1, "\(bad.stderr)")
        #expect(
            bad.stderr.contains(
                "--indicated Q: trial \(second) has no station so named (its stations: A (1), B (2), C (3), D (4), E (5))"
            ), "\(bad.stderr)")
        // A number still works; the target's own station is no false alert.
        let number = try log.lineupctl([
            "trial", "correct", second, "--outcome", "false-alert", "--indicated", "2", "--reason", "x",
        ])
        // Refused naming the station as the board does, the number beside (issue 32).
        #expect(
            number.status == 1 && number.stderr.contains("station B (2) held the target"), "\(number.stderr)")
    }

    @Test func helpPointsToTheDocsThatSayIt() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let dump = try runLineupctl(["--experimental-dump-help"])
        #expect(dump.status == 0)
        let help = dump.stdout.replacingOccurrences(of: "\\/", with: "/")
        #expect(!help.contains("README, \\\"What the figures mean\\\""), "the figures are defined in docs/figures.md")
        #expect(!help.contains("README, \\\"The report\\\""), "the report is described in docs/session-log.md")
        // Every docs/ file a help text points to exists.
        for match in help.matches(of: #/docs/[a-z-]+\.md/#) {
            let file = String(match.output)
            #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent(file).path), "\(file)")
        }
        for command in [["stats", "--help"], ["report", "--help"]] {
            let run = try runLineupctl(command)
            #expect(run.stdout.contains("docs/figures.md"), "\(command)")
        }
    }
}
