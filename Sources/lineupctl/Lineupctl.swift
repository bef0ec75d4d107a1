import ArgumentParser

/// `lineupctl`: the station's tool for the trainer, the loading assistant and the researcher.
///
/// Each group of commands lives in its own file; this root only lists them.
@main
struct Lineupctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lineupctl",
        abstract: "Control the scent lineup station and read its log.",
        discussion: """
            Examples:
              lineupctl selftest --config /etc/lineup/station.toml
              lineupctl bench click
            """,
        subcommands: [
            Selftest.self, Version.self, Bench.self,
            Dogs.self, Samples.self, Sessions.self, SessionCommand.self, Trials.self, Events.self,
            Progress.self, Stats.self, Export.self, Backup.self,
            StatusCommand.self, LayoutCommand.self, ReadyCommand.self, WatchCommand.self,
        ]
    )
}

/// Benchmarks print one JSON object each, for scripts and for the README's figures.
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure the station: each benchmark prints one JSON object.",
        subcommands: [
            BenchClick.self, BenchDaemon.self, BenchEngine.self, BenchBlock.self, BenchLog.self, BenchFill.self, BenchExport.self,
            BenchStats.self,
        ]
    )
}
