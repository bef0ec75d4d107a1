import Foundation
import GRDB
import ReadingRows
import Testing

@testable import SessionLog

/// A fresh path in a fresh temporary directory; the directory is left for the OS.
func temporaryLogPath(_ name: String = "lineup.db") -> String {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("sessionlog-tests-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory.appendingPathComponent(name).path
}

/// The built `lineupctl`, beside the test bundle (`swift build` builds it before
/// `swift test` runs), or under `.build/debug` of this package.
func lineupctlPath() -> String? { builtToolPath("lineupctl") }

/// The built `lineup-bench` (the benchmarks), found as `lineupctlPath()` finds lineupctl.
func lineupBenchPath() -> String? { builtToolPath("lineup-bench") }

private func builtToolPath(_ tool: String) -> String? {
    var candidates: [URL] = []
    if let executable = Bundle.main.executableURL {
        candidates.append(executable.deletingLastPathComponent().appendingPathComponent(tool))
    }
    candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(tool))
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    candidates.append(root.appendingPathComponent(".build/debug/\(tool)"))
    return candidates.map(\.path).first { FileManager.default.isExecutableFile(atPath: $0) }
}

struct ProcessResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs `lineupctl` to completion with `arguments`.
func runLineupctl(_ arguments: [String], environment: [String: String] = [:]) throws -> ProcessResult {
    guard let path = lineupctlPath() else {
        Issue.record("lineupctl is not built: run `swift build` before `swift test`")
        return ProcessResult(status: -1, stdout: "", stderr: "")
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    env["LINEUP_DB"] = nil
    for (key, value) in environment { env[key] = value }
    process.environment = env
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    // Read the pipes before waiting, so a full pipe cannot block the child (stderr is
    // one line at most).
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errBytes = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProcessResult(
        status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errBytes, as: UTF8.self))
}

/// A minimal RFC 4180 reader for checking exports: quoted fields, doubled quotes,
/// CRLF records.
func parseCSV(_ text: String) -> [[String]] {
    var records: [[String]] = []
    var record: [String] = []
    var field = ""
    var quoted = false
    var chars = Array(text.unicodeScalars)[...]
    while let c = chars.popFirst() {
        if quoted {
            if c == "\"" {
                if chars.first == "\"" {
                    field.unicodeScalars.append("\"")
                    chars.removeFirst()
                } else {
                    quoted = false
                }
            } else {
                field.unicodeScalars.append(c)
            }
        } else if c == "\"" {
            quoted = true
        } else if c == "," {
            record.append(field)
            field = ""
        } else if c == "\r" && chars.first == "\n" {
            chars.removeFirst()
            record.append(field)
            records.append(record)
            record = []
            field = ""
        } else {
            field.unicodeScalars.append(c)
        }
    }
    if !field.isEmpty || !record.isEmpty {
        record.append(field)
        records.append(record)
    }
    return records
}

/// Exports to a temporary file and returns its text.
func exportText(
    _ reader: LogReader, _ table: ExportTable, _ format: ExportFormat, _ filter: LogFilter = LogFilter()
) throws -> String {
    let path = temporaryLogPath("export.out")
    _ = FileManager.default.createFile(atPath: path, contents: nil)
    let handle = try #require(FileHandle(forWritingAtPath: path))
    let sink = ByteSink(fd: handle.fileDescriptor)
    try reader.export(
        table, format: format, filter: filter, to: sink, timeZone: TimeZone(identifier: "Europe/Helsinki")!)
    try handle.close()
    return try String(contentsOfFile: path, encoding: .utf8)
}

/// The built `lineupd`, found as `lineupctlPath()` finds lineupctl: a writer in a process of its own.
func lineupdPath() -> String? { builtToolPath("lineupd") }
