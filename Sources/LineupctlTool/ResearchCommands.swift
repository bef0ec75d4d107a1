import ArgumentParser
import Figures
import Foundation
import SessionLog
import StationControl
import TrainingEngine

// The researcher's commands. Reads open the log read-only and work while lineupd
// writes; the few writes (dogs add, samples add and note) go through lineupd, which owns
// the station's log, unless a database file is named with --db or $LINEUP_DB.
// Here: sessions, trials and events; the others in DogSampleCommands.swift,
// ProgressStatsCommands.swift and ExportCommands.swift.

let additionNote = """
    Whenever lineupd answers on its control socket, it writes this to the station's log (so \
    any member of the station's group may add); $LINEUP_DB only chooses the log that reads \
    use. --db PATH writes that file directly when it is not the log lineupd writes; with no \
    lineupd answering, --db PATH or $LINEUP_DB is written directly, and lineupctl says so.
    """

extension SampleKind: ExpressibleByArgument {}
extension StatsGrouping: ExpressibleByArgument {}
extension ExportTable: ExpressibleByArgument {}
extension ExportFormat: ExpressibleByArgument {}
extension EventKind: ExpressibleByArgument {}

struct Sessions: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List sessions, newest first.",
        discussion: """
            Examples:
              lineupctl sessions --dog Aino
              lineupctl sessions --since 2025-05-01 --oldest-first
              lineupctl sessions --limit 2
            """
    )
    @OptionGroup var log: LogOptions
    @OptionGroup var rows: RowFilterOptions
    @OptionGroup var selection: SelectionOptions
    @OptionGroup var order: ListingOrderOptions
    @Option(help: "At most this many sessions, the latest (0: all).") var limit = 0

    func validate() throws {
        if limit < 0 { throw ValidationError("--limit \(limit): give a number of sessions, 0 for all") }
    }

    func run() throws {
        try researcherCommand {
            let reader = try log.reader()
            let filter = try selection.filter(rows, reader)
            let sessions = try order.latest(limit) { newestFirst, limit in
                var filter = filter
                filter.newestFirst = newestFirst
                return try reader.sessions(filter, limit: limit)
            }
            let withheld = try reader.withheldSessions(filter)
            // A running double-blind session is not listed: said in one line, after the rows.
            defer { sayWithheld(withheld, "it and its trials are", toStandardError: log.json) }
            if log.json { return try printJSON(sessions) }
            printTable(
                [
                    "SESSION", "DOG", "STARTED", "PROGRAM", "PHASE", "STEP", "EXERCISE", "MODE", "TRIALS", "HIT",
                    "MISS", "FA", "CR", "END",
                ],
                sessions.map {
                    [
                        short($0.id), $0.dog, $0.started, $0.program.orDash, $0.phase.orDash, $0.step.orDash,
                        $0.exercise.orDash, $0.mode.rawValue + ($0.unlabelled ? " (unlabelled)" : ""),
                        "\($0.results.trials)", "\($0.results.hits)", "\($0.results.misses)",
                        "\($0.results.falseAlerts)", "\($0.results.correctRejections)",
                        $0.endedHow.map { $0 == "interrupted" ? "INTERRUPTED" : $0 } ?? "running",
                    ]
                })
        }
    }
}

struct SessionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session",
        abstract:
            "Start, end, abort or resume a session on the station; show one from the log, or add a note to it.",
        subcommands: [
            Show.self, SessionStart.self, SessionEnd.self, SessionAbort.self, SessionResume.self,
            SessionNoteCommand.self,
        ])

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Everything about a session: set-up, samples, results, trials, improvement suggestions.",
            discussion: "Example:\n  lineupctl session show 3f2a9c1e")
        @OptionGroup var log: LogOptions
        @Argument(help: "The session's id or id prefix.") var id: String

        func run() throws {
            try researcherCommand {
                let reader = try log.reader()
                let s = try reader.session(id: reader.resolveSession(id))
                if log.json { return try printJSON(s) }
                let r = s.results
                var text = """
                    Session     \(s.id)
                    Dog         \(s.dog)
                    Started     \(s.started)
                    Ended       \(describeEnd(s))
                    Program     \(s.program.orDash)\(s.programSha256.map { " (sha256 \($0.prefix(12)))" } ?? "")
                    Phase       \(s.phase.orDash)
                    Step        \(s.step.orDash)
                    Exercise    \(s.exercise.orDash)
                    Mode        \(s.mode.rawValue)
                    Handler     \(s.handler.orDash)
                    Conditions  \(s.conditions.map(\.description).orDash)
                    Station     \(s.station.orDash)
                    Settings    \(s.settings)
                    Results     \(count(r.trials, "trial")): \(count(r.hits, "hit")), \(count(r.misses, "miss", "misses")), \
                    \(count(r.falseAlerts, "false alert")), \(count(r.correctRejections, "correct rejection")), \
                    \(r.aborted) aborted
                    Correct     \(describe(s.correct))
                    \(describeFigures(s.figures))
                    Samples

                    """
                writeOut(Data(text.utf8))
                printTable(
                    ["SAMPLE", "KIND", "PRESENTED", "INDICATED"],
                    s.samples.map {
                        [$0.label ?? "(no sample id)", $0.kind.rawValue, "\($0.presented)", "\($0.indicated)"]
                    })
                say("\nTrials\n")
                printTable(
                    withProcedure(
                        ["#", "OUTCOME", "INDICATED", "LATENCY", "STARTED", "LAYOUT", "NOTE"], s.trials,
                        s.trials.map { t in
                            [
                                "\(t.number)", t.outcome.rawValue,
                                t.indicatedName ?? t.indicatedStation.map { "\($0)" } ?? "-",
                                describeMillis(t.latencyMs), t.started,
                                t.layout.map { "\($0.name ?? "\($0.station)"):\($0.sample ?? $0.kind.rawValue)" }
                                    .joined(separator: " "),
                                describeNote(corrects: t.corrects, reason: t.reason),
                            ]
                        }))
                text = "\nImprovement suggestions\n"
                if s.improvementSuggestions.isEmpty { text += "  (none)\n" }
                for line in s.improvementSuggestions { text += "  - \(line)\n" }
                if !s.comments.isEmpty { text += "Comments\n" }
                for line in s.comments { text += "  - \(line)\n" }
                writeOut(Data(text.utf8))
            }
        }
    }
}

