import ArgumentParser
import Foundation
import Rescoring
import SessionLog

/// `lineupctl verify-scoring [SESSION]`: every trial rescored from the log's raw rows by a
/// second implementation, read-only (docs/figures.md, "How the re-scorer decides").
struct VerifyScoringCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify-scoring",
        abstract: "Rescore every trial from its logged edges and presses, and name each disagreement.",
        discussion: """
            Recomputes each trial's outcome, its indications, the station it was indicated at and \
            the station each trainer's press was attributed to, from the log alone: the station \
            levels the debouncer passed, the presses, the sensor faults as logged and the step's \
            rules kept in the session's settings (hold, its tolerance, the search's time-out, the \
            round's length, ending on a false alert, the stuck time). The re-scorer is a second \
            implementation that shares no code with the station's engine. Each disagreement is one \
            line: session, trial, what the log says, what the re-scorer says; exit status 1 when \
            there is any, or when a session named cannot be rescored (logged by lineupd --fast or \
            before the rules were logged, or a double-blind session still running). With no \
            session, every session of the log; those that cannot be rescored are said so.

            Example:
              lineupctl verify-scoring 3f2a9c1e
            """)

    @OptionGroup var log: LogOptions
    @Argument(help: "The session's id or id prefix (default: every session).") var session: String?

    func run() throws {
        try researcherCommand {
            let reader = try log.reader(checking: .quick)
            // Every session: a double-blind one still running is left out and said to be, in
            // one line after the results, as every listing says it (issue 32); named, it is
            // refused (resolveSession).
            let withheld = session == nil ? try reader.withheldSessions() : []
            defer { sayWithheld(withheld, "its trials are", toStandardError: log.json) }
            let held = Set(withheld.map(\.id))
            let ids =
                try session.map { [try reader.resolveSession($0)] }
                ?? reader.sessionIds().filter {
                    !held.contains($0)
                }
            let results = try ids.map { try reader.verifyScoring(session: $0) }
            if log.json {
                try printJSON(results.map(Report.init))
            } else {
                writeOut(Self.describe(results))
            }
            let disagree = results.contains { !$0.disagreements.isEmpty }
            let unverified = session != nil && results.contains { $0.notRescored != nil }
            if disagree || unverified { throw ExitCode(1) }
        }
    }

    /// One session's result for `--json`.
    struct Report: Encodable {
        var session: String
        var trials: Int
        var notRescored: String?
        var disagreements: [Disagreement]

        init(_ v: ScoringVerification) {
            session = v.session
            trials = v.trials
            notRescored = v.notRescored
            disagreements = v.disagreements
        }

        enum CodingKeys: String, CodingKey {
            case session, trials, disagreements
            case notRescored = "not_rescored"
        }
    }

    static func describe(_ results: [ScoringVerification]) -> String {
        var text = ""
        var agreed = 0
        var trials = 0
        for v in results {
            let short = v.session.prefix(8)
            if let why = v.notRescored {
                text += "Session \(short): not rescored: \(why).\n"
            } else if v.disagreements.isEmpty {
                agreed += 1
                trials += v.trials
            } else {
                for d in v.disagreements { text += d.line + "\n" }
            }
        }
        let sessions = results.filter { $0.notRescored == nil }.count
        text +=
            agreed == sessions
            ? "All \(count(trials, "trial")) of \(count(sessions, "session")) rescored: the log and the re-scorer agree.\n"
            : "\(sessions - agreed) of \(count(sessions, "session")) rescored disagree with the log.\n"
        return text
    }
}
