import ArgumentParser
import Figures
import Foundation
import Glibc
import LabStore
import LineupBench
import ReadingRows
import Readings
import SessionLog

/// `lineup-bench lab`: the lab store against the merged SQLite log, on a throwaway
/// PostgreSQL of its own (Debian's binaries, as the tests use): rows/s into the store from one
/// station and from several at once (`lineup-sync` processes, one per station, as on a lab's
/// network), then `stats` and `report` on the store against the same on the merged logs.
struct BenchLab: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lab",
        abstract:
            "Rows/s into the lab store, and stats and report on the store against the merged log (one JSON object).",
        discussion: """
            Starts a PostgreSQL server of its own in a temporary directory (initdb and pg_ctl \
            from /usr/lib/postgresql/*/bin; as root they run as the postgres user), creates a \
            lab store in it, fills --stations + 1 station logs (bench fill's generator, \
            different dogs and samples on each) of --trials trials in all, and syncs them with \
            lineup-sync (found beside this lineup-bench): the first log alone, then the other \
            --stations at once, one process each. It merges the same logs into one SQLite log \
            (lineupctl merge's code) and times stats by dog, session, sample and station on each \
            (the fastest of --runs), checking that both give the same rows, then the HTML report \
            on each, checking that both give the same HTML (made at the same time). Export is \
            not timed.

            Example:
              lineup-bench lab --trials 1000000 --stations 10
            """)

    @Option(help: "Trials in all the logs together.") var trials = 100_000
    @Option(help: "Stations syncing at once (one more log is synced alone first).") var stations = 10
    @Option(help: "Raw events per trial in the generated logs.") var eventsPerTrial = 2
    @Option(help: "Runs of each stats; the fastest counts.") var runs = 3
    @Flag(
        help: ArgumentHelp(
            "Leave the PostgreSQL server running with its store, logs and merged log, and say how to reach it "
                + "(psql, lineupctl --lab, pg_ctl stop): for EXPLAIN ANALYZE and profiles without syncing again."))
    var keep = false

    func validate() throws {
        guard trials >= 1000 else { throw ValidationError("--trials \(trials): at least 1000") }
        guard (1...50).contains(stations) else { throw ValidationError("--stations \(stations) is outside 1...50") }
    }

    struct Result: Encodable {
        var trials: Int
        var stationLogs: Int
        var eventsPerTrial: Int
        var rowsOneStation: Int
        var secondsOneStation: Double
        var rowsPerSecondOneStation: Double
        var stationsAtOnce: Int
        var rowsAtOnce: Int
        var secondsAtOnce: Double
        var rowsPerSecondAtOnce: Double
        var statsSecondsStore: [String: Double]
        var statsSecondsMergedLog: [String: Double]
        /// Store over merged log, per grouping: the goal is at most 2.
        var statsRatio: [String: Double]
        var sameRows: Bool
        var loadAverage: String
        /// The report on each (BenchLab+Report.swift).
        var report: ReportTimes? = nil
        /// The report of one dog (the merged log's first by id): the selection's path.
        var reportOneDog: ReportTimes? = nil
        var familiarNovel: FamiliarNovelTimes? = nil
    }

    func run() throws {
        try researcherCommand {
            let sync = besideThisExecutable("lineup-sync").path
            guard FileManager.default.isExecutableFile(atPath: sync) else {
                throw SessionLogError.invalidInput("lab: no lineup-sync beside lineup-bench (\(sync)): build both")
            }
            let server = try ScratchPostgres()
            defer {
                // Several lines, for a person to copy from: not lineupctl's one-line error voice.
                if keep {
                    FileHandle.standardError.write(Data((server.howToReach() + "\n").utf8))
                } else {
                    server.remove()
                }
            }
            let dir = server.directory
            let lab = try waitFor { try await server.makeLab() }
            let stationFile = try server.connectionFile(lab.station, in: dir, name: "station.conf")
            if keep { _ = try server.connectionFile(lab.researcher, in: dir, name: "researcher.conf") }

            // The logs: one synced alone, then `stations` at once.
            let logs = stations + 1
            var paths: [String] = []
            for index in 0..<logs {
                var filler = LogFiller()
                filler.dogs = 10
                filler.trialsPerSession = 40
                filler.sessionsPerDog = max(1, (trials / logs + 399) / 400)
                filler.eventsPerTrial = eventsPerTrial
                filler.seed = UInt64(100 + index)
                filler.namePrefix = "S\(index + 1)-"
                let path = "\(dir)/station-\(index + 1).db"
                _ = try filler.fill(try SessionLog(path: path))
                paths.append(path)
            }

            func syncAll(_ logs: [String]) throws -> (rows: Int, seconds: Double) {
                let start = ContinuousClock.now
                let processes = try logs.map { log in
                    try ScratchPostgres.spawn(sync, ["--log", log, "--connection", stationFile, "--once", "--json"])
                }
                var rows = 0
                for (log, process) in zip(logs, processes) {
                    let (status, output) = process.wait()
                    // Its report is the JSON line; stderr (merged) may say it found no lineupd to tell.
                    let report = output.split(separator: "\n").lazy.compactMap {
                        try? JSONDecoder().decode(SyncReport.self, from: Data($0.utf8))
                    }.first
                    guard status == 0, let report, report.complete else {
                        throw SessionLogError.invalidInput("bench lab: lineup-sync of \(log) failed: \(output)")
                    }
                    rows += report.sentTotal
                }
                return (rows, start.duration(to: .now).seconds)
            }
            let one = try syncAll([paths[0]])
            let many = try syncAll(Array(paths.dropFirst()))

            let merged = "\(dir)/merged.db"
            let log = try SessionLog(path: merged)
            for path in paths { _ = try log.merge(from: path) }
            let reader = try SessionLog.openReader(path: merged)
            let researcher = lab.researcher

            var onStore: [String: Double] = [:]
            var onLog: [String: Double] = [:]
            var ratio: [String: Double] = [:]
            var same = true
            for grouping in StatsGrouping.allCases {
                var best = (store: Double.infinity, log: Double.infinity)
                for _ in 0..<max(1, runs) {
                    var start = ContinuousClock.now
                    let logRows = try reader.stats(by: grouping)
                    best.log = min(best.log, start.duration(to: .now).seconds)
                    start = ContinuousClock.now
                    // Opened, read through the readings' row interface (as `stats --lab` reads), closed.
                    let lab = try waitFor { try await LabReader.open(researcher) }
                    let storeRows: [StatsRow]
                    do { storeRows = try lab.stats(by: grouping) } catch {
                        _ = try? waitFor { await lab.close() }
                        throw error
                    }
                    _ = try? waitFor { await lab.close() }
                    best.store = min(best.store, start.duration(to: .now).seconds)
                    same = same && storeRows == logRows
                }
                onStore[grouping.rawValue] = best.store
                onLog[grouping.rawValue] = best.log
                ratio[grouping.rawValue] = (best.store / best.log * 100).rounded() / 100
            }
            let trialCount = try reader.trialRowCount()
            var result =
                Result(
                    trials: trialCount, stationLogs: logs, eventsPerTrial: eventsPerTrial,
                    rowsOneStation: one.rows, secondsOneStation: one.seconds,
                    rowsPerSecondOneStation: (Double(one.rows) / one.seconds).rounded(), stationsAtOnce: stations,
                    rowsAtOnce: many.rows, secondsAtOnce: many.seconds,
                    rowsPerSecondAtOnce: (Double(many.rows) / many.seconds).rounded(), statsSecondsStore: onStore,
                    statsSecondsMergedLog: onLog, statsRatio: ratio, sameRows: same,
                    loadAverage: (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?
                        .split(separator: " ").prefix(3).joined(separator: " ") ?? "-")
            result.report = try timeReports(reader, researcher)
            var oneDog = LogFilter()
            oneDog.dogId = try reader.read { db in try String.fetchOne(db, sql: "SELECT min(id) FROM dog") }
            result.reportOneDog = try timeReports(reader, researcher, oneDog)
            result.familiarNovel = try timeFamiliarNovel(reader, researcher)
            try printJSON(result, oneLine: true)
        }
    }
}
