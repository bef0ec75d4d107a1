import Figures
import Foundation
import ProgramFiles
import SessionLog
import Testing
import TrainingEngine

/// `lineupctl report` as a browser sees it: seeded logs are rendered, headless Chromium loads the
/// file (no network, no script), and the numbers on each chart element in the DOM it built must
/// equal `lineupctl stats --json` and the logged events. Chromium is required: CI installs it
/// (.ci/run); without it these tests fail rather than pass unseen.
@Suite("lineupctl report in a browser", .serialized, .ownThreads)
struct ReportBrowserTests {
    /// A new empty directory, removed by the caller.
    func scratch() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("report-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// The Chromium on PATH, or a recorded failure saying how to install it.
    func chromium() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            for name in ["chromium", "chromium-headless-shell", "chromium-browser"] {
                let candidate = "\(dir)/\(name)"
                if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            }
        }
        Issue.record("Chromium is not installed: apt-get install chromium (CI installs it in .ci/run)")
        return nil
    }

    /// Runs headless Chromium on the file; its stdout (the DOM with --dump-dom). Killed after 90 s.
    func headless(_ browser: String, _ arguments: [String], profile: String) throws -> (status: Int32, stdout: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: browser)
        process.arguments =
            ["--headless=new", "--disable-gpu", "--no-sandbox", "--no-first-run", "--user-data-dir=\(profile)"]
            + arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        let timer = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 90, execute: timer)
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        timer.cancel()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Renders the log, loads it in Chromium, takes a screenshot; the DOM Chromium built.
    func renderedDOM(db: String, dir: String, browser: String) throws -> String {
        let report = "\(dir)/report.html"
        let run = try lineupctl(["report", "--db", db, "-o", report])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.isEmpty, "with -o nothing goes to stdout")
        let dom = try headless(browser, ["--dump-dom", "file://\(report)"], profile: "\(dir)/profile")
        #expect(dom.status == 0)
        let shot = "\(dir)/report.png"
        let screenshot = try headless(
            browser, ["--screenshot=\(shot)", "--window-size=1200,3000", "file://\(report)"], profile: "\(dir)/profile")
        #expect(screenshot.status == 0)
        let png = try Data(contentsOf: URL(fileURLWithPath: shot))
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count > 20_000, "a real screenshot")
        return dom.stdout
    }

    // MARK: Reading the DOM

    /// The attributes of each `<tag class="name ...">` inside the first element whose opening tag
    /// contains `within` (up to the matching close of that element's tag), in document order.
    func elements(_ dom: String, _ tag: String, _ className: String, within: String? = nil) -> [[String: String]] {
        var text = Substring(dom)
        if let within {
            guard let start = dom.range(of: within) else { return [] }
            let open = dom[..<start.lowerBound].range(of: "<", options: .backwards)!.lowerBound
            let outerTag = dom[dom.index(after: open)...].prefix { $0.isLetter }
            let end =
                dom.range(of: "</\(outerTag)>", range: start.upperBound..<dom.endIndex)?.upperBound ?? dom.endIndex
            text = dom[open..<end]
        }
        var found: [[String: String]] = []
        let pattern = try! Regex("<\(tag) class=\"\(className)[\" ]([^>]*)>")
        for match in text.matches(of: pattern) {
            found.append(attributes(String(match.output[0].substring!)))
        }
        return found
    }

    /// The points of every chart of this class (one chart per dog), in document order.
    func chartPoints(_ dom: String, _ chart: String) -> [[String: String]] {
        dom.components(separatedBy: "class=\"chart \(chart)\"").dropFirst().flatMap {
            elements($0.components(separatedBy: "</svg>")[0], "g", "point")
        }
    }

    func attributes(_ tag: String) -> [String: String] {
        var out: [String: String] = [:]
        for m in tag.matches(of: #/([a-z][a-z0-9-]*)="([^"]*)"/#) {
            out[String(m.output.1)] = String(m.output.2).replacingOccurrences(of: "&quot;", with: "\"")
                .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
                .replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&amp;", with: "&")
        }
        return out
    }

    func json(_ arguments: [String]) throws -> [[String: Any]] {
        let out = try lineupctl(arguments + ["--json"])
        #expect(out.status == 0, "\(arguments): \(out.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]])
    }

    /// A proportion on an element (`data-NAME`, `-successes`, `-trials`, `-lower`, `-upper`) equals
    /// the one `stats --json` gives, exactly.
    func expectProportion(
        _ element: [String: String], _ name: String, _ expected: Any?, _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let p = expected as? [String: Any] else {
            Issue.record("\(what): stats has no \(name)", sourceLocation: sourceLocation)
            return
        }
        #expect(
            element["data-\(name)-successes"] == "\(p["successes"] as! Int)", "\(what) \(name)",
            sourceLocation: sourceLocation)
        #expect(
            element["data-\(name)-trials"] == "\(p["trials"] as! Int)", "\(what) \(name)",
            sourceLocation: sourceLocation)
        for (key, attribute) in [("value", name), ("lower", "\(name)-lower"), ("upper", "\(name)-upper")] {
            let stats = (p[key] as? NSNumber)?.doubleValue
            let shown = element["data-\(attribute)"].flatMap(Double.init)
            #expect(
                same(shown, stats), "\(what) \(attribute): report \(shown as Any), stats \(stats as Any)",
                sourceLocation: sourceLocation)
        }
    }

    /// Equal but for the last bit or two: both sides print the same Double exactly, but
    /// swift-corelibs-foundation's JSONSerialization reads some back one ulp off.
    func same(_ a: Double?, _ b: Double?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return abs(a - b) <= 1e-12 * max(1, abs(b))
    }

    func int(_ value: Any?) -> Int { (value as? NSNumber)?.intValue ?? -1 }

    /// Each sample's row carries `stats --by sample`'s uses and rate.
    func checkSamples(_ dom: String, db: String) throws {
        let samples = try json(["stats", "--db", db, "--by", "sample"])
        let sampleRows = elements(dom, "tr", "sample", within: "<table class=\"samples\"")
        #expect(sampleRows.count == samples.count)
        for s in samples {
            let label = try #require(s["group"] as? String)
            let row = try #require(sampleRows.first { $0["data-sample"] == label }, "sample \(label)")
            let results = try #require(s["results"] as? [String: Any])
            let p = try #require(s["presentations"] as? [String: Any])
            #expect(row["data-uses"] == "\(int(results["trials"]))")
            if row["data-kind"] == "target" {
                expectProportion(row, "rate", s["sensitivity"], "sample \(label)")
            } else if row["data-kind"] != "blank" {
                #expect(row["data-rate-successes"] == "\(int(p["false_alerts"]))")
                #expect(row["data-rate-trials"] == "\(int(p["false_alerts"]) + int(p["correct_rejections"]))")
            }
            #expect(row["data-flagged"] == "true" || row["data-flagged"] == "false")
        }

    }

    // MARK: The tests

    /// Two seeded simulated blocks (the virtual dog's two sessions): every chart is there, and the
    /// learning curve, latency, position bias, stations, samples and sessions table carry
    /// `stats`'s numbers exactly.
    @Test func chartsCarryTheNumbersOfStats() throws {
        guard let browser = chromium() else { return }
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = "\(dir)/log.db"
        for seed in ["3", "4"] {
            let run = try lineupd(["--simulate", "--fast", "--trials", "200", "--seed", seed, "--db", db])
            #expect(run.status == 0, "\(run.stderr)")
        }
        let dom = try renderedDOM(db: db, dir: dir, browser: browser)

        // By session: the learning curve's points, the latency points and the sessions table.
        let sessions = try json(["stats", "--db", db, "--by", "session"])
        #expect(sessions.count == 2)
        #expect(dom.components(separatedBy: "class=\"chart learning-curve\"").count - 1 == 1, "a curve per dog")
        #expect(dom.components(separatedBy: "class=\"chart latency\"").count - 1 == 1, "a latency chart per dog")
        #expect(dom.components(separatedBy: "class=\"chart position-bias\"").count - 1 == 1, "a matrix per dog")
        let points = chartPoints(dom, "learning-curve")
        let latencies = chartPoints(dom, "latency")
        #expect(points.count == 2 && latencies.count == 2)
        let rows = elements(dom, "tr", "session", within: "<table class=\"sessions\"")
        #expect(rows.count == 2)
        for s in sessions {
            let id = try #require(s["group_id"] as? String)
            let point = try #require(points.first { $0["data-session"] == id }, "learning curve point of \(id)")
            let results = try #require(s["results"] as? [String: Any])
            #expect(point["data-trials"] == "\(int(results["trials"]))")
            expectProportion(point, "trial-accuracy", s["trial_accuracy"], "session \(id)")
            expectProportion(point, "sensitivity", s["sensitivity"], "session \(id)")
            expectProportion(point, "specificity", s["specificity"], "session \(id)")
            let latency = try #require(s["latency"] as? [String: Any])
            let lpoint = try #require(latencies.first { $0["data-session"] == id }, "latency point of \(id)")
            for (key, attribute) in [("median", "median-ms"), ("q1", "q1-ms"), ("q3", "q3-ms")] {
                #expect(
                    same(lpoint["data-\(attribute)"].flatMap(Double.init), (latency[key] as? NSNumber)?.doubleValue))
            }
            #expect(lpoint["data-n"] == "\(int(latency["n"]))")
            let row = try #require(rows.first { $0["data-session"] == id }, "sessions table row of \(id)")
            for (key, attribute) in [
                ("hits", "hits"), ("misses", "misses"), ("false_alerts", "false-alerts"),
                ("correct_rejections", "correct-rejections"), ("aborted", "aborted"), ("trials", "trials"),
            ] {
                #expect(row["data-\(attribute)"] == "\(int(results[key]))", "session \(id) \(key)")
            }
        }

        // By station, per dog: the station table, and the matrix's "all trials" row and its columns.
        let dogs = try json(["stats", "--db", db, "--by", "dog"])
        #expect(dogs.count == 1)
        for dog in dogs {
            let dogId = try #require(dog["group_id"] as? String)
            let section = try #require(
                dom.components(separatedBy: "data-dog=\"\(dogId)\"").dropFirst().first?.components(
                    separatedBy: "</section>"
                ).first, "a section for dog \(dogId)")
            let byStation = try json(["stats", "--db", db, "--by", "station", "--dog", dogId])
            let table = elements(section, "tr", "station")
            let cells = elements(section, "g", "cell")
            #expect(table.count == byStation.count && !table.isEmpty)
            for s in byStation {
                let station = try #require(s["group_id"] as? String)
                let row = try #require(table.first { $0["data-station"] == station }, "station \(station)")
                let p = try #require(s["presentations"] as? [String: Any])
                let results = try #require(s["results"] as? [String: Any])
                #expect(row["data-trials"] == "\(int(results["trials"]))")
                #expect(row["data-hits"] == "\(int(p["hits"]))")
                #expect(row["data-misses"] == "\(int(p["misses"]))")
                #expect(row["data-false-alerts"] == "\(int(p["false_alerts"]))")
                #expect(row["data-correct-rejections"] == "\(int(p["correct_rejections"]))")
                expectProportion(row, "sensitivity", s["sensitivity"], "station \(station)")
                expectProportion(row, "specificity", s["specificity"], "station \(station)")
                let indications = int(p["hits"]) + int(p["false_alerts"]) + int(p["blank_indicated"])
                let presented = int(results["trials"]) - int(results["aborted"]) - int(s["trials_without_station_data"])
                let all = try #require(cells.first { $0["data-target"] == "all" && $0["data-station"] == station })
                #expect(all["data-indications"] == "\(indications)" && all["data-presented"] == "\(presented)")
                // The rows by target position add up to the station's whole column.
                let column = cells.filter { $0["data-target"] != "all" && $0["data-station"] == station }
                #expect(column.reduce(0) { $0 + Int($1["data-indications"]!)! } == indications)
                #expect(column.reduce(0) { $0 + Int($1["data-presented"]!)! } == presented)
            }
        }

        // A --fast block's samples have no ids: the samples table is checked on the filler's log.
        try checkSamples(dom, db: db)

        // Health: both blocks ended, no faults; no clicks in a --fast log, and the report says so.
        let endings = elements(dom, "tr", "ending")
        #expect(endings.first { $0["data-ended-how"] == "ended" }?["data-count"] == "2")
        #expect(elements(dom, "tr", "fault").first?["data-fault"] == "none")
        #expect(dom.contains("No clicks with a measured onset"))
        #expect(!dom.contains("<script"), "readable without script")
        #expect(!dom.contains("http://") || !dom.contains("src=\"http"), "nothing fetched")
    }

    /// A log with clicks, faults' absence and several sessions per dog (the seeded filler): the
    /// click timing chart's p50, p99 and worst equal a recomputation from `events --kind click`.
    @Test func clickTimingEqualsTheLoggedClicks() throws {
        guard let browser = chromium() else { return }
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = "\(dir)/log.db"
        let fill = try lineupBench([
            "fill", "--db", db, "--dogs", "2", "--sessions-per-dog", "6", "--trials-per-session", "12",
            "--events-per-trial", "4", "--seed", "7",
        ])
        #expect(fill.status == 0, "\(fill.stderr)")
        let dom = try renderedDOM(db: db, dir: dir, browser: browser)
        let events = try json(["events", "--db", db, "--kind", "click", "--limit", "0"])
        var bySession: [String: [Double]] = [:]
        for e in events {
            guard let onset = e["click_onset_latency_ns"] as? NSNumber, let session = e["session_id"] as? String
            else { continue }
            bySession[session, default: []].append(onset.doubleValue / 1e6)
        }
        #expect(!bySession.isEmpty)
        let points = chartPoints(dom, "click-latency")
        #expect(points.count == 12, "a point per session")
        func quantile(_ sorted: [Double], _ p: Double) -> Double {
            let h = Double(sorted.count - 1) * p
            let lo = Int(h.rounded(.down))
            let hi = min(sorted.count - 1, lo + 1)
            return sorted[lo] + (h - Double(lo)) * (sorted[hi] - sorted[lo])
        }
        for (session, values) in bySession {
            let sorted = values.sorted()
            let point = try #require(points.first { $0["data-session"] == session }, "click point of \(session)")
            #expect(point["data-clicks"] == "\(sorted.count)")
            #expect(abs(Double(point["data-p50-ms"]!)! - quantile(sorted, 0.5)) < 1e-9)
            #expect(abs(Double(point["data-p99-ms"]!)! - quantile(sorted, 0.99)) < 1e-9)
            #expect(Double(point["data-worst-ms"]!)! == sorted.last!)
        }
        #expect(!elements(dom, "tr", "sample", within: "<table class=\"samples\"").isEmpty)
        try checkSamples(dom, db: db)
        // The same log's learning curve agrees with stats too.
        let sessions = try json(["stats", "--db", db, "--by", "session"])
        let curve = chartPoints(dom, "learning-curve")
        #expect(curve.count == sessions.count)
        for s in sessions {
            let id = try #require(s["group_id"] as? String)
            let point = try #require(curve.first { $0["data-session"] == id })
            expectProportion(point, "sensitivity", s["sensitivity"], "session \(id)")
            expectProportion(point, "specificity", s["specificity"], "session \(id)")
            expectProportion(point, "trial-accuracy", s["trial_accuracy"], "session \(id)")
        }
    }

    /// A dog trained on two programs, in two modes on one step, with two sessions in the same
    /// minute: the learning curve draws one line per (program, step, mode), a distinct label per
    /// session, a count criterion as how far along it the dog is (never as an accuracy), names
    /// the phase of each milestone, and the sessions table names program, station and notes.
    @Test func theLearningCurveSaysWhatEachLineIs() throws {
        guard let browser = chromium() else { return }
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = "\(dir)/log.db"
        let log = try SessionLog(path: db, create: true)
        let dog = DogRecord(name: "Rex", time: LogTime(monoNs: 1, wallNs: 1_740_819_600_000_000_000))
        try log.append([dog])
        var wall = dog.time.wallNs
        func at(_ gap: Int64) -> LogTime {
            wall += gap
            return LogTime(monoNs: wall - dog.time.wallNs, wallNs: wall)
        }
        var programs: [String: UUID] = [:]
        // A session of `outcomes` on five stations, the target at 2.
        func session(_ program: String, _ step: String, _ mode: TrainingMode, _ outcomes: [TrialOutcome], gap: Int64)
            throws -> SessionRecord
        {
            if programs[program] == nil {
                let text = try #require(try Program.builtin(named: program)).text
                programs[program] = try log.logProgram(ProgramRecord(name: program, content: text))
            }
            let parts = step.split(separator: "/").map(String.init)
            let s = SessionRecord(
                dogId: dog.id, programId: programs[program], phase: parts[0], step: parts[1], exercise: "1", mode: mode,
                settings: #"{"stations":"A,B,C,D,E"}"#, station: "pi-7", bootId: nil, time: at(gap))
            var records: [any AppendableRecord] = [s]
            for (n, outcome) in outcomes.enumerated() {
                let layout = (1...5).map { station in
                    StationSlot(
                        station: station, sampleId: nil, kind: station == 2 ? .target : .control,
                        seen: StationSeen(
                            visited: true, indicated: outcome == .hit && station == 2,
                            firstIndicationNs: outcome == .hit && station == 2 ? 2_000_000_000 : nil))
                }
                records.append(
                    TrialRecord(
                        sessionId: s.id, number: n + 1, layout: layout, outcome: outcome,
                        indicatedStation: outcome == .hit ? 2 : nil, latencyNs: outcome == .hit ? 2_000_000_000 : nil,
                        started: at(1_000_000), ended: at(1_000_000)))
            }
            records.append(SessionEnd(sessionId: s.id, how: .ended, time: at(1_000_000)))
            try log.append(records)
            return s
        }
        let twenty = (0..<20).map { $0 % 10 == 9 ? TrialOutcome.miss : .hit }
        let first = try session("study", "target-scent/2", .automated, twenty, gap: 60_000_000_000)
        try log.append([SessionNote(sessionId: first.id, kind: .comment, text: "windy", time: at(1_000_000))])
        // Trainer-led on the automated step, then automated again in the same minute.
        _ = try session("study", "target-scent/2", .trainerLed, [.hit, .miss], gap: 300_000_000_000)
        let third = try session("study", "target-scent/2", .automated, twenty, gap: 5_000_000_000)
        try log.append([
            SessionNote(sessionId: third.id, kind: .improvement, text: "shorter rounds", time: at(1_000_000))
        ])
        _ = try log.recordGraduation(
            dogId: dog.id, sessionId: third.id, program: try #require(try Program.builtin(named: "study")),
            phase: "target-scent", step: "2")
        // research-5-station's phase-1/1: 30 in a row, or 40 correct within at least 100 trials.
        let block = (0..<40).map { $0 % 4 == 3 ? TrialOutcome.miss : .hit }
        for _ in 0..<3 { _ = try session("research-5-station", "phase-1/1", .automated, block, gap: 600_000_000_000) }

        let dom = try renderedDOM(db: db, dir: dir, browser: browser)
        let points = chartPoints(dom, "learning-curve")
        #expect(points.count == 6, "a point per session")
        // (a) One line per (program, step, mode): each trial-accuracy polyline joins the points of
        // one group only, all of them.
        let curve = try #require(dom.components(separatedBy: "class=\"chart learning-curve\"").dropFirst().first)
            .components(separatedBy: "</svg>")[0]
        let lines = elements(curve, "polyline", "line trial-accuracy")
        let groups = Set(points.compactMap { $0["data-group"] })
        #expect(
            groups == [
                "study · target-scent/2 · automated", "study · target-scent/2 · trainer-led",
                "research-5-station · phase-1/1 · automated",
            ])
        for line in lines {
            let group = try #require(line["data-group"])
            #expect(line["data-points"] == "\(points.filter { $0["data-group"] == group }.count)", "\(group)")
        }
        #expect(lines.count == 2, "the trainer-led line has one point: no polyline")
        // (b) Every session is one point and one printed label, all distinct, to the second here.
        let labels = curve.matches(of: #/<text class="tick x-label"[^>]*>([^<]*)</text>/#).map { String($0.output.1) }
        #expect(labels.count == 6 && Set(labels).count == 6, "\(labels)")
        #expect(labels == points.compactMap { $0["data-label"] })
        #expect(labels.allSatisfy { $0.count == 14 }, "month-day hour:minute:second: \(labels)")
        // (c) The count criterion: no line at 40 %; met at 100 % of its own progress line.
        let criteria = elements(curve, "g", "criterion")
        #expect(!criteria.contains { $0["data-level"] == "0.4" }, "\(criteria)")
        let count = try #require(
            criteria.first { ($0["data-criterion"] ?? "").contains("40 correct in ≥ 100 trials: met") })
        // Each criterion with its own verdict on the 120 trials (never a run of 30 correct).
        #expect(
            count["data-level"] == "1.0"
                && count["data-criterion"] == "30 in a row: not met · 40 correct in ≥ 100 trials: met")
        let counted = points.filter { $0["data-step"] == "phase-1/1" }
        #expect(counted.map { $0["data-count-correct"] } == ["30", "60", "90"])
        #expect(counted.map { $0["data-count-progress"] } == ["0.4", "0.8", "1.0"])
        #expect(points.filter { $0["data-mode"] == "trainer-led" }.allSatisfy { $0["data-rolling-accuracy"] == nil })
        // (d) A milestone names its phase.
        #expect(curve.contains("★ target-scent/2 passed"), "the milestone's label")
        // (e) The sessions table: program, step, mode, station, notes and suggestions.
        let rows = elements(dom, "tr", "session", within: "<table class=\"sessions\"")
        #expect(rows.count == 6)
        #expect(rows.allSatisfy { $0["data-station"] == "pi-7" && $0["data-program"] != nil })
        #expect(rows.map { $0["data-mode"] ?? "" }.filter { $0 == "trainer-led" }.count == 1)
        let table = try #require(dom.components(separatedBy: "<table class=\"sessions\"").last)
        for words in [
            "<th>program</th>", "<th>station</th>", "windy", "suggestion: shorter rounds", "research-5-station",
        ] {
            #expect(table.contains(words), "\(words)")
        }
    }

    /// Bad input: one line naming what is wrong, exit 1, and an existing file left as it was.
    @Test func badInputWritesNothing() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = "\(dir)/log.db"
        #expect(try lineupd(["--simulate", "--fast", "--trials", "20", "--seed", "3", "--db", db]).status == 0)
        let existing = "\(dir)/old.html"
        try Data("old".utf8).write(to: URL(fileURLWithPath: existing))
        let unknown = try lineupctl(["report", "--db", db, "--dog", "Nobody", "-o", existing])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.hasPrefix("lineupctl: ") && unknown.stderr.split(separator: "\n").count == 1)
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "old")
        let badDate = try lineupctl(["report", "--db", db, "--since", "yesterday"])
        #expect(badDate.status == 1 && badDate.stdout.isEmpty)
        let noDir = try lineupctl(["report", "--db", db, "-o", "\(dir)/missing/report.html"])
        #expect(noDir.status == 1)
        #expect(noDir.stderr.contains("missing"), "\(noDir.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".tmp") }
        #expect(left.isEmpty, "no temporary file left: \(left)")
    }
}
