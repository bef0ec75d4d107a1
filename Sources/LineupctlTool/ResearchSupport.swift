import ArgumentParser
import Figures
import Foundation
import ReadingRows
import SessionLog
import StationControl
import StationLogging
import TrainingEngine

/// Where the log is and how to print: shared by every researcher's command.
struct LogOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The session log (default: $LINEUP_DB, else \(SessionLog.defaultPath)).", valueName: "path"))
    var db: String?

    @Flag(name: .long, help: "Print one JSON document (an array for lists, an object otherwise).")
    var json = false

    var path: String { db ?? SessionLog.pathFromEnvironment }

    /// The database file the person named (`--db` or `$LINEUP_DB`), if any.
    var namedPath: String? {
        db ?? ProcessInfo.processInfo.environment["LINEUP_DB"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The log opened read-only (safe while lineupd writes) and checked first, so a damaged
    /// file is refused in one line instead of read as if whole. By default every table but
    /// the raw events, which a command that shows none need not pay for (the project's choice,
    /// by the figures in docs/session-log.md, "A damaged log"); commands that read events,
    /// copy or merge the log or report on it ask for more.
    func reader(checking check: LogCheck = .allButEvents) throws -> LogReader {
        try SessionLog.openReader(path: path, check: check)
    }
}

/// Where the researcher's additions go. A lineupd answering on the socket owns the station's
/// log (on a board the group may only read it), so they go to it; `$LINEUP_DB` only chooses
/// the log that reads use. `--db FILE` writes FILE directly only when it is not the log a
/// running lineupd writes; with no lineupd answering, the named file is written directly (a
/// station with no daemon, or a file being prepared), and lineupctl says so in one line.
struct AdditionOptions: ParsableArguments {
    @OptionGroup var log: LogOptions

    @Option(
        name: .long,
        help: ArgumentHelp(
            "lineupd's control socket (default: $\(ControlProtocol.socketEnvironmentVariable), else \(ControlProtocol.defaultSocketPath)).",
            valueName: "path"))
    var socket: String?

    @Flag(help: "With --db: create the database file if it does not exist yet.")
    var create = false

    /// Adds through whichever target applies and returns the new row's id.
    func add(
        direct: (SessionLog) throws -> UUID,
        daemon: (ControlClient) throws(ControlClientError) -> String
    ) throws -> String {
        try add(direct: { try direct($0).uuidString.lowercased() }, daemon: daemon)
    }

    /// Adds through whichever target applies and returns what was added (ids, lower case).
    func add<Added>(
        direct: (SessionLog) throws -> Added,
        daemon: (ControlClient) throws(ControlClientError) -> Added
    ) throws -> Added {
        if socket != nil, log.db != nil {
            throw SessionLogError.invalidInput("give --db (write a database file) or --socket (ask lineupd), not both")
        }
        if create, log.namedPath == nil {
            throw SessionLogError.invalidInput("--create applies to a database file named with --db")
        }
        let client = ControlClient(path: ControlClient.path(option: socket))
        let writes: String?
        do {
            writes = try client.about().log
        } catch {
            switch error {
            case .notRunning, .staleSocket:
                guard let path = log.namedPath else {
                    throw SessionLogError.invalidInput(
                        "lineupd is not running (nothing answers on \(client.path)): start it, or add to a database file with --db PATH"
                    )
                }
                let id = try direct(SessionLog(path: path, create: create))
                note("written to \(path) directly: no lineupd answers on \(client.path) (a station with no daemon)")
                return id
            case .refused(let refusal) where refusal.code == .unknownRequest:
                writes = nil  // an older lineupd, which cannot say which log it writes
            default:
                throw error
            }
        }
        if let path = log.db, let writes, !sameFile(path, writes) {
            let id = try direct(SessionLog(path: path, create: create))
            note("written to \(path) directly: lineupd on \(client.path) writes another log, \(writes)")
            return id
        }
        let id = try daemon(client)
        if log.db == nil, let path = log.namedPath, let writes, !sameFile(path, writes) {
            note("added to \(writes), the log lineupd writes; $LINEUP_DB (\(path)), which reads use, is another")
        }
        return id
    }

    /// One line on stderr after the addition, saying where it went when that may surprise.
    private func note(_ text: String) {
        StationLogging.bootstrap(program: "lineupctl")
        lineupctlLog.notice("\(text)")
    }
}

/// Whether two paths name one file (the same device and inode), however each is spelt.
func sameFile(_ a: String, _ b: String) -> Bool {
    var x = stat()
    var y = stat()
    guard stat(a, &x) == 0, stat(b, &y) == 0 else { return false }
    return x.st_dev == y.st_dev && x.st_ino == y.st_ino
}

/// Listings read newest first, so `--limit` gives the latest rows; exports stay oldest first.
struct ListingOrderOptions: ParsableArguments {
    @Flag(help: "Oldest first (listings are newest first by default; exports are always oldest first).")
    var oldestFirst = false

    /// The rows `read` gives (`read(newestFirst, limit)`): with a limit, always the latest
    /// `limit` of them, turned round for --oldest-first; without one, all in the order asked.
    func latest<Row>(_ limit: Int, _ read: (Bool, Int?) throws -> [Row]) throws -> [Row] {
        guard limit > 0 else { return try read(!oldestFirst, nil) }
        let rows = try read(true, limit)
        return oldestFirst ? rows.reversed() : rows
    }
}

/// The filters most commands share.
struct RowFilterOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Only this dog (name, id or id prefix).", valueName: "dog"))
    var dog: String?

    @Option(help: ArgumentHelp("Only this session (id or id prefix).", valueName: "id"))
    var session: String?

    @Option(
        help: ArgumentHelp(
            "From this time on: 2025-05-01, 2025-05-01T14:30 or with an offset (+02:00, Z).", valueName: "date"))
    var since: String?

    @Option(help: ArgumentHelp("Before this time; a bare date includes that whole day.", valueName: "date"))
    var until: String?

    /// Resolves what was typed against the log or the lab store; unknown ids and bad dates throw.
    func filter(_ reader: some FilterResolving) throws -> LogFilter {
        var filter = LogFilter()
        filter.since = try since.map { text in try named("--since", text) { try ResearcherDate.parse($0) } }
        filter.until = try until.map { text in try named("--until", text) { try ResearcherDate.parseUpperBound($0) } }
        filter.dogId = try dog.map { try reader.resolveDog($0) }
        filter.sessionId = try session.map { try reader.resolveSession($0) }
        return filter
    }

    /// A bad date is said with the option it was given to.
    private func named<T>(_ option: String, _ text: String, _ parse: (String) throws -> T) throws -> T {
        do {
            return try parse(text)
        } catch let error as SessionLogError {
            throw SessionLogError.invalidInput("\(option) \(text): \(error.description)")
        }
    }
}