struct Trials: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List trials (after corrections), newest first.",
        discussion:
            "Examples:\n  lineupctl trials --session 3f2a9c1e\n  lineupctl trials --dog Aino --limit 10\n  lineupctl trials --dog Aino --json"
    )
    @OptionGroup var log: LogOptions
    @OptionGroup var rows: RowFilterOptions
    @OptionGroup var selection: SelectionOptions
    @OptionGroup var order: ListingOrderOptions
    @Option(help: "At most this many trials, the latest (0: all).") var limit = 0

    func validate() throws {
        if limit < 0 { throw ValidationError("--limit \(limit): give a number of trials, 0 for all") }
    }

    func run() throws {
        try researcherCommand {
            let reader = try log.reader()
            let filter = try selection.filter(rows, reader)
            let trials = try order.latest(limit) { newestFirst, limit in
                var filter = filter
                filter.newestFirst = newestFirst
                return try reader.trials(filter, limit: limit)
            }
            let withheld = try reader.withheldSessions(filter)
            defer { sayWithheld(withheld, toStandardError: log.json) }
            if log.json { return try printJSON(trials) }
            printTable(
                withProcedure(
                    ["TRIAL", "DOG", "SESSION", "#", "OUTCOME", "INDICATED", "LATENCY", "ENDED", "LAYOUT", "NOTE"],
                    trials,
                    trials.map { t in
                        [
                            short(t.id), t.dog, short(t.sessionId), "\(t.number)", t.outcome.rawValue,
                            t.indicatedName ?? t.indicatedStation.map { "\($0)" } ?? "-", describeMillis(t.latencyMs),
                            t.ended,
                            t.layout.map { "\($0.name ?? "\($0.station)"):\($0.sample ?? $0.kind.rawValue)" }.joined(
                                separator: " "),
                            describeNote(corrects: t.corrects, reason: t.reason),
                        ]
                    }))
        }
    }
}

/// A listing's header and rows with a PROCEDURE column before the last (NOTE) when any trial
/// is a threshold step's (its rung, dilution, step and reversals); unchanged otherwise.
func withProcedure(_ header: [String], _ trials: [LoggedTrial], _ rows: [[String]]) -> ([String], [[String]]) {
    guard trials.contains(where: { $0.procedure != nil }) else { return (header, rows) }
    var h = header
    h.insert("PROCEDURE", at: h.count - 1)
    return (
        h,
        zip(trials, rows).map { t, row in
            var r = row
            r.insert(t.procedure?.words ?? "-", at: r.count - 1)
            return r
        }
    )
}

struct Events: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List raw events (edges, sniffs, indications, clicks, buttons, cues, faults), newest first.",
        discussion: "Examples:\n  lineupctl events --trial 9b1c0d2e\n  lineupctl events --kind fault --limit 0")
    @OptionGroup var log: LogOptions
    @OptionGroup var rows: RowFilterOptions
    @OptionGroup var order: ListingOrderOptions
    @Option(help: ArgumentHelp("Only events of this trial (id or id prefix).", valueName: "id")) var trial: String?
    @Option(help: "Only this kind: edge, sniff, indication, click, button, cue, fault, note, feeder.") var kind:
        EventKind?
    @Option(help: "At most this many events, the latest (0: all; export streams any number).") var limit = 200

    func run() throws {
        try researcherCommand {
            let reader = try log.reader(checking: .quick)
            var filter = try rows.filter(reader)
            filter.trialId = try trial.map { try reader.resolveTrial($0) }
            filter.eventKind = kind
            let events = try order.latest(limit) { newestFirst, limit in
                var filter = filter
                filter.newestFirst = newestFirst
                return try reader.events(filter, limit: limit)
            }
            let withheld = try reader.withheldSessions(filter)
            defer { sayWithheld(withheld, "its events are", toStandardError: log.json) }
            if log.json { return try printJSON(events) }
            printTable(
                ["SEQ", "TIME", "KIND", "STATION", "MONO NS", "KERNEL NS", "VALUE", "DURATION", "ONSET", "DETAIL"],
                events.map { e in
                    [
                        "\(e.seq)", e.time, e.kind, e.stationName ?? e.station.map { "\($0)" } ?? "-", "\(e.monoNs)",
                        e.kernelNs.map { "\($0)" } ?? "-", e.value.map { "\($0)" } ?? "-",
                        e.durationNs.map { String(format: "%.3f s", Double($0) / 1e9) } ?? "-",
                        e.clickOnsetLatencyNs.map { String(format: "%.2f ms", Double($0) / 1e6) } ?? "-",
                        e.detail.orDash,
                    ]
                })
            let total = try reader.eventCount(filter)
            if limit > 0 && total > events.count {
                say("(\(events.count) of \(total) events; --limit 0 for all, or lineupctl export --what events)")
            }
        }
    }
}
