import ArgumentParser
import SessionLog
import StationControl
import TrainingEngine

/// `lineupctl trial correct`: the trainer's or researcher's word replaces how the station scored
/// a trial. Through lineupd (which owns the log), or into a file named with --db.
struct TrialCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trial", abstract: "Correct a trial's outcome (the original is kept).",
        subcommands: [Correct.self])

    struct Correct: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Correct how a trial was scored: a new row that replaces it in every listing and figure.",
            discussion: """
                The log is append-only: the correction is a new trial row that names the one it \
                corrects (`corrects`), with the same session, number, layout and times, and your \
                reason. What each station saw is kept; the indicated station becomes the only one \
                indicated. Listings, statistics and exports show the trial as corrected; the \
                original stays in the log. To correct a correction, correct the newest one.

                The outcome must fit the layout: hit needs --indicated at the target's station; \
                false-alert needs --indicated at another station; miss (a target, nothing \
                indicated) and correct-rejection (no target, nothing indicated) take no \
                --indicated; aborted takes the trial out of the figures.

                Examples:
                  lineupctl trial correct 9b1c0d2e --outcome miss --reason "video: the nose never held"
                  lineupctl trial correct 4d7e1a90 --outcome false-alert --indicated 3 --reason "video: held at 3"
                """ + "\n\n" + additionNote)
        @OptionGroup var target: AdditionOptions
        @Argument(help: "The trial's id or id prefix (lineupctl trials).") var trial: String
        @Option(help: "How the trial should stand: hit, false-alert, miss, correct-rejection or aborted.")
        var outcome: TrialOutcome
        @Option(help: ArgumentHelp("The station the dog indicated (1-based), if any.", valueName: "station"))
        var indicated: Int?
        @Option(help: "Why (video review, a sensor that missed the hold...); kept with the correction.")
        var reason: String

        func run() throws {
            try researcherCommand {
                let id = try target.add(
                    direct: {
                        try $0.correctTrial(trial, outcome: outcome, indicatedStation: indicated, reason: reason).id
                    },
                    daemon: { client throws(ControlClientError) in
                        try client.correctTrial(
                            TrialCorrectionEntry(trial: trial, outcome: outcome, indicated: indicated, reason: reason))
                    })
                if target.log.json { return try printJSON(["id": id]) }
                say("trial \(trial) corrected to \(outcome.rawValue) (correction \(id.prefix(8)))")
            }
        }
    }
}

extension TrialOutcome: ExpressibleByArgument {}