/// Which sessions' trials a figure, report or export covers beyond dog, session and dates:
/// the session's own mode, program, step and handler. One selection for `stats`, `report`,
/// `export`, `sessions` and `trials`, resolved into the one `LogFilter` they all read with.
struct SelectionOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Only sessions run in this mode: trainer-led, automated or double-blind.", valueName: "mode"))
    var mode: String?

    @Option(
        help: ArgumentHelp(
            "Only sessions of this program (its name, as lineupctl sessions shows it).", valueName: "name"))
    var program: String?

    @Option(
        help: ArgumentHelp(
            "Only sessions of this step (PHASE/STEP, as session start takes it), or of a whole PHASE.",
            valueName: "step"))
    var step: String?

    @Option(help: ArgumentHelp("Only sessions run by this handler (the pseudonymous code).", valueName: "code"))
    var handler: String?

    /// The row filter narrowed by these choices, each checked against the log or store (one line naming
    /// the option, the value and what the log has, when it does not fit).
    func filter(_ rows: RowFilterOptions, _ reader: some FilterResolving) throws -> LogFilter {
        var filter = try rows.filter(reader)
        if let mode {
            guard let chosen = TrainingMode(rawValue: mode) else {
                throw SessionLogError.invalidInput(
                    "--mode \(mode): not a mode (\(TrainingMode.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            filter.mode = chosen
        }
        filter.program = try program.map { try reader.resolveProgram($0) }
        if let step {
            let resolved = try reader.resolveStep(step)
            filter.phase = resolved.phase
            filter.step = resolved.step
        }
        filter.handler = try handler.map { try reader.resolveHandler($0) }
        return filter
    }
}

/// What a listing, statistic or report covers, in words: `dog Rex, mode double-blind; every
/// program, step and handler; all dates`. Printed above `stats`, in the report's title.
func describeSelection(_ rows: RowFilterOptions, _ selection: SelectionOptions) -> String {
    var chosen: [String] = []
    var every: [String] = []
    chosen.append(rows.dog.map { "dog \($0)" } ?? "all dogs")
    if let session = rows.session { chosen.append("session \(session)") }
    for (name, value) in [
        ("program", selection.program), ("step", selection.step), ("mode", selection.mode),
        ("handler", selection.handler),
    ] {
        if let value { chosen.append("\(name) \(value)") } else { every.append(name) }
    }
    var text = chosen.joined(separator: ", ")
    if !every.isEmpty {
        let names =
            every.count == 1
            ? every[0] : every.dropLast().joined(separator: ", ") + " and " + every[every.count - 1]
        text += "; every \(names)"
    }
    var dates: [String] = []
    if let since = rows.since { dates.append("from \(since)") }
    if let until = rows.until { dates.append("until \(until)") }
    return text + "; " + (dates.isEmpty ? "all dates" : dates.joined(separator: " "))
}

/// Says, in one line, which running double-blind sessions a reading left out (the reader's
/// `withheldSessions`, docs/session-log.md): after a table on standard output, or on standard
/// error when standard output carries JSON, CSV or HTML. Nothing when none is withheld.
/// `what` names what is left out, with its verb ("its trials are"). Read before the reading's
/// output is printed, said after it (a `defer`), so a table stays whole.
func sayWithheld(
    _ sessions: [WithheldSession], _ what: String = "its trials, layouts and outcomes are", toStandardError: Bool
) {
    guard !sessions.isEmpty else { return }
    let line = WithheldSession.sentence(sessions, what)
    if toStandardError {
        StationLogging.bootstrap(program: "lineupctl")
        lineupctlLog.notice("\(line)")
    } else {
        say("\n(\(line))")
    }
}

/// Runs a command's body; any failure becomes one line on stderr and exit status 1.
func researcherCommand(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let exit as ExitCode {
        throw exit
    } catch let error as SessionLogError {
        printError(error.description)
        throw ExitCode(1)
    } catch {
        printError(String(describing: error))
        throw ExitCode(1)
    }
}

/// lineupctl's one voice on stderr: the station's logging set-up (`lineupctl: message`).
func printError(_ message: String) {
    StationLogging.bootstrap(program: "lineupctl")
    lineupctlLog.error("\(message)")
}

/// What lineupctl says besides its output: errors, and selftest's progress under --json.
let lineupctlLog = StationLogging.logger("lineupctl")

func printJSON<T: Encodable>(_ value: T, oneLine: Bool = false) throws {
    let encoder = JSONEncoder()
    encoder.keyEncodingStrategy = .convertToSnakeCase
    // Benchmarks print one object on one line, for scripts that read a line each.
    encoder.outputFormatting =
        oneLine ? [.sortedKeys, .withoutEscapingSlashes] : [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    var data = try encoder.encode(value)
    data.append(10)
    writeOut(data)
}

/// A plain table: columns padded to their widest cell, a rule under the header.
func printTable(_ table: ([String], [[String]])) { printTable(table.0, table.1) }

func printTable(_ header: [String], _ rows: [[String]]) {
    var widths = header.map(\.count)
    for row in rows {
        for (index, cell) in row.enumerated() where index < widths.count {
            widths[index] = max(widths[index], cell.count)
        }
    }
    func line(_ cells: [String]) -> String {
        cells.enumerated().map { index, cell in
            index == cells.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
        }.joined(separator: "  ")
    }
    var out = line(header) + "\n" + line(widths.map { String(repeating: "-", count: $0) }) + "\n"
    for row in rows { out += line(row) + "\n" }
    writeOut(Data(out.utf8))
}

func say(_ text: String) {
    writeOut(Data((text + "\n").utf8))
}

extension Optional where Wrapped == String {
    var orDash: String { self ?? "-" }
}

/// `71.0 % (61.4-79.0 %, 71/100)` or `-` when nothing was counted.
func describe(_ proportion: Proportion) -> String {
    guard let value = proportion.value, let lower = proportion.lower, let upper = proportion.upper else { return "-" }
    return String(
        format: "%.1f %% (%.1f-%.1f, %d/%d)", value * 100, lower * 100, upper * 100, proportion.successes,
        proportion.trials)
}

func describeMillis(_ millis: Double?) -> String {
    millis.map { String(format: "%.2f s", $0 / 1000) } ?? "-"
}

/// A median latency with its interquartile range, in seconds.
func describeSpread(_ spread: Spread?) -> String {
    guard let s = spread else { return "-" }
    return String(format: "%.2f s (%.2f-%.2f)", s.median / 1000, s.q1 / 1000, s.q3 / 1000)
}

func describeNumber(_ value: Double?, _ format: String = "%.2f") -> String {
    value.map { String(format: format, $0) } ?? "-"
}

/// The station-level figures, a line each, as `session show` prints them (every value from
/// `Figures`, the one implementation).
func describeFigures(_ f: Figures, indent: String = "") -> String {
    let p = f.presentations
    var text = """
        \(indent)Stations    \(p.hits) hit, \(p.misses) missed, \(p.falseAlerts) false alert(s), \(p.correctRejections) \
        correctly passed, \(p.notExamined) not examined; blanks: \(p.blankIndicated) indicated, \(p.blankPassed) passed, \
        \(p.blankNotExamined) not examined
        \(indent)Sensitivity \(describe(f.sensitivity))
        \(indent)Specificity \(describe(f.specificity))
        \(indent)PPV         \(describe(f.positivePredictiveValue))
        \(indent)FA/trial    \(describeNumber(f.falseAlertsPerTrial, "%.3f"))
        \(indent)d′, c       \(describeNumber(f.dPrime)), \(describeNumber(f.criterion))
        \(indent)Latency     \(describeSpread(f.latency)) median (IQR)

        """
    if f.trialsWithoutStationData > 0 {
        text += """
            \(indent)Note        \(count(f.trialsWithoutStationData, "scored trial")) logged before lineup recorded \
            what each station saw: counted in Results, not in the station figures

            """
    }
    return text
}

/// `stats`' trial columns (by dog and by session): the trials by outcome, and the trial
/// accuracy computed from them beside them.
let trialOutcomeHeads = ["HIT TRIALS", "MISS TRIALS", "FA TRIALS", "CR TRIALS", "CORRECT"]

func trialOutcomeCells(_ f: Figures) -> [String] {
    let r = f.results
    return ["\(r.hits)", "\(r.misses)", "\(r.falseAlerts)", "\(r.correctRejections)", describe(f.trialAccuracy)]
}

/// `stats`' presentation columns (every table): the station-level verdicts of docs/figures.md
/// ("What is counted") by the kind of sample that stood in the station, each rate beside the
/// counts it is computed from. A sample has one kind, so the other kinds' verdicts are `-` on
/// its row; a station, a dog or a session held every kind over the trials and fills them all.
let presentationHeads = [
    "TARGET HIT", "TARGET MISSED", "SENSITIVITY", "CONTROL FA", "CONTROL PASSED", "CONTROL NOT EXAMINED",
    "SPECIFICITY", "BLANK INDICATED", "BLANK PASSED", "PPV", "FA/TRIAL", "D'", "C", "LATENCY (IQR)",
]

func presentationCells(_ f: Figures, kind: SampleKind?) -> [String] {
    let p = f.presentations
    func cells(_ counts: [Int], _ applies: Bool) -> [String] { counts.map { applies ? "\($0)" : "-" } }
    let control = kind == nil || kind == .control || kind == .distractor
    return cells([p.hits, p.misses], kind == nil || kind == .target) + [describe(f.sensitivity)]
        + cells([p.falseAlerts, p.correctRejections, p.notExamined], control) + [describe(f.specificity)]
        + cells([p.blankIndicated, p.blankPassed], kind == nil || kind == .blank)
        + [
            describe(f.positivePredictiveValue), describeNumber(f.falseAlertsPerTrial, "%.3f"),
            describeNumber(f.dPrime), describeNumber(f.criterion), describeSpread(f.latency),
        ]
}

/// A flagged sample's line after `stats --by sample`: its count, the others', the test.
func sampleFlagLine(_ row: StatsRow) -> String {
    guard let flag = row.sampleFlag else { return "" }
    let what = row.kind == .target ? "hits" : "false alerts"
    let others = row.kind == .target ? "targets" : "controls and distractors"
    func share(_ p: Proportion) -> String {
        String(format: "%d/%d, %.1f %%", p.successes, p.trials, (p.value ?? 0) * 100)
    }
    return "flag: \(row.group) (\(row.kind?.rawValue ?? "-")): \(what) \(share(flag.indicated)) against the other "
        + "\(others)' \(share(flag.others)); Fisher's exact test, one-sided, p = "
        + String(format: "%.2g", flag.p ?? 1) + " < \(SampleFlag.level) (docs/figures.md, \"A flagged sample\")"
}

/// A trial's note: a correction (with the row it replaces and why), or why it was aborted or
/// needs a second look.
func describeNote(corrects: String?, reason: String?) -> String {
    if let corrects { return "corrected (was \(short(corrects))): \(reason ?? "")" }
    return reason ?? ""
}

/// When and how a session ended, in the researcher's words.
func describeEnd(_ s: SessionDetails) -> String {
    let time = s.ended ?? "-"
    switch s.endedHow {
    case "ended": return "\(time) (\(s.endDetail ?? "ended"))"
    case "stopped": return "\(time) (\(s.endDetail ?? "lineupd was stopped during it"))"
    case "interrupted": return "\(time) (INTERRUPTED: \(s.endDetail ?? "lineupd did not end it"))"
    case "unknown": return "\(time) (how is not recorded: an older log)"
    default: return "not yet (running, or lineupd has not started since it stopped)"
    }
}

/// `1 hit`, `3 hits`, `1 miss`, `2 misses`.
func count(_ n: Int, _ one: String, _ many: String? = nil) -> String {
    "\(n) \(n == 1 ? one : many ?? one + "s")"
}

/// The first 8 characters of an id: enough to type back, as git does.
func short(_ id: String?) -> String {
    id.map { String($0.prefix(8)) } ?? "-"
}
