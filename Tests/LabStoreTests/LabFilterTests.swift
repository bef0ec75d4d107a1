import Figures
import Foundation
import LabStore
import LineupBench
import SessionLog
import Testing

/// Three stations synced into one store and merged into one log, for comparing what the
/// researcher's commands print on each: A and B LogFiller's logs (automated sessions of program
/// `default`, handler H1, with events; A with a corrected trial, its targets a stock and three
/// dilutions of it, its sessions with conditions), C a real double-blind block
/// of `lineupd --simulate` (no program, no handler, its session ended, in today's time).
struct SyncedAndMerged {
    let server: TestServer
    let directory: String
    let logs: [String]
    let merged: String
    /// The researcher's connection file (mode 0600).
    let conf: String

    static func make(_ test: String) async throws -> SyncedAndMerged? {
        guard let server = try await TestServer.startOrSkip(test) else { return nil }
        guard let lineupd = builtProduct("lineupd") else {
            throw TestServerError(message: "lineupd is not built: run `swift build` before `swift test`")
        }
        let lab = try await server.makeLab()
        let reading = LabReadingTests()
        let directory = try reading.directory()
        var logs: [String] = []
        for (index, prefix) in ["A-", "B-"].enumerated() {
            let path = "\(directory)/station-\(index + 1).db"
            var filler = LogFiller()
            filler.dogs = 2
            filler.sessionsPerDog = 3
            filler.trialsPerSession = 10
            filler.eventsPerTrial = 3
            filler.seed = UInt64(31 + index)
            filler.namePrefix = prefix
            // A's targets a stock and its dilutions, its sessions with conditions (issue 38).
            filler.dilutedTargets = index == 0
            // And each of A's dogs' first session a staircase, so every export compared covers
            // the procedure's columns (issue 38, migration v11).
            filler.staircase = index == 0
            // An hour apart, so no two stations' rows share a time an export orders by.
            filler.startWallNs += Int64(index) * 3_600_000_000_000
            _ = try filler.fill(try SessionLog(path: path))
            logs.append(path)
        }
        _ = try reading.correctFirstHit(logs[0])
        let blockLog = "\(directory)/station-3.db"
        let block = try lineupctlLike(
            lineupd, ["--simulate", "--fast", "--trials", "30", "--seed", "7", "--db", blockLog])
        guard block.status == 0 else { throw TestServerError(message: "lineupd --simulate: \(block.stderr)") }
        logs.append(blockLog)
        for path in logs { try await sync(path, into: lab) }
        // Merged in the order of the stations' identities, the order the store's events
        // export keeps between stations (a merged log's events are in merge order).
        let identities = try logs.map { try sqlite($0, "SELECT id FROM log_identity") }
        let byIdentity = zip(identities, logs).sorted { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }.map(\.1)
        let merged = "\(directory)/merged.db"
        let merge = try lineupctl(["merge"] + byIdentity + ["--into", merged])
        guard merge.status == 0 else { throw TestServerError(message: "merge: \(merge.stderr)") }
        return SyncedAndMerged(
            server: server, directory: directory, logs: logs, merged: merged,
            conf: reading.researcherFile(lab, in: directory))
    }

    /// The whole log into the store, by the sync lineup-sync runs.
    static func sync(_ path: String, into lab: TestServer.Lab) async throws {
        let store = try await LabStore.connect(lab.station)
        // Closed before any failure is thrown: an unclosed connection traps in postgres-nio.
        let report: SyncReport
        do {
            report = try await StationSync(
                reader: try SessionLog.openReader(path: path, everything: true), store: store, batchSize: 89
            ).run()
        } catch {
            await store.close()
            throw error
        }
        await store.close()
        guard report.complete else { throw TestServerError(message: "\(path) not wholly synced: \(report)") }
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }

    /// The selections the researcher uses, each keeping some trials and leaving some out: a dog
    /// (by name, any case, and id prefix), a session, a window of time on either side, a mode, a
    /// program, a step (whole phase or one step), a handler, and several at once.
    func selections() throws -> [[String]] {
        let aDog = try sqlite(merged, "SELECT id FROM dog WHERE name = 'A-Bruno'")
        let aSession = try sqlite(
            merged,
            "SELECT s.id FROM session s JOIN dog d ON d.id = s.dog_id WHERE d.name = 'B-Aino' ORDER BY s.wall_ns LIMIT 1 OFFSET 1"
        )
        return [
            ["--dog", "A-Aino"], ["--dog", "a-aino"], ["--dog", String(aDog.prefix(6))],
            ["--session", String(aSession.prefix(8))],
            ["--since", "2025-03-01T09:10Z"], ["--until", "2025-03-01T09:20Z"],
            ["--since", "2025-03-01T09:10Z", "--until", "2025-03-01T09:20Z"], ["--since", "2026-01-01"],
            ["--mode", "automated"], ["--mode", "double-blind"], ["--program", "default"],
            ["--step", "simulation"], ["--step", "3 discrimination/step 3"], ["--step", "1 learning to indicate"],
            ["--handler", "H1"], ["--dog", "B-Bruno", "--mode", "automated", "--step", "2 learning the target scent"],
        ]
    }
}

/// Any built program run to its end (lineupctl's runner, another binary).
func lineupctlLike(_ path: String, _ arguments: [String]) throws -> SyncRun {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return SyncRun(
        status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errData, as: UTF8.self))
}

