import ArgumentParser
import Figures
import Foundation
import ProgramFiles
import ReadingRows
import Readings
import SessionLog
import StationControl
import TrainingEngine

// A dog's progress through its program, and the statistics over the log.

struct Progress: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A dog's progress through its programs: every phase and step, with %.",
        discussion: """
            Each program is shown on its own, with its own phases only: the one --program names, \
            else every program the dog has sessions in, the program of its latest session first \
            (then its sessions logged without a program, such as simulated blocks). Every phase \
            of a program is shown, those not started at 0 %. A step with a criterion is as far \
            along as its criterion (100 % once met, from its scored trials and trainer-led rounds \
            in order); a step without one is done when each exercise was done correctly as often \
            as the program allows, in a row (trainer-led: each exercise's repeats, the study's "up \
            to four times"; automated: one block of its trials), the project's reading of the \
            study. Each step's verdict (met or not met) stands beside its criterion, with the \
            counts it was judged on; a milestone logged under another rule says which. Only sessions run in the step's own mode (trainer-led, \
            automated or double-blind, as the program fixes it) count toward a step: the steps \
            table says how many trials in another mode were left out. A phase is the mean of its \
            steps. Correct and last-20 figures come straight from the phase's trials, whatever \
            their mode.

            Under each program, the dog's next step: the first step of the program not passed, \
            with its first exercise not yet done (the step the page's queue starts it on).

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
            let dogId = try reader.resolveDog(dog)
            let phases = try reader.progress(dogId: dogId, program: chosen)
            let withheld = try reader.withheldSessions(LogFilter(dogId: dogId))
            defer { sayWithheld(withheld, "its session and trials are", toStandardError: log.json) }
            if log.json { return try printJSON(phases) }
            // A dog with no sessions: said, not an empty answer (an unknown dog is refused above).
            if phases.isEmpty {
                return say("\(dog) has no \(withheld.isEmpty ? "" : "other ")sessions in the log: no progress to show")
            }
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
                // The step a session of this dog starts next (the page's queue starts the same).
                if let name = block.program {
                    let next =
                        try chosen.map { try reader.nextStep(dogId: dogId, program: $0) }
                        ?? reader.nextStep(dogId: dogId, programNamed: name)
                    say("")
                    say(next.map { "Next step: " + Self.words($0) } ?? "Next step: none, every step is passed")
                }
            }
        }
    }

    /// `target-scent/1 (Target and one empty container), exercise 1, trainer-led, 1 to 4 repetitions`.
    static func words(_ next: NextStep) -> String {
        var words = "\(next.step) (\(next.title))"
        if let exercise = next.exercise { words += ", exercise \(exercise)" }
        words += ", \(next.mode.rawValue)"
        if let most = next.mostRepetitions, let fewest = next.fewestRepetitions {
            words += ", \(fewest) to \(most) repetitions"
        }
        return words
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
        // Each verdict beside the criterion it is the verdict of, with the counts it rests on.
        printTable(
            ["STEP", "TITLE", "MODE", "PROGRESS", "CRITERION", "ON THE TRIALS", "PASSED"],
            steps.map { phase, step in
                var counts = step.verdict.words
                if step.otherModeTrials > 0 {
                    counts += " (\(count(step.otherModeTrials, "trial")) in another mode not counted)"
                }
                return [
                    "\(phase)/\(step.step)", step.title, step.mode.rawValue, "\(step.percent) %", step.rule, counts,
                    step.passed.map { date in
                        "yes, \(date)"
                            + (step.passedCriterion.map { $0.hasPrefix(step.rule) ? "" : " (by: \($0))" } ?? "")
                    } ?? (step.verdict.met ? "met, no milestone logged yet" : "not yet"),
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

            Each rate stands beside the counts it is computed from. By dog and by session, \
            HIT TRIALS, MISS TRIALS, FA TRIALS and CR TRIALS count trials by their outcome, and \
            CORRECT (trial accuracy) is computed from them. Every table's presentation columns \
            count each station of each scored trial by the kind of sample in it: a target hit or \
            missed (SENSITIVITY beside them), a control (or distractor) falsely alerted, examined \
            and passed, or never examined (SPECIFICITY beside them), a blank indicated or passed. \
            By sample, a sample the dogs indicate far more than the others of its kind is \
            flagged on a line of its own (docs/figures.md, "A flagged sample").

            Every trial of the log is counted unless the options narrow it: --mode, --program, \
            --step and --handler choose sessions, --since and --until their trials' times. The \
            first line says which trials the table covers.

            --prevalence P adds PPV and NPV at prevalence P (0 < P < 1) from each row's \
            sensitivity and specificity by Bayes' theorem, with 95 % intervals from the corners \
            of the two Wilson intervals, each at √0.95 (JSON: `at_prevalence` in each row). \
            --guesses counts the handler's guesses (lineupctl guess) instead, by handler code \
            (--by session: by session): hit rate against chance with an exact binomial test, \
            and the dog's false alerts at the guessed station against chance.

            Examples:
              lineupctl stats --by dog
              lineupctl stats --by sample --dog Aino --since 2025-05-01
              lineupctl stats --by session --mode double-blind --step phase-3/1
              lineupctl stats --familiar-novel --dog Aino
              lineupctl stats --sources
              lineupctl stats --by dog --prevalence 0.01
              lineupctl stats --guesses --mode double-blind
              lineupctl stats --threshold --dog Aino
              lineupctl stats --threshold --threshold-by conditions --json

            --lab ADDRESS reads the lab store (docs/lab.md) instead of a log, through the same \
            counting: the --by tables, text or --json, with --prevalence and the options that \
            narrow the trials (--dog, --session, --since, --until, --mode, --program, --step, \
            --handler), each meaning what it means on a log. Two dogs of one name on two stations \
            are two dogs in the store: --dog with that name is refused, naming both ids. \
            --sources, --familiar-novel, --guesses and --threshold read the store too.

            --threshold gives, for the trials whose target is a rung of a dilution ladder \
            (lineupctl samples add-ladder), the trials and finds per dilution and the \
            psychometric fit's threshold with its 95 % profile-likelihood interval, the guess \
            rate (1 / stations) and the lapse rate, and the reversal estimate (the geometric mean \
            of each staircase's last 6 reversals; not computed, saying why, with fewer), per dog, \
            session and stock; --threshold-by dog pools a dog's sessions, --threshold-by \
            conditions its sessions of the same recorded conditions (docs/figures.md, "How \
            little the dog can smell").

            --familiar-novel shows each dog's sensitivity and specificity on samples it had met \
            in an earlier trial and on samples new to it, with Fisher's exact test of the \
            difference, and flags a dog whose novel-sample sensitivity is well below its familiar \
            one. --sources shows each dog's figures by the samples' source, collection and \
            processing, and flags a dog whose indications follow the source as well as the kind \
            when targets and controls come from different sources. The rules and their thresholds \
            (the project's) are in docs/figures.md.
            """)
    @OptionGroup var log: LogOptions
    @OptionGroup var rows: RowFilterOptions
    @OptionGroup var selection: SelectionOptions
    @OptionGroup var lab: LabOptions
    @Option(help: "Group by dog, session, sample or station.") var by: StatsGrouping = .dog
    @OptionGroup var extra: StatsExtraOptions
    @Flag(help: "Per dog: sensitivity and specificity on familiar and on novel samples, instead of the --by table.")
    var familiarNovel = false
    @Flag(help: "Per dog: figures by sample source, collection and processing, instead of the --by table.")
    var sources = false
    @OptionGroup var threshold: ThresholdOptions

    func validate() throws {
        let views = [familiarNovel, sources, extra.guesses, threshold.threshold].filter { $0 }.count
        if views > 1 { throw ValidationError("--familiar-novel, --sources, --guesses and --threshold: choose one") }
        try threshold.validate()
    }

    func run() throws {
        try researcherCommand {
            let prevalence = try extra.prevalence.map { try checkPrevalence($0) }
            try lab.refuseBoth(db: log.db)
            // Whichever table, the trials of a running double-blind session are left out: said after it.
            var withheld: [WithheldSession] = []
            defer {
                sayWithheld(
                    withheld, extra.guesses ? "its guesses and trials are" : "its trials are",
                    toStandardError: log.json)
            }
            // nil once another table is printed.
            let read: [StatsRow]? = try withReadingSource(log, lab) { source in
                let filter = try selection.filter(rows, source.resolver)
                withheld = try source.withheld(filter)
                if threshold.threshold {
                    try printThresholds(ThresholdReading(by: threshold.by, filter).read(from: source.rows))
                    return nil
                }
                if familiarNovel {
                    try printFamiliarNovel(FamiliarNovelReading(filter).read(from: source.rows))
                    return nil
                }
                if extra.guesses {
                    try printGuesses(GuessReading(by: guessGrouping, filter).read(from: source.rows))
                    return nil
                }
                if sources {
                    try printSources(SourcesReading(filter).read(from: source.rows))
                    return nil
                }
                return try StatsReading(by: by, filter).read(from: source.rows)
            }
            guard let stats = read else { return }
            if log.json {
                guard let prevalence else { return try printJSON(stats) }
                return try printJSON(
                    stats.map { StatsRowAtPrevalence(row: $0, atPrevalence: $0.figures.atPrevalence(prevalence)) })
            }
            say("Trials of \(describeSelection(rows, selection))")
            let byPresentation = by == .sample || by == .station
            var header = [by.rawValue.uppercased()]
            if by == .session { header.append("STARTED") }
            if by == .sample { header.append("KIND") }
            // A station by its name (`StationNames`), its number in the log beside it.
            if by == .station { header.append("NUMBER") }
            header += ["TRIALS", "ABORTED"]
            // Each rate beside the counts it is computed from: trial accuracy beside the trials'
            // outcomes, sensitivity and specificity beside the presentations' verdicts.
            if !byPresentation { header += trialOutcomeHeads }
            header += presentationHeads
            printTable(
                header,
                stats.map { s in
                    let f = s.figures
                    var row = [
                        by == .session
                            ? String(s.group.prefix(max(0, s.group.count - 28))) : s.station?.name ?? s.group
                    ]
                    if by == .session { row.append(String((s.started ?? "-").prefix(16))) }
                    if by == .sample { row.append(s.kind?.rawValue ?? "-") }
                    if by == .station { row.append(s.station.map { "\($0.number)" } ?? "-") }
                    row += ["\(f.results.trials)", "\(f.results.aborted)"]
                    if !byPresentation { row += trialOutcomeCells(f) }
                    return row + presentationCells(f, kind: s.kind)
                })
            if let prevalence { printAtPrevalence(stats, prevalence) }
            for row in stats where row.sampleFlag?.flagged == true { say(sampleFlagLine(row)) }
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
