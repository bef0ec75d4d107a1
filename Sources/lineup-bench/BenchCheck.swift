import ArgumentParser
import Foundation
import ReadingRows
import SessionLog

/// `lineup-bench check`: what each of the reading commands' damage checks costs on a log,
/// the figures the project chose by (docs/session-log.md, "A damaged log").
struct BenchCheck: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Time each damage check (quick_check without events, quick_check, integrity_check); one JSON object.",
        discussion: """
            Make a big log first, e.g. 1,000,000 events: lineup-bench fill --db big.db \
            --sessions-per-dog 100 (10 dogs, 40 trials a session, 25 events a trial).

            Example:
              lineup-bench check --db big.db
            """)

    @Option(help: "The database to read.") var db: String
    @Option(help: "Runs of each check; the fastest counts (the first run may read the file from disk).")
    var runs = 3

    func run() throws {
        try researcherCommand {
            let reader = try SessionLog.openReader(path: db)
            let events = try reader.eventCount(LogFilter())
            let bytes = (try? FileManager.default.attributesOfItem(atPath: db)[.size] as? Int) ?? 0
            var seconds: [String: Double] = [:]
            for check in LogCheck.allCases where check != .none {
                var best = Double.infinity
                for _ in 0..<max(1, runs) {
                    let start = ContinuousClock.now
                    try reader.check(check)
                    best = min(best, start.duration(to: .now).seconds)
                }
                seconds[check.rawValue] = best
            }
            struct Result: Encodable {
                var events: Int
                var fileBytes: Int
                var runs: Int
                var seconds: [String: Double]
            }
            try printJSON(
                Result(events: events, fileBytes: bytes, runs: max(1, runs), seconds: seconds),
                oneLine: true)
        }
    }
}