/// Each filter keeps some trials and leaves some out, and what neither source has is refused
/// alike; that `stats --lab` with each filter prints, byte for byte, what `stats --db` prints on
/// the merged logs is ReadingParityTests' (every reading × every selection).
@Suite(.serialized, .ownThreads) struct LabFilterTests {
    @Test func eachFilterSelectsSomeTrialsAndIsRefusedAlike() async throws {
        guard let lab = try await SyncedAndMerged.make("eachFilterSelectsSomeTrialsAndIsRefusedAlike") else { return }
        defer { lab.remove() }
        let total = try trials(["stats", "--by", "dog", "--json", "--db", lab.merged])
        #expect(total == 60 + 60 + 30)
        let filters = try lab.selections()
        for filter in filters {
            // Not an empty agreement: each filter keeps some trials and leaves some out.
            let kept = try trials(["stats", "--by", "dog", "--json", "--db", lab.merged] + filter)
            #expect(kept > 0 && kept < total, "\(filter): \(kept) of \(total)")
            // The store's answer with each filter equals the merged log's: ReadingParityTests.
        }

        // What neither source has is refused alike, in one line naming the option or the word.
        let researcher = lab.server.connection(user: "reader_r", password: "reader-pw", database: "lab")
        let store = "the lab store \(researcher.display)"
        for (filter, words) in [
            (["--dog", "Nobody"], ["no dog \"Nobody\" in the lab store"]),
            (["--session", "ffffffff"], ["no session \"ffffffff\" in the lab store"]),
            (["--program", "nope"], ["--program nope", "in the lab store", "known: default"]),
            (["--handler", "H9"], ["--handler H9", "known: H1"]),
            (["--step", "simulation/9"], ["--step simulation/9", "known: 1 learning to indicate/step 1"]),
            (["--step", "/x"], ["--step /x: give PHASE/STEP"]), (["--mode", "solo"], ["--mode solo: not a mode"]),
            (["--since", "yesterday"], ["--since yesterday", "malformed date"]),
        ] {
            let onLog = try lineupctl(["stats"] + filter + ["--db", lab.merged])
            let onLab = try lineupctl(["stats"] + filter + ["--lab", lab.conf])
            #expect(onLog.status == 1 && onLab.status == 1, "\(filter)")
            #expect(
                onLab.stdout.isEmpty && onLab.stderr.split(separator: "\n").count == 1, "\(filter): \(onLab.stderr)")
            for word in words { #expect(onLab.stderr.contains(word), "\(filter): \(onLab.stderr) lacks \(word)") }
            // One definition of the words (FilterWords): the same sentence on both, each naming its source.
            #expect(
                onLab.stderr == onLog.stderr.replacingOccurrences(of: "in the log", with: "in \(store)"),
                "\(filter): \(onLab.stderr) against \(onLog.stderr)")
        }
    }

    /// Two stations' "Aino" are two dogs in the store (merge makes them one in a lab log):
    /// `--dog Aino` is refused naming both ids, and each id gives that station's Aino alone.
    @Test func aNameTwoDogsShareIsRefusedNamingBoth() async throws {
        guard let server = try await TestServer.startOrSkip("aNameTwoDogsShareIsRefusedNamingBoth") else { return }
        let lab = try await server.makeLab()
        let reading = LabReadingTests()
        let directory = try reading.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var logs: [String] = []
        for index in 0..<2 {
            let path = "\(directory)/station-\(index + 1).db"
            var filler = LogFiller()
            filler.dogs = 1
            filler.sessionsPerDog = 2
            filler.trialsPerSession = 8
            filler.eventsPerTrial = 1
            filler.seed = UInt64(41 + index)
            _ = try filler.fill(try SessionLog(path: path))
            try await SyncedAndMerged.sync(path, into: lab)
            logs.append(path)
        }
        let conf = reading.researcherFile(lab, in: directory)
        let ids = try logs.map { try sqlite($0, "SELECT id FROM dog") }.sorted()
        #expect(try sqlite(logs[0], "SELECT name FROM dog") == "Aino")
        #expect(try sqlite(logs[1], "SELECT name FROM dog") == "Aino")

        let refused = try lineupctl(["stats", "--dog", "aino", "--lab", conf])
        #expect(refused.status == 1 && refused.stdout.isEmpty)
        #expect(
            refused.stderr.contains("\"aino\" names 2 dogs (ids \(ids[0]), \(ids[1])): give the one meant by its id"),
            "\(refused.stderr)")
        #expect(refused.stderr.split(separator: "\n").count == 1)
        for (index, log) in logs.enumerated() {
            let id = try sqlite(log, "SELECT id FROM dog")
            let onLab = try lineupctl(["stats", "--by", "session", "--dog", id, "--lab", conf])
            let onLog = try lineupctl(["stats", "--by", "session", "--dog", id, "--db", log])
            #expect(onLab.status == 0, "\(onLab.stderr)")
            #expect(onLab.stdout == onLog.stdout, "station \(index + 1)")
        }
    }
}

/// How many trials a `stats --json` run counts over its rows.
func trials(_ arguments: [String]) throws -> Int {
    let run = try lineupctl(arguments)
    guard run.status == 0 else { throw TestServerError(message: "\(arguments): \(run.stderr)") }
    return try JSONDecoder().decode([StatsRowHead].self, from: Data(run.stdout.utf8)).map(\.results.trials).reduce(0, +)
}
