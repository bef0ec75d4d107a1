import ArgumentParser
import Foundation
import SessionLog
import StationControl
import TrainingEngine

// The researcher's commands. Reads open the log read-only and work while lineupd
// writes; the few writes (dogs add, samples add and note) go through lineupd, which owns
// the station's log, unless a database file is named with --db or $LINEUP_DB.

let additionNote = """
    Whenever lineupd answers on its control socket, it writes this to the station's log (so \
    any member of the station's group may add); $LINEUP_DB only chooses the log that reads \
    use. --db PATH writes that file directly when it is not the log lineupd writes; with no \
    lineupd answering, --db PATH or $LINEUP_DB is written directly, and lineupctl says so.
    """

struct Dogs: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the dogs, or add one.",
        discussion: "Examples:\n  lineupctl dogs\n  lineupctl dogs add Aino --born 2021-04-02",
        subcommands: [List.self, Add.self], defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the dogs with their sessions and trials.")
        @OptionGroup var log: LogOptions

        func run() throws {
            try researcherCommand {
                let dogs = try log.reader().dogs()
                if log.json { return try printJSON(dogs) }
                printTable(
                    ["DOG", "ID", "BORN", "SESSIONS", "TRIALS", "LAST SESSION"],
                    dogs.map {
                        [
                            $0.name, short($0.id), $0.born.orDash, "\($0.sessions)", "\($0.trials)",
                            $0.lastSession.orDash,
                        ]
                    })
            }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a dog.", discussion: additionNote)
        @OptionGroup var target: AdditionOptions
        @Argument(help: "The dog's name.") var name: String
        @Option(help: ArgumentHelp("Date of birth, YYYY-MM-DD.", valueName: "date")) var born: String?
        @Option(help: "Free notes (no personal data of people).") var notes: String?

        func run() throws {
            try researcherCommand {
                // Checked here too, so a typo is caught before anything is sent.
                _ = try born.map { try ResearcherDate.validateDay($0) }
                let id = try target.add(
                    direct: { try $0.addDog(name: name, born: born, notes: notes).id },
                    daemon: { client throws(ControlClientError) in
                        try client.addDog(DogEntry(name: name, born: born, notes: notes))
                    })
                if target.log.json { return try printJSON(["id": id]) }
                say("added \(name): \(id)")
            }
        }
    }
}

