import ArgumentParser
import Figures
import Foundation
import LineupBench
import ReadingRows
import Readings
import SessionLog
import TrainingEngine

#if canImport(Glibc)
    import Glibc
#endif

// Benchmarks of the session log. Each prints one JSON object; none is a timed test.

/// `lineup-bench log`: the writer under a sustained event rate, with trials
/// committed as a session would. With `--announce` it prints `trial <id>` the moment
/// each trial's commit returns, so a test can `kill -9` it and check every announced
/// trial survived.
struct BenchLog: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log", abstract: "Log events at a rate through the writer; print one JSON object.")

    @Option(help: "Database to write (default: a new temporary file, removed afterwards).") var db: String?
    @Option(help: "Events per second.") var rate = 20_000
    @Option(help: "How long to log.") var seconds = 60.0
    @Option(help: "Commit a trial this often, in milliseconds.") var trialEveryMs = 1_000
    @Option(help: "Writer queue capacity (events).") var capacity = 65_536
    @Flag(help: "Print `trial <id>` on stdout once each trial is committed.") var announce = false

    func run() throws {
        try researcherCommand {
            // Bench sessions written into a station's log would sit in its record for good.
            if let db, FileManager.default.fileExists(atPath: db) {
                throw SessionLogError.invalidInput("\(db) already exists; lineup-bench log writes a new log")
            }
            let path = db ?? NSTemporaryDirectory() + "lineup-bench-\(getpid()).db"
            defer {
                if db == nil {
                    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
                }
            }
            let log = try SessionLog(path: path)
            let dog = DogRecord(name: "Bench")
            let session = SessionRecord(dogId: dog.id, phase: "bench", mode: .automated)
            try log.append([dog, session])
            let writer = log.makeWriter(capacity: capacity)
            var trialCommitMillis: [Double] = []
            var trials = 0
            let clock = ContinuousClock()
            let start = clock.now
            let total = Int(Double(rate) * seconds)
            var sent = 0
            var nextTrialAt = Duration.milliseconds(trialEveryMs)
            var trialStarted = LogTime.now()
            var trialId = UUID()
            while sent < total {
                let elapsed = start.duration(to: clock.now)
                let due = min(total, Int(Double(rate) * elapsed.seconds))
                while sent < due {
                    let station = sent % 5 + 1
                    let time = LogTime.now()
                    writer.submit(
                        LoggedEvent(
                            kind: .edge, sessionId: session.id, trialId: trialId, station: station, time: time,
                            kernelNs: time.monoNs - 25_000, value: Int64(sent & 1)))
                    sent += 1
                }
                if elapsed >= nextTrialAt {
                    let trial = TrialRecord(
                        id: trialId, sessionId: session.id, number: trials + 1, seed: UInt64(trials),
                        layout: (1...5).map {
                            StationSlot(station: $0, sampleId: nil, kind: $0 == 3 ? .target : .blank)
                        },
                        outcome: .hit, indicatedStation: 3, latencyNs: 1_500_000_000, searchNs: 1_500_000_000,
                        started: trialStarted, ended: .now())
                    let before = clock.now
                    try writer.commitTrial(trial)
                    trialCommitMillis.append(before.duration(to: clock.now).seconds * 1000)
                    trials += 1
                    if announce { announceLine("trial \(trialId.uuidString.lowercased())\n") }
                    trialId = UUID()
                    trialStarted = .now()
                    nextTrialAt += .milliseconds(trialEveryMs)
                }
                usleep(1_000)
            }
            try writer.flush()
            let elapsed = start.duration(to: clock.now).seconds
            writer.close()
            let status = writer.status
            let stored = try log.reader.eventCount(LogFilter(eventKind: .edge))
            trialCommitMillis.sort()
            let result = BenchLogResult(
                eventsPerSecondTarget: rate, seconds: elapsed, submitted: status.submitted, written: status.written,
                storedEdges: stored, overflow: status.overflow, lost: status.lost, batches: status.batches,
                achievedEventsPerSecond: Double(status.written) / elapsed, p50BatchMs: status.batchMillisP50,
                p99BatchMs: status.batchMillisP99, maxBatchMs: status.batchMillisMax,
                p99DurableLagMs: status.durableLagMillisP99, maxDurableLagMs: status.durableLagMillisMax,
                checkpoints: status.checkpoints, maxWalMb: status.walMegabytesMax,
                trials: trials,
                p50TrialCommitMs: trialCommitMillis.isEmpty ? nil : quantile(trialCommitMillis, 0.5),
                maxTrialCommitMs: trialCommitMillis.last)
            if !announce { try printJSON(result, oneLine: true) }
        }
    }

    /// One `write(2)` per line: nothing sits in a buffer when the process is killed.
    private func announceLine(_ line: String) {
        var line = line
        line.withUTF8 { bytes in _ = write(STDOUT_FILENO, bytes.baseAddress, bytes.count) }
    }
}

