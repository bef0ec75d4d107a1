import ArgumentParser
import Foundation
import Glibc
import SessionLog
import StationLogging

/// `lineup-bench storage`: what a session costs the station's storage (an SD card on a
/// board). Runs a real `lineupd --simulate` block into a new log, so the log is written
/// exactly as the daemon writes it (its writer's batches, its checkpoints), and reports
/// the file's size per event and per trial, where those bytes are (`dbstat`), and the
/// bytes actually written on the way, which the WAL and its checkpoints multiply.
struct BenchStorage: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storage",
        abstract: "Bytes a simulated block takes in the log and writes to storage (one JSON object).",
        discussion: """
            Runs `lineupd --simulate --trials N --speed S --seed K --db FILE` (found beside this \
            lineup-bench) into a new log in a temporary directory, and reads the kernel's I/O \
            accounting (/proc/self/io, to which a reaped child's counts are added) around it: \
            write_bytes is what lineupd sent towards the storage device, wchar what it passed \
            to write(2) (stdout, sent to /dev/null, included). The speed matters: the writer \
            commits what gathered in 25 ms, so a faster block packs more events into each commit.

            Example:
              lineup-bench storage --trials 100 --speed 30
            """)

    @Option(help: "Trials in the simulated block.") var trials = 100
    @Option(help: "How much faster than life the simulated block runs.") var speed = 30.0
    @Option(help: "The block's seed.") var seed: UInt64 = 1
    @Option(help: "Keep the log at this path (it must not exist) instead of a temporary file.") var keep: String?

    func run() throws {
        try researcherCommand {
            let lineupd = besideThisExecutable("lineupd").path
            guard FileManager.default.isExecutableFile(atPath: lineupd) else {
                throw SessionLogError.invalidInput(
                    "storage: no lineupd beside lineup-bench (\(lineupd)): build both")
            }
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bench-storage-\(getpid())").path
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let path = keep ?? dir + "/lineup.db"
            if FileManager.default.fileExists(atPath: path) {
                throw SessionLogError.invalidInput("\(path) already exists; bench storage writes a new log")
            }

            let process = Process()
            process.executableURL = URL(fileURLWithPath: lineupd)
            process.arguments = [
                "--simulate", "--trials", String(trials), "--speed", String(speed), "--seed", String(seed),
                "--db", path,
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            let before = try ioCounters()
            let start = ContinuousClock.now
            try process.run()
            process.waitUntilExit()
            let seconds = start.duration(to: .now).seconds
            // Read after the child is reaped: its counts are in this process's from then on.
            let after = try ioCounters()
            guard process.terminationStatus == 0 else {
                throw SessionLogError.invalidInput("bench storage: lineupd exited with \(process.terminationStatus)")
            }

            let storage = try SessionLog.openReader(path: path).storage()
            let fileBytes = fileSize(path)
            let written = (after["write_bytes"] ?? 0) - (before["write_bytes"] ?? 0)
            let wchar = (after["wchar"] ?? 0) - (before["wchar"] ?? 0)
            let events = max(1, storage.events)
            let trialRows = max(1, storage.trials)
            // The event table and its indexes, per event: the part that grows with the raw log.
            let eventObjects = storage.objects?.filter { $0.name == "event" || $0.name.hasPrefix("event_by") }
            func perEvent(_ bytes: Int) -> Double { (Double(bytes) / Double(events) * 10).rounded() / 10 }
            func megabytesPer100Trials(_ bytes: Int) -> Double {
                (Double(bytes) / Double(trialRows) * 100 / 1_000_000 * 1000).rounded() / 1000
            }

            var json = JSONObject()
            json["trials"] = storage.trials
            json["events"] = storage.events
            json["speed"] = speed
            json["seed"] = Int(seed)
            json["seconds"] = (seconds * 10).rounded() / 10
            json["db_bytes"] = fileBytes
            json["wal_bytes_left"] = fileSize(path + "-wal")
            json["bytes_per_event"] = perEvent(fileBytes)
            json["bytes_per_trial"] = Int((Double(fileBytes) / Double(trialRows)).rounded())
            json["mb_per_100_trials"] = megabytesPer100Trials(fileBytes)
            if let eventObjects {
                json["event_table_and_index_bytes_per_event"] = perEvent(eventObjects.reduce(0) { $0 + $1.bytes })
                json["event_row_payload_bytes"] = perEvent(eventObjects.first { $0.name == "event" }?.payload ?? 0)
            }
            json["written_bytes"] = written
            json["written_bytes_per_event"] = perEvent(written)
            json["written_bytes_per_trial"] = Int((Double(written) / Double(trialRows)).rounded())
            json["written_mb_per_100_trials"] = megabytesPer100Trials(written)
            json["wchar_bytes"] = wchar
            json["cancelled_write_bytes"] =
                (after["cancelled_write_bytes"] ?? 0) - (before["cancelled_write_bytes"] ?? 0)
            json["page_size"] = storage.pageSize
            if let objects = storage.objects {
                // The objects that take more than one page, largest first.
                var breakdown = JSONObject()
                for object in objects where object.bytes > storage.pageSize {
                    var entry = JSONObject()
                    entry["bytes"] = object.bytes
                    entry["payload"] = object.payload
                    breakdown[object.name] = entry
                }
                json["dbstat"] = breakdown
            } else {
                json["dbstat"] = "unavailable (SQLite built without dbstat)"
            }
            print(json.render())
        }
    }

    /// This process's I/O counters (`/proc/self/io`), with those of its reaped children.
    private func ioCounters() throws -> [String: Int] {
        let text = try String(contentsOfFile: "/proc/self/io", encoding: .utf8)
        var counters: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, let value = Int(parts[1].trimmingCharacters(in: .whitespaces)) {
                counters[String(parts[0])] = value
            }
        }
        return counters
    }

    private func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }
}
