import ArgumentParser
import Foundation
import SessionLog

/// `lineupctl verify-blinding SESSION`: recomputes every committed layout of a double-blind
/// session from the log, read-only (docs/figures.md, "Committed layouts").
struct VerifyBlindingCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify-blinding",
        abstract: "Check a double-blind session's committed layouts against its log.",
        discussion: """
            Before each trial of a double-blind session the station logs a commitment: the SHA-256 \
            of the trial's layout and a random salt. The salt is logged once the trial is over. \
            This recomputes every commitment from the trial's logged layout and salt and names each \
            trial whose layout does not match (changed after it was committed), whose commitment was \
            logged after it started or opened before it ended (revealed early), or whose commitment or \
            salt is missing. Exit status 1 when any trial fails, and when the session is a double-blind \
            session still running (its trials are withheld until it ends: nothing can be verified yet). --json prints each trial's digest and \
            salt, to recompute them with sha256sum (docs/figures.md says which bytes).

            Example:
              lineupctl verify-blinding 3f2a9c1e
            """)

    @OptionGroup var log: LogOptions
    @Argument(help: "The session's id or id prefix.") var session: String

    func run() throws {
        try researcherCommand {
            let reader = try log.reader()
            let v: BlindingVerification
            do {
                v = try reader.verifyBlinding(session: reader.resolveSession(session))
            } catch SessionLogError.withheld(let running) {
                // Its trials are withheld while it runs: nothing is verified, so it does not pass.
                throw SessionLogError.invalidInput(
                    "session \(running.id.prefix(8)) cannot be verified yet: "
                        + WithheldSession.sentence([running], "its trials and layouts are"))
            }
            if log.json {
                try printJSON(v)
            } else {
                writeOut(Data(Self.describe(v).utf8))
            }
            if !v.failed.isEmpty { throw ExitCode(1) }
        }
    }

    static func describe(_ v: BlindingVerification) -> String {
        let short = v.session.prefix(8)
        guard v.mode == .doubleBlind else {
            return "Session \(short) is \(v.mode.rawValue), not double-blind: its layouts are not committed.\n"
        }
        guard v.logHasCommitments else {
            return "Session \(short): this log is older than committed layouts; nothing to verify.\n"
        }
        var text = ""
        let notRun =
            v.committedNotRun.isEmpty
            ? "" : "; \(count(v.committedNotRun.count, "trial")) committed and never run"
        let failed = v.failed
        if !v.trials.isEmpty && v.trials.allSatisfy({ $0.digest == nil }) {
            // Logged before committed layouts, or written after it ran (`lineupd --simulate --fast`).
            return "Session \(short): no commitment was logged for any of its \(count(v.trials.count, "trial")): "
                + "its blinding cannot be verified from the log.\n"
        }
        if failed.isEmpty {
            text +=
                "Session \(short): all \(count(v.trials.count, "trial")) match the layouts committed before they "
                + "started, each opened after it ended\(notRun).\n"
        } else {
            text += "Session \(short): \(failed.count) of \(count(v.trials.count, "trial")) fail\(notRun):\n"
            for trial in failed {
                for problem in trial.problems { text += "  \(problem)\n" }
            }
        }
        return text
    }
}