struct BenchLogResult: Encodable {
    var eventsPerSecondTarget: Int
    var seconds: Double
    var submitted: Int
    var written: Int
    var storedEdges: Int
    var overflow: Int
    var lost: Int
    var batches: Int
    var achievedEventsPerSecond: Double
    var p50BatchMs: Double?
    var p99BatchMs: Double?
    var maxBatchMs: Double?
    var p99DurableLagMs: Double?
    var maxDurableLagMs: Double?
    var checkpoints: Int
    var maxWalMb: Double
    var trials: Int
    var p50TrialCommitMs: Double?
    var maxTrialCommitMs: Double?
}

/// `lineup-bench fill`: a log full of plausible, seeded training data.
struct BenchFill: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fill", abstract: "Fill a new log with seeded training data; print what was written.")

    @Option(help: "The database to create.") var db: String
    @Option var dogs = 10
    @Option var sessionsPerDog = 10
    @Option var trialsPerSession = 40
    @Option var eventsPerTrial = 25
    @Option var seed: UInt64 = 1

    func run() throws {
        try researcherCommand {
            if FileManager.default.fileExists(atPath: db) {
                throw SessionLogError.invalidInput("\(db) already exists; fill writes a new log")
            }
            var filler = LogFiller()
            filler.dogs = dogs
            filler.sessionsPerDog = sessionsPerDog
            filler.trialsPerSession = trialsPerSession
            filler.eventsPerTrial = eventsPerTrial
            filler.seed = seed
            let start = ContinuousClock.now
            let summary = try filler.fill(SessionLog(path: db))
            struct Result: Encodable {
                var summary: LogFiller.Summary
                var seconds: Double
            }
            try printJSON(Result(summary: summary, seconds: start.duration(to: .now).seconds), oneLine: true)
        }
    }
}

/// `lineup-bench export`: our export against `sqlite3 -csv` over the same rows.
struct BenchExport: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Time `lineupctl export` against `sqlite3 -csv` on the same rows.")

    @Option(help: "The database to export from.") var db: String
    @Option var what: ExportTable = .events
    @Option(help: "Runs of each; the fastest counts.") var runs = 3

    func run() throws {
        try researcherCommand {
            let reader = try SessionLog.openReader(path: db)
            let query = try reader.exportQuery(what)
            let rows = try reader.rowCount(of: query)
            let lineupctl = besideThisExecutable("lineupctl").path
            guard FileManager.default.isExecutableFile(atPath: lineupctl) else {
                throw SessionLogError.invalidInput(
                    "export: no lineupctl beside lineup-bench (\(lineupctl)): build both")
            }
            var ours: [Double] = []
            for _ in 0..<runs { ours.append(try timed(lineupctl, ["export", "--db", db, "--what", what.rawValue])) }
            // Largest resident set of any child so far: only our exports have run yet.
            var usage = rusage()
            getrusage(RUSAGE_CHILDREN.rawValue, &usage)
            let oursMaxRSSKiB = usage.ru_maxrss
            var sqlite: [Double] = []
            for _ in 0..<runs {
                sqlite.append(try timed("/usr/bin/sqlite3", ["-readonly", "-csv", "-header", db, query.inlineSQL]))
            }
            struct Result: Encodable {
                var what: String
                var rows: Int
                var lineupctlSeconds: Double
                var sqlite3Seconds: Double
                var ratio: Double
                var lineupctlMaxRssMib: Double
            }
            let best = ours.min() ?? 0
            let reference = sqlite.min() ?? 0
            try printJSON(
                Result(
                    what: what.rawValue, rows: rows, lineupctlSeconds: best, sqlite3Seconds: reference,
                    ratio: reference > 0 ? best / reference : 0, lineupctlMaxRssMib: Double(oursMaxRSSKiB) / 1024),
                oneLine: true)
        }
    }

    private func timed(_ executable: String, _ arguments: [String]) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        let start = ContinuousClock.now
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw SessionLogError.invalidInput("\(executable) exited with \(process.terminationStatus)")
        }
        return start.duration(to: .now).seconds
    }
}

/// `lineup-bench stats`: how long `stats` takes for each grouping.
struct BenchStats: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats", abstract: "Time `stats` by dog, session, sample and station.")

    @Option(help: "The database to read.") var db: String

    func run() throws {
        try researcherCommand {
            let reader = try SessionLog.openReader(path: db)
            let trials = try reader.trialRowCount()
            var seconds: [String: Double] = [:]
            for grouping in StatsGrouping.allCases {
                let start = ContinuousClock.now
                _ = try reader.stats(by: grouping)
                seconds[grouping.rawValue] = start.duration(to: .now).seconds
            }
            struct Result: Encodable {
                var trials: Int
                var seconds: [String: Double]
            }
            try printJSON(Result(trials: trials, seconds: seconds), oneLine: true)
        }
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }
}
