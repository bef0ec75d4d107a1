import ArgumentParser

/// `lineup-bench`: the station's benchmarks, one JSON object each, for scripts, CI and the
/// README's table. Built beside lineupd and lineupctl (`swift build`) and never installed on a
/// station: packaging/deb/build.sh leaves it out, and the station's own check is
/// `lineupctl selftest`.
@main
struct LineupBenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lineup-bench",
        abstract: "Measure the station: each benchmark prints one JSON object.",
        discussion: """
            Run from the build directory: the benchmarks that start lineupd, lineupctl or \
            lineup-sync find them beside this executable, and `click` and `engine` count \
            allocations with the malloc interposer built there.

            Examples:
              lineup-bench click
              lineup-bench engine
              lineup-bench block --trials 10000
              lineup-bench threshold --dogs 200
              lineup-bench table --write README.md
            """,
        subcommands: [
            BenchClick.self, BenchDaemon.self, BenchEngine.self, BenchBlock.self, BenchLog.self, BenchFill.self,
            BenchExport.self, BenchStats.self, BenchReport.self, BenchStorage.self, BenchCheck.self,
            BenchSessions.self, BenchLab.self, BenchThreshold.self, BenchTable.self,
        ]
    )
}
