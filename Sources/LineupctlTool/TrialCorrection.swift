import ArgumentParser
import SessionLog
import StationConfig
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

                --indicated takes the station as the board names it (A, B, ... unless the board's \
                configuration names them otherwise; the names the trial's session logged) or as \
                the log numbers it (1 for the board's first station). Where the log cannot be read \
                here, a letter is the board's default name (A is 1, B is 2, ...).

                Examples:
                  lineupctl trial correct 9b1c0d2e --outcome miss --reason "video: the nose never held"
                  lineupctl trial correct 4d7e1a90 --outcome false-alert --indicated C --reason "video: held at C"
                """ + "\n\n" + additionNote)
        @OptionGroup var target: AdditionOptions
        @Argument(help: "The trial's id or id prefix (lineupctl trials).") var trial: String
        @Option(help: "How the trial should stand: hit, false-alert, miss, correct-rejection or aborted.")
        var outcome: TrialOutcome
        @Option(
            help: ArgumentHelp(
                "The station the dog indicated, if any: its name (B) or number (2).", valueName: "station"))
        var indicated: String?
        @Option(help: "Why (video review, a sensor that missed the hold...); kept with the correction.")
        var reason: String

        func run() throws {
            try researcherCommand {
                let indicated = try self.indicated.map(station)
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

        /// The log's number for the station typed: a number as it is (the correction checks the
        /// trial had it), a name as the trial's session logged the board's names.
        func station(_ text: String) throws -> Int {
            if let number = Int(text) { return number }
            let names: [StationName]
            do {
                names = try target.log.reader().stationNames(trial: trial)
            } catch {
                // Through lineupd the station's log may not be readable here (another path, no
                // permission): the board's default names stand in, and lineupd checks the trial.
                guard target.log.namedPath == nil else { throw error }
                if let number = LogLimits.stations.first(where: {
                    StationSpec.defaultName(number: $0).caseInsensitiveCompare(text) == .orderedSame
                }) {
                    return number
                }
                throw SessionLogError.invalidInput(
                    "--indicated \(text): not a station (a number from 1, or a letter A, B, ... as the board names them)"
                )
            }
            if let found = names.first(where: { $0.name.caseInsensitiveCompare(text) == .orderedSame }) {
                return found.number
            }
            throw SessionLogError.invalidInput(
                "--indicated \(text): trial \(trial) has no station so named (its stations: "
                    + names.map { "\($0.name) (\($0.number))" }.joined(separator: ", ") + ")")
        }
    }
}

extension TrialOutcome: ExpressibleByArgument {}
