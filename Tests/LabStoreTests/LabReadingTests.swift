import Figures
import Foundation
import LabStore
import LineupBench
import SessionLog
import Testing

/// The researcher reads the lab store: `lineupctl stats --lab` over three stations synced into
/// a real PostgreSQL (TestServer) prints, byte for byte, what `lineupctl stats --db` prints
/// over the same logs merged by `lineupctl merge`.
@Suite(.serialized, .ownThreads) struct LabReadingTests {
    /// Three station logs of different dogs and samples (merge matches dogs by name, the store
    /// keeps each station's), one with a corrected trial.
    func stationLogs(in directory: String) throws -> [String] {
        try ["A-", "B-", "C-"].enumerated().map { index, prefix in
            let path = "\(directory)/station-\(index + 1).db"
            var filler = LogFiller()
            filler.dogs = 2
            filler.sessionsPerDog = 3
            filler.trialsPerSession = 10
            filler.eventsPerTrial = 4
            filler.seed = UInt64(11 + index)
            filler.namePrefix = prefix
            _ = try filler.fill(try SessionLog(path: path))
            return path
        }
    }

    /// Corrects the station's first hit to a miss, so the store must count the trial as it
    /// stands after the correction (`store.trial_current`), as the log does.
    func correctFirstHit(_ path: String) throws -> String {
        let id = try sqlite(path, "SELECT id FROM trial WHERE outcome = 'hit' ORDER BY number, wall_ns LIMIT 1")
        _ = try SessionLog(path: path).correctTrial(
            id, outcome: .miss, indicatedStation: nil, reason: "video review: no hold")
        return id
    }

    func directory() throws -> String {
        let directory = NSTemporaryDirectory() + "lab-reading-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    /// A researcher's connection file, mode 0600.
    func researcherFile(_ lab: TestServer.Lab, in directory: String) -> String {
        let path = "\(directory)/researcher.conf"
        let c = lab.researcher
        let text =
            "host = \(c.host)\nport = \(c.port)\ndatabase = \(c.database)\nuser = \(c.user)\npassword = \(c.password!)\n"
        FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        return path
    }

    @Test func statsOnTheLabEqualStatsOnTheMergedLogs() async throws {
        guard let server = try await TestServer.startOrSkip("statsOnTheLabEqualStatsOnTheMergedLogs") else { return }
        let lab = try await server.makeLab()
        let directory = try directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let logs = try stationLogs(in: directory)
        let corrected = try correctFirstHit(logs[0])
        for path in logs {
            let store = try await LabStore.connect(lab.station)
            // Closed before any failure is thrown: an unclosed connection traps in postgres-nio.
            let report: SyncReport
            do {
                report = try await StationSync(
                    reader: try SessionLog.openReader(path: path, everything: true), store: store, batchSize: 97
                )
                .run()
            } catch {
                await store.close()
                throw error
            }
            await store.close()
            #expect(report.complete, "\(path): \(report)")
        }
        let merged = "\(directory)/merged.db"
        let merge = try lineupctl(["merge"] + logs + ["--into", merged])
        #expect(merge.status == 0, "\(merge.stderr)")
        let conf = researcherFile(lab, in: directory)

        // The store holds the original and its correction; the figures count the correction.
        #expect(try await value("SELECT count(*)::text FROM public.trials", as: lab.researcher) == "181")
        #expect(try await value("SELECT count(*)::text FROM public.trials_current", as: lab.researcher) == "180")
        #expect(
            try await value(
                "SELECT outcome FROM public.trials_current WHERE corrects = '\(corrected)'", as: lab.researcher)
                == "miss")

        // Every --by, text, --json and --prevalence on the store against the merged logs, with
        // every selection: ReadingParityTests. Here: the correction counted, one grouping.
        let sessionsOnLog = try lineupctl(["stats", "--by", "session", "--db", merged])
        let sessionsOnLab = try lineupctl(["stats", "--by", "session", "--lab", conf])
        #expect(sessionsOnLog.status == 0 && sessionsOnLab.status == 0, "\(sessionsOnLab.stderr)")
        #expect(sessionsOnLab.stdout == sessionsOnLog.stdout)
        // Not an empty agreement: by dog, six dogs of 30 trials each.
        let json = try lineupctl(["stats", "--by", "dog", "--json", "--lab", conf]).stdout
        let rows = try JSONDecoder().decode([StatsRowHead].self, from: Data(json.utf8))
        #expect(rows.map(\.group) == ["A-Aino", "A-Bruno", "B-Aino", "B-Bruno", "C-Aino", "C-Bruno"])
        #expect(rows.map(\.results.trials) == Array(repeating: 30, count: 6))

        // The same through a URL with no password, the password from a password file (0600).
        let passfile = "\(directory)/pgpass"
        let host = server.directory.replacingOccurrences(of: "/", with: "%2F")
        FileManager.default.createFile(
            atPath: passfile, contents: Data("*:\(server.port):lab:reader_r:reader-pw\n".utf8),
            attributes: [.posixPermissions: 0o600])
        let url = "postgres://reader_r@\(host):\(server.port)/lab"
        let byURL = try lineupctl(["stats", "--by", "sample", "--lab", url], environment: ["PGPASSFILE": passfile])
        let onLog = try lineupctl(["stats", "--by", "sample", "--db", merged])
        #expect(byURL.status == 0, "\(byURL.stderr)")
        #expect(byURL.stdout == onLog.stdout)
    }

