import ArgumentParser

/// `lineupctl`: the station's tool for the trainer, the loading assistant and the researcher.
///
/// Each group of commands lives in its own file; this root only lists them.
struct Lineupctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lineupctl",
        abstract: "Control the scent lineup station and read its log.",
        discussion: """
            Controlling the station (members of the lineup group, over its control socket):
              lineupctl status
              lineupctl session start --dog Rex --program research-5-station --step phase-3/1 \\
                  --sample T-7 --sample C-1 --sample C-2 --sample C-3 --sample C-4 --sample C-5
              lineupctl layout --assistant
              lineupctl ready
              lineupctl watch
              lineupctl session end --suggestions "shorter blocks"

            Reading the log (read-only, safe while the station runs):
              lineupctl sessions --dog Rex
              lineupctl export --what trials --format csv > trials.csv
              lineupctl report > report.html
              lineupctl verify-blinding 3f2a9c1e
              lineupctl verify-scoring

            Training programs:
              lineupctl programs
              lineupctl program show study
              lineupctl program check my-program.toml --stations 5

            Checking the board:
              lineupctl selftest --config /etc/lineup/station.toml

            Shell completion: lineupctl --generate-completion-script bash > /etc/bash_completion.d/lineupctl
            """,
        // The station's one version: packaging/deb/build.sh names the .deb after it.
        version: "0.20.0",
        subcommands: [
            Selftest.self, Version.self,
            Dogs.self, Samples.self, Sessions.self, SessionCommand.self, Trials.self, Events.self,
            TrialCommand.self, Progress.self, Stats.self, ReportCommand.self, Export.self, Backup.self,
            VerifyBlindingCommand.self, VerifyScoringCommand.self, MergeCommand.self, PullCommand.self, ProgramsCommand.self, ProgramCommand.self,
            StatusCommand.self, LayoutCommand.self, ReadyCommand.self, GuessCommand.self, WatchCommand.self,
            SimulateCommand.self,
            WebCommand.self, LabCommand.self,
        ]
    )
}
