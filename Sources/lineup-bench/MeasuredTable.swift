import Foundation

/// The README's "What is measured" section as `lineup-bench table` writes it: one paragraph
/// naming the build, the machine, the date and the commit, then one row per benchmark run.
/// Rendered from the runs' JSON objects; rendered with every figure a placeholder, it is the
/// shape `--check` holds the README to (the rows and their commands, not the numbers).
struct MeasuredTable {
    static let begin = "<!-- lineup-bench table: begin (written by `lineup-bench table --write README.md`) -->"
    static let end = "<!-- lineup-bench table: end -->"

    /// Where and how the run was made.
    struct Machine {
        var build: String
        var commit: String
        var date: String
        var architecture: String
        var cores: String
        var cpu: String
        var system: String
        var swift: String
        var loadAtStart: String
        var loadAtEnd: String
        var seconds: String
    }

    /// One benchmark's result: its JSON object, read by key.
    struct Run {
        var json: [String: Any]

        /// A number to `digits` decimals, integers with thousands separators; `?` if absent.
        func number(_ key: String, digits: Int = 1, scale: Double = 1) -> String {
            MeasuredTable.format(json[key], digits: digits, scale: scale)
        }
        func text(_ key: String) -> String { json[key].map { "\($0)" } ?? "?" }
        func object(_ key: String) -> Run { Run(json: json[key] as? [String: Any] ?? [:]) }
    }

    /// The runs of one `lineup-bench table`, by the name `Row.runs` gives them.
    typealias Runs = [String: Run]

    struct Row: Sendable {
        var what: String
        var command: String
        var figure: @Sendable (Runs) -> String
    }

