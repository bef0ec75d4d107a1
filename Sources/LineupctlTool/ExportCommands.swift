import ArgumentParser
import Foundation
import SessionLog
import StationControl
import TrainingEngine

// Taking the log away: exports for pandas and R, and a consistent backup.

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Stream sessions, trials, events, samples, milestones, dogs or guesses as CSV or JSON Lines to stdout.",
        discussion: """
            CSV follows RFC 4180 with a header row; times are ISO 8601 with the station's \
            offset, beside monotonic nanoseconds. Trials carry the sample and kind of every \
            station as columns. Milestones are the steps passed and phases graduated, with the \
            session and station that earned them; dogs carry their counts and the stations they \
            trained on. Guesses are the handler's guesses in the chosen trials, one row each with \
            its trial as it stands after corrections (aborted ones included), from which every \
            figure of stats --guesses can be recomputed (docs/figures.md, "The handler's guess"). \
            Samples and dogs are selected by --since and --until by when they were added. \
            pandas.read_csv and R's read.csv load it without options.

            --lab ADDRESS exports from the lab store (docs/lab.md) instead of a log: the same \
            columns and bytes as the merged logs' export, with the same options. A store keeps \
            two stations' dogs of one name apart (a merged log makes them one), and has each \
            station's events in that station's order, stations by id.

            Examples:
              lineupctl export --what trials > trials.csv
              lineupctl export --what milestones --dog Aino > milestones.csv
              lineupctl export --what events --session 3f2a9c1e --format jsonl > events.jsonl
              lineupctl export --what guesses > guesses.csv
            """)
    @OptionGroup var log: LogOptions
    @OptionGroup var rows: RowFilterOptions
    @OptionGroup var selection: SelectionOptions
    @OptionGroup var lab: LabOptions
    @Option(help: "sessions, trials, events, samples, milestones, dogs or guesses.") var what: ExportTable
    @Option(help: "csv or jsonl.") var format: ExportFormat = .csv

    func run() throws {
        try researcherCommand {
            try lab.refuseBoth(db: log.db)
            if let address = lab.lab {
                return try labExport(address, what, format: format, rows, selection)
            }
            // The whole file: an export is the log taken away, and reads most of it anyway.
            let reader = try log.reader(checking: .quick)
            let filter = try selection.filter(rows, reader)
            // Standard output is the file: what a running double-blind session withholds is said on stderr.
            let withheld = try reader.withheldSessions(filter)
            let sink = ByteSink()
            try reader.export(what, format: format, filter: filter, to: sink)
            endIfReaderLeft(sink)
            sayWithheld(withheld, "its rows are", toStandardError: true)
        }
    }
}

struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a consistent copy of the log (SQLite online backup; safe while lineupd runs).",
        discussion: """
            With - as the destination the copy goes to standard output (made in $TMPDIR, else \
            /tmp, and removed there): lineupctl pull runs it over ssh. A log SQLite's \
            integrity_check finds damaged is refused, not copied (docs/session-log.md, "A damaged log").

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
                // A copy of a damaged log would pass the damage on as if it were whole.
                try log.reader(checking: .integrity).backup(toDescriptor: STDOUT_FILENO)
                return
            }
            try log.reader(checking: .integrity).backup(to: destination)
            if log.json { return try printJSON(["backup": destination]) }
            say("backed up to \(destination)")
        }
    }
}
