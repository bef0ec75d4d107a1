import ArgumentParser
import Foundation
import Readings
import Report
import SessionLog

/// `lineup-bench report`: how long the whole report takes (read, count, draw).
struct BenchReport: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report", abstract: "Time `lineupctl report` over a log; print one JSON line.")

    @Option(help: "The database to read.") var db: String
    @Option(help: "Runs; the fastest counts.") var runs = 3

    func run() throws {
        try researcherCommand {
            let reader = try SessionLog.openReader(path: db)
            var best: (total: Double, gather: Double, render: Double, bytes: Int, trials: Int)?
            for _ in 0..<max(1, runs) {
                let start = ContinuousClock.now
                let data = try reader.report()
                let gathered = ContinuousClock.now
                let html = ReportHTML.render(data, scope: "all dogs")
                let bytes = html.utf8.count
                let end = ContinuousClock.now
                let total = start.duration(to: end).seconds
                if best == nil || total < best!.total {
                    best = (
                        total, start.duration(to: gathered).seconds, gathered.duration(to: end).seconds, bytes,
                        data.trials
                    )
                }
            }
            struct Result: Encodable {
                var trials: Int
                var seconds: Double
                var gatherSeconds: Double
                var renderSeconds: Double
                var bytes: Int
                var runs: Int
                var build: String
            }
            #if DEBUG
                let build = "debug"
            #else
                let build = "release"
            #endif
            let encoder = JSONEncoder()
            encoder.keyEncodingStrategy = .convertToSnakeCase
            encoder.outputFormatting = [.sortedKeys]
            var line = try encoder.encode(
                Result(
                    trials: best!.trials, seconds: best!.total, gatherSeconds: best!.gather,
                    renderSeconds: best!.render, bytes: best!.bytes, runs: max(1, runs), build: build))
            line.append(10)
            FileHandle.standardOutput.write(line)
        }
    }
}