    /// The table's rows, in the order they are printed. The commands are those run
    /// (`BenchTable.plan`), the log's path written FILE.
    static let rows: [Row] = [
        Row(
            what:
                "edge → click samples accepted by ALSA (`null` PCM, 2 × 64 frames at 48 kHz), lineupd's engine and log feeder, beside a 10,000 edges/s storm",
            command: "`lineup-bench click --clicks 1000`",
            figure: { runs in
                let r = runs["click"] ?? Run(json: [:])
                return "p50 \(r.number("p50_us")) µs, p99 \(r.number("p99_us")) µs, max \(r.number("max_us")) µs "
                    + "(of the \(r.number("n")) clicks logged); "
                    + "\(r.number("dropped")) edges dropped; \(r.text("hot_thread_allocations")) allocations on the hot thread; "
                    + "peak RSS \(r.number("rss_mb")) MB; \(realtime(r))"
            }),
        Row(
            what: "the same while `lineup-bench log --rate 20000 --seconds 60` writes 20,000 events/s into another log",
            command: "`lineup-bench click --clicks 2000`",
            figure: { runs in
                let r = runs["click-beside-log"] ?? Run(json: [:])
                return "p50 \(r.number("p50_us")) µs, p99 \(r.number("p99_us")) µs, max \(r.number("max_us")) µs "
                    + "(of the \(r.number("n")) clicks logged); \(r.number("clicks_played")) of \(r.number("pulses")) pulses "
                    + "clicked; \(r.number("dropped")) edges dropped"
            }),
        Row(
            what: "logging 20,000 events/s for 60 s (beside the row above's clicks)",
            command: "`lineup-bench log --rate 20000 --seconds 60`",
            figure: { runs in
                let r = runs["log"] ?? Run(json: [:])
                // Events the full queue refused are not lost records of the station's but are not
                // written either: said, so a writer that fell behind does not read as keeping up.
                return
                    "\(r.number("written")) written (\(r.number("achieved_events_per_second", digits: 0)) events/s), "
                    + "\(r.number("overflow")) refused by the full queue, \(r.number("lost")) lost; on disk within "
                    + "\(r.number("p99_durable_lag_ms")) ms (p99), \(r.number("max_durable_lag_ms")) ms worst, "
                    + "every commit synced; batches p50 \(r.number("p50_batch_ms")) ms, max \(r.number("max_batch_ms")) ms; "
                    + "WAL at most \(r.number("max_wal_mb")) MiB"
            }),
        Row(
            what: "the engine alone, edge to click decision",
            command: "`lineup-bench engine`",
            figure: { runs in
                let r = runs["engine"] ?? Run(json: [:])
                return
                    "p50 \(r.number("p50_ns", digits: 2, scale: 1e-3)) µs, p99 \(r.number("p99_ns", digits: 2, scale: 1e-3)) µs, "
                    + "\(r.text("mallocs_on_decision")) allocations"
            }),
        Row(
            what: "10,000 simulated trials in virtual time",
            command: "`lineup-bench block --trials 10000`",
            figure: { runs in "\(runs["block"]?.number("seconds", digits: 3) ?? "?") s" }),
        Row(
            what:
                "a log of 100,000 trials and 1,000,000 events filled (10 dogs × 250 sessions × 40 trials), the next three rows' log",
            command:
                "`lineup-bench fill --db FILE --dogs 10 --sessions-per-dog 250 --trials-per-session 40 --events-per-trial 10`",
            figure: { runs in
                let r = runs["fill"] ?? Run(json: [:])
                return "\(r.number("seconds")) s; \(r.object("summary").number("trials")) trials, "
                    + "\(r.object("summary").number("events")) events"
            }),
        Row(
            what: "export of 1,000,000 events as CSV (best of 3)",
            command: "`lineup-bench export --db FILE`",
            figure: { runs in
                let r = runs["export"] ?? Run(json: [:])
                return
                    "\(r.number("ratio", digits: 2)) × `sqlite3 -csv`'s time (\(r.number("lineupctl_seconds", digits: 2)) s "
                    + "against \(r.number("sqlite3_seconds", digits: 2)) s), \(r.number("lineupctl_max_rss_mib")) MB peak"
            }),
        Row(
            what: "`stats` over 100,000 trials, by dog, session, sample and station",
            command: "`lineup-bench stats --db FILE`",
            figure: { runs in
                let r = runs["stats"]?.object("seconds") ?? Run(json: [:])
                return "\(r.number("dog", digits: 2)) s, \(r.number("session", digits: 2)) s, "
                    + "\(r.number("sample", digits: 2)) s, \(r.number("station", digits: 2)) s"
            }),
        Row(
            what: "the HTML report over 100,000 trials (best of 3)",
            command: "`lineup-bench report --db FILE`",
            figure: { runs in
                let r = runs["report"] ?? Run(json: [:])
                return "\(r.number("seconds", digits: 2)) s, \(r.number("bytes", digits: 1, scale: 1e-6)) MB file"
            }),
        Row(
            what: "a simulated 100-trial session on storage (SD card wear)",
            command: "`lineup-bench storage --trials 100 --speed 30`",
            figure: { runs in
                let r = runs["storage"] ?? Run(json: [:])
                return
                    "\(r.number("db_bytes", digits: 2, scale: 1e-6)) MB log (\(r.number("bytes_per_event", digits: 0)) B/event); "
                    + "\(r.number("written_bytes", digits: 1, scale: 1e-6)) MB written to storage "
                    + "(\(r.number("written_bytes_per_event", digits: 1, scale: 1e-3)) kB/event)"
            }),
        Row(
            what: "lineupd: start to READY=1; idle CPU; peak memory over a 300-trial block at 30×",
            command: "`lineup-bench daemon --trials 300`",
            figure: { runs in
                let r = runs["daemon"] ?? Run(json: [:])
                return "\(r.number("ready_ms")) ms; \(r.number("idle_cpu_percent")) %; \(r.number("rss_peak_mb")) MB"
            }),
        Row(
            what: "lineupd's memory over many sessions: session start, ready and end, 1,000 times",
            command: "`lineup-bench sessions --cycles 1000`",
            figure: { runs in
                let r = runs["sessions"] ?? Run(json: [:])
                return "anonymous memory +\(r.number("growth_kb_from_100", digits: 0)) kB from the 100th cycle to the "
                    + "1,000th (\(r.number("growth_bytes_per_session", digits: 0)) B a session), "
                    + "\(r.number("rss_anon_kb_at_end", digits: 1, scale: 1.0 / 1024)) MiB at the end"
            }),
    ]

    private static func realtime(_ run: Run) -> String {
        let said = run.text("realtime")
        return said.hasPrefix("SCHED_FIFO")
            ? "hot thread SCHED_FIFO, memory locked" : "hot thread not real-time (\(said))"
    }

