import Foundation
import Testing

/// lineupctl reaches the lab store through its client, `lineup-sync lab-link`, a child process
/// (LabLink): what it says when the client is missing, ends without answering or speaks another
/// version of the link. Each in one line with a non-zero exit, nothing on stdout. The store's
/// answers themselves go through the link in every `--lab` test of this target.
@Suite(.ownThreads) struct LabLinkTests {
    /// lineupctl linked into a directory of its own (the client is looked for beside it, then on
    /// PATH, here an empty directory), with `client` as that directory's lineup-sync when given.
    func lineupctlAlone(_ name: String, client: String?) throws -> (tool: String, directory: String) {
        let built = try #require(builtProduct("lineupctl"), "lineupctl is built (swift build)")
        // Beside the build, so a hard link works (no copy of a debug binary).
        let directory = URL(fileURLWithPath: built).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("lab-link-\(name)-\(getpid())").path
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory + "/empty", withIntermediateDirectories: true)
        let tool = directory + "/lineupctl"
        do {
            try FileManager.default.linkItem(atPath: built, toPath: tool)
        } catch {
            try FileManager.default.copyItem(atPath: built, toPath: tool)
        }
        if let client {
            #expect(FileManager.default.createFile(atPath: directory + "/lineup-sync", contents: Data(client.utf8)))
            #expect(chmod(directory + "/lineup-sync", 0o755) == 0)
        }
        return (tool, directory)
    }

    func run(_ tool: String, _ arguments: [String], path: String) throws -> SyncRun {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = path
        environment["LINEUP_DB"] = nil
        process.environment = environment
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

    /// Every way in: a reading, the report, an export and the registry's commands.
    static let commands: [[String]] = [
        ["stats", "--by", "dog"], ["stats", "--familiar-novel"], ["report"], ["export", "--what", "trials"],
        ["lab", "dogs"],
    ]

    func expectOneLine(_ run: SyncRun, saying words: String, _ command: [String]) {
        #expect(run.status != 0, "\(command)")
        #expect(run.stdout.isEmpty, "\(command): \(run.stdout)")
        #expect(run.stderr.split(separator: "\n").count == 1, "\(command): \(run.stderr)")
        #expect(run.stderr.contains(words), "\(command): \(run.stderr)")
    }

    @Test func withoutItsClientLineupctlSaysSoAndHowToBuildIt() throws {
        let (tool, directory) = try lineupctlAlone("missing", client: nil)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for command in Self.commands {
            let run = try run(
                tool, command + ["--lab", "postgres://reader@localhost:5432/lab"], path: directory + "/empty")
            expectOneLine(run, saying: "swift build --product lineup-sync", command)
            #expect(run.stderr.contains("lineup-sync, found neither beside \(tool) nor on PATH"), "\(run.stderr)")
        }
    }

    @Test func aClientEndingBeforeItAnswersIsOneLineWithItsStatus() throws {
        let (tool, directory) = try lineupctlAlone("ends", client: "#!/bin/sh\nexit 3\n")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for command in Self.commands {
            let run = try run(
                tool, command + ["--lab", "postgres://reader@localhost:5432/lab"], path: directory + "/empty")
            expectOneLine(
                run, saying: "the lab store's client (lineup-sync): it ended (exit status 3) before answering", command)
        }
    }

    @Test func aClientOfAnotherBuildIsRefusedNamingBoth() throws {
        // Answers the open with version 9 of the link: a `done` frame of one byte.
        let (tool, directory) = try lineupctlAlone(
            "version", client: "#!/bin/sh\nprintf 'd\\000\\000\\000\\001\\011'\n")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for command in Self.commands {
            let run = try run(
                tool, command + ["--lab", "postgres://reader@localhost:5432/lab"], path: directory + "/empty")
            expectOneLine(run, saying: "speaks version 9 of lineupctl's link, this lineupctl version 3", command)
        }
    }
}
