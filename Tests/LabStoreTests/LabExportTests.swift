import Foundation
import SessionLog
import Testing

/// `export --lab` writes, byte for byte, what `export --db` writes on the merged logs: every
/// `--what`, CSV and JSON Lines, whole and filtered.
@Suite(.serialized, .ownThreads) struct LabExportTests {
    @Test func everyExportOfTheLabEqualsTheMergedLogs() async throws {
        guard let lab = try await SyncedAndMerged.make("everyExportOfTheLabEqualsTheMergedLogs") else { return }
        defer { lab.remove() }
        let filters: [[String]] = [
            [], ["--dog", "A-Aino"], ["--mode", "double-blind"], ["--program", "default"],
            ["--since", "2025-03-01T09:10Z", "--until", "2025-03-01T10:20Z"],
            ["--step", "2 learning the target scent"],
        ]
        for table in ExportTable.allCases {
            for format in ExportFormat.allCases {
                for filter in filters {
                    let arguments = ["export", "--what", table.rawValue, "--format", format.rawValue] + filter
                    let onLog = try exported(arguments + ["--db", lab.merged])
                    let onLab = try exported(arguments + ["--lab", lab.conf])
                    #expect(onLog.status == 0 && onLab.status == 0, "\(arguments): \(onLog.stderr) \(onLab.stderr)")
                    #expect(onLab.stderr.isEmpty, "\(arguments): \(onLab.stderr)")
                    if onLab.stdout != onLog.stdout {
                        let a = onLog.stdout.split(separator: "\n", omittingEmptySubsequences: false)
                        let b = onLab.stdout.split(separator: "\n", omittingEmptySubsequences: false)
                        let first = (0..<min(a.count, b.count)).first { a[$0] != b[$0] } ?? min(a.count, b.count)
                        Issue.record(
                            """
                            \(arguments): the lab's export differs at line \(first + 1) (log \(a.count) lines, lab \(b.count))
                            log: \(first < a.count ? a[first] : "(end)")
                            lab: \(first < b.count ? b[first] : "(end)")
                            """)
                    }
                    // Not an empty agreement: the whole store has rows of every kind but milestones
                    // and guesses (LabGuessTests exports a store with guesses).
                    if filter.isEmpty && table != .milestones && table != .guesses {
                        let lines = onLab.stdout.split(whereSeparator: \.isNewline).count - (format == .csv ? 1 : 0)
                        #expect(lines > 1, "\(arguments): \(lines) rows")
                    }
                }
            }
        }
        // The corrected trial is exported as it stands after the correction, the double-blind
        // session as ended.
        let trials = try exported(["export", "--what", "trials", "--lab", lab.conf]).stdout
        #expect(trials.contains("video review: no hold"))
        let sessions = try lineupctl(["export", "--what", "sessions", "--mode", "double-blind", "--lab", lab.conf])
        #expect(sessions.stdout.contains(",double-blind,") && sessions.stdout.contains(",ended,"), "\(sessions.stdout)")
        // Refused in one line: a log and the store at once.
        let both = try lineupctl(["export", "--what", "dogs", "--db", lab.merged, "--lab", lab.conf])
        #expect(both.status == 1 && both.stdout.isEmpty && both.stderr.contains("not both"))
    }
}

/// The built lineupctl run to its end with its standard output in a file: an export is larger
/// than a pipe's buffer, and `lineupctl(_:)` reads the pipes one after the other.
func exported(_ arguments: [String]) throws -> SyncRun {
    guard let path = builtProduct("lineupctl") else {
        throw TestServerError(message: "lineupctl is not built: run `swift build` before `swift test`")
    }
    let output = NSTemporaryDirectory() + "export-\(UUID().uuidString).out"
    guard FileManager.default.createFile(atPath: output, contents: nil),
        let handle = FileHandle(forWritingAtPath: output)
    else { throw TestServerError(message: "cannot write \(output)") }
    defer { try? FileManager.default.removeItem(atPath: output) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment
    environment["LINEUP_DB"] = nil
    process.environment = environment
    let err = Pipe()
    process.standardOutput = handle
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    try handle.close()
    let outData = try Data(contentsOf: URL(fileURLWithPath: output))
    return SyncRun(
        status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errData, as: UTF8.self))
}