    /// The section: the paragraph, the table, between the README's markers.
    static func render(_ machine: Machine, _ runs: Runs) -> String {
        var lines = [
            begin,
            "Measured by `lineup-bench table` in one run of \(machine.seconds) s: \(machine.build) build at commit "
                + "\(machine.commit), \(machine.date); \(machine.architecture), \(machine.cores) cores (\(machine.cpu)), "
                + "\(machine.system), \(machine.swift); load average \(machine.loadAtStart) at the start and "
                + "\(machine.loadAtEnd) at the end (the machine may be shared with other work: the figures are noisy).",
            "",
            "| what | command | figure |",
            "| --- | --- | --- |",
        ]
        for row in rows { lines.append("| \(row.what) | \(row.command) | \(row.figure(runs)) |") }
        lines.append(end)
        return lines.joined(separator: "\n")
    }

    /// Stands for every figure and every fact about the run in `shape`.
    static let placeholder: Character = "\u{1}"

    /// The section with every figure and fact a placeholder: what `check` compares with.
    static var shape: [String] {
        let p = String(placeholder)
        let machine = Machine(
            build: p, commit: p, date: p, architecture: p, cores: p, cpu: p, system: p, swift: p, loadAtStart: p,
            loadAtEnd: p, seconds: p)
        return render(machine, [:]).split(separator: "\n", omittingEmptySubsequences: false).map { line in
            // Each figure cell is one placeholder: its text is free, its place is not.
            guard line.hasPrefix("| "), !line.hasPrefix("| what"), !line.hasPrefix("| ---") else { return String(line) }
            var cells = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            cells[cells.count - 2] = " \(p) "
            return cells.joined(separator: "|")
        }
    }

    /// Why `text`'s section does not have the shape `render` writes, or nil if it has.
    static func check(_ text: String) -> String? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let first = lines.firstIndex(of: begin) else { return "no line \(begin)" }
        guard let last = lines[first...].firstIndex(of: end) else { return "no line \(end) after the table's first" }
        let section = Array(lines[first...last])
        let expected = shape
        for (index, template) in expected.enumerated() {
            let lineNumber = first + index + 1
            guard index < section.count else { return "line \(lineNumber): the table ends early" }
            if !matches(section[index], template) {
                let expectedText = template.replacingOccurrences(of: String(placeholder), with: "…")
                return "line \(lineNumber): \(section[index])\n  expected the shape: \(expectedText)"
            }
        }
        if section.count > expected.count {
            return "line \(first + expected.count): \(section[expected.count - 1]) is not where the table ends"
        }
        return nil
    }

    /// Whether `line` is `template` with each placeholder standing for a non-empty text without `|`.
    static func matches(_ line: String, _ template: String) -> Bool {
        let parts = template.split(separator: placeholder, omittingEmptySubsequences: false).map(String.init)
        guard let head = parts.first, let tail = parts.last, parts.count > 1 else { return line == template }
        guard line.count >= head.count + tail.count, line.hasPrefix(head), line.hasSuffix(tail) else { return false }
        var rest = line.dropFirst(head.count).dropLast(tail.count)
        var gaps: [Substring] = []
        for part in parts.dropFirst().dropLast() {
            // The first occurrence after a non-empty gap: a figure holds no `|`, so a cell's end is found.
            guard let found = rest.dropFirst().range(of: part) else { return false }
            gaps.append(rest[..<found.lowerBound])
            rest = rest[found.upperBound...]
        }
        gaps.append(rest)
        return gaps.allSatisfy { !$0.isEmpty && !$0.contains("|") }
    }

    static func format(_ value: Any?, digits: Int, scale: Double) -> String {
        let number: Double
        switch value {
        case let v as Int: number = Double(v)
        case let v as Double: number = v
        case let v as NSNumber: number = v.doubleValue
        default: return "?"
        }
        let scaled = number * scale
        if digits == 0 || (scale == 1 && value is Int) {
            return grouped(Int(scaled.rounded()))
        }
        let power = pow(10.0, Double(digits))
        let rounded = (scaled * power).rounded() / power
        let whole = Int(rounded.rounded(.towardZero))
        var fraction = String(Int((abs(rounded - Double(whole)) * power).rounded()))
        while fraction.count < digits { fraction = "0" + fraction }
        return (rounded < 0 && whole == 0 ? "-" : "") + grouped(whole) + "." + fraction
    }

    static func grouped(_ value: Int) -> String {
        let digits = String(abs(value))
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return (value < 0 ? "-" : "") + out
    }
}