struct Samples: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Scent samples: list, show, add, note.",
        discussion: """
            Examples:
              lineupctl samples
              lineupctl samples add T-0043 --kind target --diagnosis "lung cancer" --source "clinic A"
              lineupctl samples show T-0043
              lineupctl samples note T-0043 "tube cracked, replaced lid"
            """,
        subcommands: [List.self, Show.self, Add.self, Note.self], defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the samples with how often each was used.")
        @OptionGroup var log: LogOptions
        @Option(help: "Only this kind: target, control, blank, distractor.") var kind: SampleKind?

        func run() throws {
            try researcherCommand {
                let samples = try log.reader().samples(kind: kind)
                if log.json { return try printJSON(samples) }
                printTable(
                    ["SAMPLE", "KIND", "DIAGNOSIS", "SOURCE", "COLLECTED", "USES", "NOTES"],
                    samples.map {
                        [
                            $0.label, $0.kind.rawValue, $0.diagnosis.orDash, $0.source.orDash, $0.collectedOn.orDash,
                            "\($0.uses)", "\($0.notes)",
                        ]
                    })
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a sample, its notes and the dogs it met.")
        @OptionGroup var log: LogOptions
        @Argument(help: "The sample's label (or id).") var sample: String

        func run() throws {
            try researcherCommand {
                let reader = try log.reader()
                let details = try reader.sample(id: reader.resolveSample(sample))
                if log.json { return try printJSON(details) }
                let s = details.sample
                var text = """
                    Sample      \(s.label) (\(s.kind.rawValue))
                    Id          \(s.id)
                    Diagnosis   \(s.diagnosis.orDash)
                    Source      \(s.source.orDash)
                    Collection  \(s.collection.orDash)
                    Processing  \(s.processing.orDash)
                    Collected   \(s.collectedOn.orDash)
                    Added       \(s.added)
                    Used        \(s.uses) trial(s)

                    """
                for use in details.usedBy { text += "  with \(use.dog): \(use.uses), last \(use.lastUsed)\n" }
                if !details.notes.isEmpty { text += "Notes\n" }
                for note in details.notes { text += "  \(note.time)  \(note.text)\n" }
                FileHandle.standardOutput.write(Data(text.utf8))
            }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a sample.", discussion: additionNote)
        @OptionGroup var target: AdditionOptions
        @Argument(help: "The sample's unique id as written on it.") var label: String
        @Option(help: "target, control, blank or distractor.") var kind: SampleKind
        @Option var diagnosis: String?
        @Option(help: "Where it came from (clinic, donor group).") var source: String?
        @Option(help: "How it was collected.") var collection: String?
        @Option(help: "How it was processed and stored.") var processing: String?
        @Option(help: ArgumentHelp("Collection date, YYYY-MM-DD.", valueName: "date")) var collectedOn: String?

        func run() throws {
            try researcherCommand {
                _ = try collectedOn.map { try ResearcherDate.validateDay($0) }
                let entry = SampleEntry(
                    label: label, kind: kind, diagnosis: diagnosis, source: source, collection: collection,
                    processing: processing, collectedOn: collectedOn)
                let id = try target.add(
                    direct: {
                        try $0.addSample(
                            SampleRecord(
                                label: label, kind: kind, diagnosis: diagnosis, source: source,
                                collection: collection, processing: processing, collectedOn: collectedOn)
                        ).id
                    },
                    daemon: { client throws(ControlClientError) in try client.addSample(entry) })
                if target.log.json { return try printJSON(["id": id]) }
                say("added sample \(label): \(id)")
            }
        }
    }

    struct Note: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a note to a sample (notes are kept, never edited).", discussion: additionNote)
        @OptionGroup var target: AdditionOptions
        @Argument(help: "The sample's label (or id).") var sample: String
        @Argument(help: "The note.") var text: String

        func run() throws {
            try researcherCommand {
                let id = try target.add(
                    direct: { try $0.noteSample(sample, text: text).id },
                    daemon: { client throws(ControlClientError) in
                        try client.noteSample(SampleNoteEntry(sample: sample, text: text))
                    })
                if target.log.json { return try printJSON(["id": id]) }
                say("noted on \(sample)")
            }
        }
    }
}

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
        abstract: "Start, end or abort a session on the station; show one from the log, or add a note to it.",
        subcommands: [Show.self, SessionStart.self, SessionEnd.self, SessionAbort.self, SessionNoteCommand.self])

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
                    Station     \(s.station.orDash)
                    Settings    \(s.settings)
                    Results     \(count(r.trials, "trial")): \(count(r.hits, "hit")), \(count(r.misses, "miss", "misses")), \
                    \(count(r.falseAlerts, "false alert")), \(count(r.correctRejections, "correct rejection")), \
                    \(r.aborted) aborted
                    Correct     \(describe(s.correct))
                    \(describeFigures(s.figures))
                    Samples

                    """
                FileHandle.standardOutput.write(Data(text.utf8))
                printTable(
                    ["SAMPLE", "KIND", "PRESENTED", "INDICATED"],
                    s.samples.map {
                        [$0.label ?? "(no sample id)", $0.kind.rawValue, "\($0.presented)", "\($0.indicated)"]
                    })
                say("\nTrials\n")
                printTable(
                    ["#", "OUTCOME", "INDICATED", "LATENCY", "STARTED", "LAYOUT", "NOTE"],
                    s.trials.map { t in
                        [
                            "\(t.number)", t.outcome.rawValue, t.indicatedStation.map { "\($0)" } ?? "-",
                            describeMillis(t.latencyMs), t.started,
                            t.layout.map { "\($0.station):\($0.sample ?? $0.kind.rawValue)" }.joined(separator: " "),
                            describeNote(corrects: t.corrects, reason: t.reason),
                        ]
                    })
                text = "\nImprovement suggestions\n"
                if s.improvementSuggestions.isEmpty { text += "  (none)\n" }
                for line in s.improvementSuggestions { text += "  - \(line)\n" }
                if !s.comments.isEmpty { text += "Comments\n" }
                for line in s.comments { text += "  - \(line)\n" }
                FileHandle.standardOutput.write(Data(text.utf8))
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
            if log.json { return try printJSON(trials) }
            printTable(
                ["TRIAL", "DOG", "SESSION", "#", "OUTCOME", "INDICATED", "LATENCY", "ENDED", "LAYOUT", "NOTE"],
                trials.map { t in
                    [
                        short(t.id), t.dog, short(t.sessionId), "\(t.number)", t.outcome.rawValue,
                        t.indicatedStation.map { "\($0)" } ?? "-", describeMillis(t.latencyMs), t.ended,
                        t.layout.map { "\($0.station):\($0.sample ?? $0.kind.rawValue)" }.joined(separator: " "),
                        describeNote(corrects: t.corrects, reason: t.reason),
                    ]
                })
        }
    }
}

struct Events: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List raw events (edges, sniffs, indications, clicks, buttons, cues, faults), newest first.",
        discussion: "Examples:\n  lineupctl events --trial 9b1c0d2e\n  lineupctl events --kind fault --limit 0")
    @OptionGroup var log: LogOptions
    @OptionGroup var rows: RowFilterOptions
    @OptionGroup var order: ListingOrderOptions
    @Option(help: ArgumentHelp("Only events of this trial (id or id prefix).", valueName: "id")) var trial: String?
    @Option(help: "Only this kind: edge, sniff, indication, click, button, cue, fault, note.") var kind: EventKind?
    @Option(help: "At most this many events, the latest (0: all; export streams any number).") var limit = 200

    func run() throws {
        try researcherCommand {
            let reader = try log.reader()
            var filter = try rows.filter(reader)
            filter.trialId = try trial.map { try reader.resolveTrial($0) }
            filter.eventKind = kind
            let events = try order.latest(limit) { newestFirst, limit in
                var filter = filter
                filter.newestFirst = newestFirst
                return try reader.events(filter, limit: limit)
            }
            if log.json { return try printJSON(events) }
            printTable(
                ["SEQ", "TIME", "KIND", "STATION", "MONO NS", "KERNEL NS", "VALUE", "DURATION", "ONSET", "DETAIL"],
                events.map { e in
                    [
                        "\(e.seq)", e.time, e.kind, e.station.map { "\($0)" } ?? "-", "\(e.monoNs)",
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

struct Progress: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A dog's progress through its programs: every phase and step, with %.",
        discussion: """
            Each program is shown on its own, with its own phases only: the one --program names, \
            else every program the dog has sessions in, the program of its latest session first \
            (then its sessions logged without a program, such as simulated blocks). Every phase \
            of a program is shown, those not started at 0 %. A step with a criterion is as far \
            along as its criterion (100 % once met, from its scored trials and trainer-led rounds \
            in order); a step without one is the share of its exercises' rounds done \
            (trainer-led: each exercise's repeats, the study's "up to four times"; automated: one \
            block of its trials). Only sessions run in the step's own mode (trainer-led, \
            automated or double-blind, as the program fixes it) count toward a step: the steps \
            table says how many trials in another mode were left out. A phase is the mean of its \
            steps. Correct and last-20 figures come straight from the phase's trials, whatever \
            their mode.

            Examples:
              lineupctl progress --dog Aino
              lineupctl progress --dog Aino --program study --json
            """)
    @OptionGroup var log: LogOptions
    @Option(help: "The dog (name, id or id prefix).") var dog: String
    @Option(help: "A built-in program or a program file (default: every program the dog has sessions in).")
    var program: String?

    func run() throws {
        try researcherCommand {
            let reader = try log.reader()
            var chosen: Program? = nil
            if let program {
                do {
                    chosen = try Program.builtin(named: program)
                } catch {
                    guard let text = try? String(contentsOfFile: program, encoding: .utf8) else {
                        throw SessionLogError.invalidInput(
                            "--program \(program): not a built-in program (\(Program.builtinNames.joined(separator: ", "))) nor a readable file"
                        )
                    }
                    chosen = try Program.parse(toml: text, source: program)
                }
            }
            let phases = try reader.progress(dogId: reader.resolveDog(dog), program: chosen)
            if log.json { return try printJSON(phases) }
            // One block per program, in the order the reader gives them.
            var blocks: [(program: String?, phases: [PhaseProgress])] = []
            for phase in phases {
                if let last = blocks.last, last.program == phase.program {
                    blocks[blocks.count - 1].phases.append(phase)
                } else {
                    blocks.append((phase.program, [phase]))
                }
            }
            for (k, block) in blocks.enumerated() {
                if k > 0 { say("") }
                if let name = block.program {
                    say(
                        "Program \(name)"
                            + (chosen == nil && blocks.count > 1 && k == 0 ? " (the latest session's)" : ""))
                } else {
                    say("Sessions logged without a program")
                }
                printProgress(block.phases)
            }
        }
    }

    func printProgress(_ phases: [PhaseProgress]) {
        printTable(
            ["PHASE", "PROGRESS", "STEPS", "SESSIONS", "TRIALS", "CORRECT", "LAST 20", "GRADUATED"],
            phases.map { p in
                [
                    p.phase, p.progressPercent.map { String(format: "%.0f %%", $0) } ?? "-",
                    "\(p.stepsPassed)/\(p.phaseSteps.map { "\($0)" } ?? "?")", "\(p.sessions)", "\(p.trials)",
                    describe(p.correct), p.recentCorrectPercent.map { String(format: "%.0f %%", $0) } ?? "-",
                    p.graduated.map { "yes, \($0)\(p.criterion.map { " (\($0))" } ?? "")" } ?? "not yet",
                ]
            })
        let steps = phases.flatMap { p in p.steps.map { (p.phase, $0) } }
        guard !steps.isEmpty else { return }
        say("")
        printTable(
            ["STEP", "TITLE", "MODE", "PROGRESS", "DONE", "PASSED"],
            steps.map { phase, step in
                var done =
                    step.exercises.allSatisfy({ $0.required != nil })
                    ? step.exercises.map { "ex. \($0.exercise) \($0.done)/\($0.required ?? 0)" }.joined(
                        separator: ", ")
                    : "\(step.trials) scored; \(step.rule)"
                if step.otherModeTrials > 0 {
                    done += " (\(count(step.otherModeTrials, "trial")) in another mode not counted)"
                }
                return [
                    "\(phase)/\(step.step)", step.title, step.mode.rawValue, "\(step.percent) %", done,
                    step.passed ?? "not yet",
                ]
            })
    }
}

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sensitivity, specificity (95 % Wilson intervals), PPV, false alerts per trial, d′, c, latency.",
        discussion: """
            Every figure is counted per station of each scored trial from what that station saw \
            (visited, indicated): sensitivity = targets indicated / targets presented; \
            specificity = controls and distractors the dog examined and did not indicate / those \
            examined; blanks are counted apart. PPV = indications at the target / all \
            indications. d′ and c use the log-linear correction (Hautus 1995). Latency is the \
            median (IQR) from the start cue to the first indication. docs/figures.md ("What the \
            figures mean") defines each. Sessions are listed oldest first, with their start.

            By dog and by session the HIT, MISS, FA and CR columns count trials by their outcome. \
            By sample and by station they count presentations by the kind of sample in the \
            station: a target hit or missed; a control (or distractor) falsely alerted, examined \
            and passed, or never examined; a blank indicated or passed.

            Every trial of the log is counted unless the options narrow it: --mode, --program, \
            --step and --handler choose sessions, --since and --until their trials' times. The \
            first line says which trials the table covers.

            Examples:
              lineupctl stats --by dog
              lineupctl stats --by sample --dog Aino --since 2025-05-01
              lineupctl stats --by session --mode double-blind --step phase-3/1
            """)
    @OptionGroup var log: LogOptions
    @OptionGroup var rows: RowFilterOptions
    @OptionGroup var selection: SelectionOptions
    @Option(help: "Group by dog, session, sample or station.") var by: StatsGrouping = .dog

    func run() throws {
        try researcherCommand {
            let reader = try log.reader()
            let stats = try reader.stats(by: by, selection.filter(rows, reader))
            if log.json { return try printJSON(stats) }
            say("Trials of \(describeSelection(rows, selection))")
            let byPresentation = by == .sample || by == .station
            var header = [by.rawValue.uppercased()]
            if by == .session { header.append("STARTED") }
            if by == .sample { header.append("KIND") }
            header += ["TRIALS"]
            header += byPresentation ? ["ABORTED"] + verdictHeads : ["HIT", "MISS", "FA", "CR", "ABORTED"]
            header += ["SENSITIVITY", "SPECIFICITY", "PPV", "FA/TRIAL", "D'", "C", "LATENCY (IQR)"]
            printTable(
                header,
                stats.map { s in
                    let f = s.figures
                    var row = [by == .session ? String(s.group.prefix(max(0, s.group.count - 28))) : s.group]
                    if by == .session { row.append(String((s.started ?? "-").prefix(16))) }
                    if by == .sample { row.append(s.kind?.rawValue ?? "-") }
                    row.append("\(f.results.trials)")
                    if byPresentation {
                        row += ["\(f.results.aborted)"] + verdictCells(f.presentations, kind: s.kind)
                    } else {
                        row += [
                            "\(f.results.hits)", "\(f.results.misses)", "\(f.results.falseAlerts)",
                            "\(f.results.correctRejections)", "\(f.results.aborted)",
                        ]
                    }
                    return row + [
                        describe(f.sensitivity), describe(f.specificity), describe(f.positivePredictiveValue),
                        describeNumber(f.falseAlertsPerTrial, "%.3f"), describeNumber(f.dPrime),
                        describeNumber(f.criterion), describeSpread(f.latency),
                    ]
                })
            if byPresentation {
                say(
                    "\nTRIALS: scored and aborted trials in which the \(by.rawValue) stood; the verdicts count it once "
                        + "per scored trial (docs/figures.md, \"What is counted\")")
            }
            let lacking = Set(stats.flatMap(\.sessionsWithoutStationData)).sorted()
            if !lacking.isEmpty {
                say(
                    "\nnote: \(count(lacking.count, "session")) (\(lacking.map { String($0.prefix(8)) }.joined(separator: ", "))) "
                        + "logged before lineup recorded what each station saw: their trials are counted under "
                        + "TRIALS and not in the station figures")
            }
        }
    }
}

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Stream sessions, trials, events, samples, milestones or dogs as CSV or JSON Lines to stdout.",
        discussion: """
            CSV follows RFC 4180 with a header row; times are ISO 8601 with the station's \
            offset, beside monotonic nanoseconds. Trials carry the sample and kind of every \
            station as columns. Milestones are the steps passed and phases graduated, with the \
            session and station that earned them; dogs carry their counts and the stations they \
            trained on. Samples and dogs are selected by --since and --until by when they were \
            added. pandas.read_csv and R's read.csv load it without options.

            Examples:
              lineupctl export --what trials > trials.csv
              lineupctl export --what milestones --dog Aino > milestones.csv
              lineupctl export --what events --session 3f2a9c1e --format jsonl > events.jsonl
            """)
    @OptionGroup var log: LogOptions
    @OptionGroup var rows: RowFilterOptions
    @OptionGroup var selection: SelectionOptions
    @Option(help: "sessions, trials, events, samples, milestones or dogs.") var what: ExportTable
    @Option(help: "csv or jsonl.") var format: ExportFormat = .csv

    func run() throws {
        try researcherCommand {
            let reader = try log.reader()
            try reader.export(what, format: format, filter: selection.filter(rows, reader), to: ByteSink())
        }
    }
}

struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a consistent copy of the log (SQLite online backup; safe while lineupd runs).",
        discussion: """
            With - as the destination the copy goes to standard output (made in $TMPDIR, else \
            /tmp, and removed there): lineupctl pull runs it over ssh.

            Examples:
              lineupctl backup /media/usb/lineup-2025-05-01.db
              lineupctl backup - > copy.db
            """)
    @OptionGroup var log: LogOptions
    @Argument(help: "The new file to write, or - for standard output.") var destination: String

    func run() throws {
        try researcherCommand {
            if destination == "-" {
                // Standard output carries the database: nothing else may go there.
                if log.json {
                    throw SessionLogError.invalidInput("--json does not go with -: standard output carries the copy")
                }
                if isatty(STDOUT_FILENO) != 0 {
                    throw SessionLogError.invalidInput(
                        "standard output is a terminal: redirect it (lineupctl backup - > copy.db) or name a file")
                }
                try log.reader().backup(toDescriptor: STDOUT_FILENO)
                return
            }
            try log.reader().backup(to: destination)
            if log.json { return try printJSON(["backup": destination]) }
            say("backed up to \(destination)")
        }
    }
}