    @Test func theLabIsRefusedInOneLine() async throws {
        let directory = try directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func refused(_ arguments: [String], saying words: [String], environment: [String: String] = [:]) throws {
            let run = try lineupctl(arguments, environment: environment)
            let lines = run.stderr.split(separator: "\n")
            #expect(run.status == 1, "\(arguments)")
            #expect(lines.count == 1, "\(arguments): \(run.stderr)")
            #expect(run.stdout.isEmpty)
            for word in words { #expect(run.stderr.contains(word), "\(arguments): \(run.stderr) lacks \(word)") }
        }
        // A password in the URL: refused, and not repeated.
        try refused(
            ["stats", "--lab", "postgres://reader_r:s3cret@db.example:5432/lab"],
            saying: ["a URL carrying a password is refused", "~/.pgpass"])
        let leak = try lineupctl(["stats", "--lab", "postgres://reader_r:s3cret@db.example:5432/lab"])
        #expect(!leak.stderr.contains("s3cret"))
        // Nothing listens on this socket.
        try refused(
            ["stats", "--lab", "postgres://reader_r@%2Ftmp%2Fno-lab-here:5432/lab"],
            saying: ["the lab store reader_r@/tmp/no-lab-here:5432/lab cannot be reached"],
            environment: ["PGPASSFILE": "/nonexistent"])
        try refused(["stats", "--lab", "postgres://reader_r@db.example/"], saying: ["names no database"])
        try refused(
            ["stats", "--db", "x.db", "--lab", "postgres://reader_r@db.example/lab"], saying: ["not both"])
        let open = "\(directory)/open.conf"
        FileManager.default.createFile(
            atPath: open, contents: Data("host = /tmp\ndatabase = lab\nuser = r\n".utf8),
            attributes: [.posixPermissions: 0o644])
        try refused(["stats", "--lab", open], saying: ["readable by its group or others", "chmod 600"])

        guard let server = try await TestServer.startOrSkip("theLabIsRefusedInOneLine") else { return }
        let lab = try await server.makeLab()
        let conf = researcherFile(lab, in: directory)
        #expect(try lineupctl(["stats", "--lab", conf]).status == 0)
        // A store a newer lineup migrated: its rows may mean what this lineupctl cannot read.
        let owner = try await LabStore.connect(lab.owner)
        try await owner.execute("INSERT INTO public.lab_migration (version) VALUES ('v99-from-the-future')")
        await owner.close()
        try refused(["stats", "--lab", conf], saying: ["v99-from-the-future", "at least as new"])
    }
}

/// The part of a `stats --json` row these tests look at.
struct StatsRowHead: Decodable {
    struct Results: Decodable { var trials: Int }
    var group: String
    var results: Results
}

/// One value from a station log, by the sqlite3 program.
func sqlite(_ path: String, _ sql: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
    process.arguments = [path, sql]
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Runs the built lineupctl to its end.
func lineupctl(_ arguments: [String], environment extra: [String: String] = [:]) throws -> SyncRun {
    guard let path = builtProduct("lineupctl") else {
        throw TestServerError(message: "lineupctl is not built: run `swift build` before `swift test`")
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
    environment["LINEUP_DB"] = nil
    process.environment = environment
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    // stderr is read on its own thread while stdout is read here: read one after the other, a
    // child writing more than a pipe holds (64 KiB) to the unread one would wait for ever.
    let errRead = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var errData = Data()
    let errHandle = err.fileHandleForReading
    Thread.detachNewThread {
        errData = errHandle.readDataToEndOfFile()
        errRead.signal()
    }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    errRead.wait()
    process.waitUntilExit()
    return SyncRun(
        status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errData, as: UTF8.self))
}
