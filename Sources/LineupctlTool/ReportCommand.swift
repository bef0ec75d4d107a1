import ArgumentParser
import Foundation
import Readings
import Report
import SessionLog

#if canImport(Glibc)
    import Glibc
#endif

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "One self-contained HTML report: learning curves, latency, position bias, samples, click timing.",
        discussion: """
            Inline SVG and CSS, no script, nothing fetched: open it in any browser, offline, or print it. \
            Every figure is counted as `lineupctl stats` counts it, over the same selection: all dogs \
            unless --dog, --session, --since, --until, --mode, --program, --step or --handler narrow \
            it. docs/session-log.md ("The report") says what each chart shows; docs/figures.md \
            ("What the figures mean") defines every figure.

            --lab ADDRESS reports the lab store (docs/lab.md) instead of a log: the same report, \
            with the same selection options, counted by the same code, as on the stations' logs \
            merged by lineupctl merge.

            Examples:
              ssh pi lineupctl report > report.html
              lineupctl report --dog Aino --since 2025-05-01 -o aino.html
            """)
    @OptionGroup var log: LogOptions
    @OptionGroup var rows: RowFilterOptions
    @OptionGroup var selection: SelectionOptions
    @OptionGroup var lab: LabOptions
    @Option(name: .shortAndLong, help: ArgumentHelp("Write to this file (default: stdout).", valueName: "file"))
    var output: String?

    func run() throws {
        try researcherCommand {
            if log.json { throw SessionLogError.invalidInput("report writes HTML; --json does not apply") }
            // integrity_check on a log: a report is what a researcher keeps and shows, so a changed
            // value (which only an index disagreeing with its row reveals) must not reach it.
            let (html, withheld) = try withReadingSource(log, lab, checking: .integrity) { source in
                if let output, let path = source.log?.path {
                    try SessionLog.refuseLogFiles(output: output, log: path, writing: "report")
                }
                let filter = try selection.filter(rows, source.resolver)
                let withheld = try source.withheld(filter)
                let data = try ReportReading(filter).read(from: source.rows)
                return (ReportHTML.render(data, scope: describeSelection(rows, selection)), withheld)
            }
            if let output {
                try writeAtomically(html, to: output)
            } else {
                writeOut(Data(html.utf8))
            }
            // The report leaves a running double-blind session out: said beside it, on stderr.
            sayWithheld(withheld, "its trials are", toStandardError: true)
        }
    }
}

/// Writes beside the destination, then renames: a reader never sees half a report, and a
/// failure leaves whatever was there before.
func writeAtomically(_ text: String, to path: String) throws {
    let url = URL(fileURLWithPath: path)
    let directory = url.deletingLastPathComponent().path
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
        throw SessionLogError.invalidInput("cannot write \(path): no directory \(directory)")
    }
    let temporary = "\(directory)/.\(url.lastPathComponent).\(getpid()).tmp"
    guard FileManager.default.createFile(atPath: temporary, contents: Data(text.utf8)) else {
        throw SessionLogError.invalidInput("cannot write \(path): \(directory) is not writable")
    }
    guard rename(temporary, path) == 0 else {
        let reason = String(cString: strerror(errno))
        try? FileManager.default.removeItem(atPath: temporary)
        throw SessionLogError.invalidInput("cannot write \(path): \(reason)")
    }
}
