import Foundation
import Testing

/// systemd/lineup-sync.service and lineup-sync.timer as systemd reads them, their command line
/// as lineup-sync parses it, and their user as sysusers.d makes it.
@Suite(.ownThreads) struct LineupSyncUnitTests {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
        let errorsFile = FileManager.default.temporaryDirectory.appendingPathComponent("unit-err-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: errorsFile.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errorsFile) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = try FileHandle(forWritingTo: errorsFile)
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: data, as: UTF8.self),
            try String(contentsOf: errorsFile, encoding: .utf8)
        )
    }

    func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The values of `key=` in a unit, in order.
    func values(_ key: String, in unit: String) -> [String] {
        unit.split(separator: "\n").filter { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
    }

    var debugBinary: String { root.appendingPathComponent(".build/debug/lineup-sync").path }

    /// The units in a scratch directory, ExecStart pointing at this build's binary (verify
    /// wants it to exist), with lineup-web.service beside them for the comparison.
    func unitsForThisBuild() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sync-unit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for (name, binary) in [("lineup-sync.service", "lineup-sync"), ("lineup-web.service", "lineup-web")] {
            try text("systemd/\(name)")
                .replacingOccurrences(
                    of: "/usr/local/bin/\(binary)", with: root.appendingPathComponent(".build/debug/\(binary)").path
                )
                .write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        try text("systemd/lineup-sync.timer").write(
            to: dir.appendingPathComponent("lineup-sync.timer"), atomically: true, encoding: .utf8)
        return dir
    }

    func exposure(_ unit: URL) throws -> Double {
        let result = try run("/usr/bin/systemd-analyze", ["security", "--offline=true", unit.path])
        let line = (result.output + result.errors).split(separator: "\n").first {
            $0.contains("Overall exposure level")
        }
        let figure = line.flatMap { $0.split(separator: ":").last?.split(separator: " ").first }.flatMap { Double($0) }
        return try #require(figure, "no exposure figure for \(unit.lastPathComponent) in: \(result.output)")
    }

    @Test func theUnitsVerifyAndTheSyncIsExposedNoMoreThanThePage() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") else {
            Issue.record("systemd-analyze is missing: install Debian's systemd package (.ci/run does)")
            return
        }
        guard FileManager.default.isExecutableFile(atPath: debugBinary) else {
            Issue.record("lineup-sync is not built: run `swift build` before `swift test`")
            return
        }
        let dir = try unitsForThisBuild()
        defer { try? FileManager.default.removeItem(at: dir) }
        let verify = try run(
            "/usr/bin/systemd-analyze",
            [
                "verify", dir.appendingPathComponent("lineup-sync.service").path,
                dir.appendingPathComponent("lineup-sync.timer").path,
            ])
        #expect(verify.status == 0 && verify.errors.isEmpty, "\(verify.output)\(verify.errors)")
        let sync = try exposure(dir.appendingPathComponent("lineup-sync.service"))
        let page = try exposure(dir.appendingPathComponent("lineup-web.service"))
        #expect(sync <= page, "lineup-sync.service \(sync), lineup-web.service \(page)")
        #expect(sync <= 1.5)
    }

    @Test func theServiceRunsOnceAsItsOwnUserWithTheCredentialAndTheLogReadOnly() throws {
        let unit = try text("systemd/lineup-sync.service")
        #expect(values("Type", in: unit) == ["oneshot"])
        #expect(values("User", in: unit) == ["lineup-sync"])
        #expect(values("SupplementaryGroups", in: unit) == ["lineup"])
        #expect(values("LoadCredential", in: unit) == ["lab-store.conf:/etc/lineup/lab-store.conf"])
        #expect(values("ReadOnlyPaths", in: unit) == ["/var/lib/lineup"])
        #expect(values("ProtectSystem", in: unit) == ["strict"])
        // No place to write: no state, runtime or configuration directory, no writable path.
        for key in ["ReadWritePaths", "StateDirectory", "RuntimeDirectory", "CacheDirectory", "LogsDirectory"] {
            #expect(values(key, in: unit).isEmpty, "\(key)")
        }
        #expect(values("RestrictAddressFamilies", in: unit) == ["AF_UNIX AF_INET AF_INET6"])
        // The timer starts it: the service itself is never enabled.
        #expect(!unit.contains("[Install]"))

        let exec = try #require(values("ExecStart", in: unit).first).split(separator: " ").map(String.init)
        #expect(exec.first == "/usr/local/bin/lineup-sync")
        #expect(exec.contains("--once"))
        // The password's file only as the credential: no path of it on the command line.
        #expect(exec.firstIndex(of: "--connection").map { exec[$0 + 1] } == "%d/lab-store.conf")
        #expect(!exec.contains { $0.hasPrefix("/etc/") })

        // The heartbeat announces --interval; the timer must really run that often.
        let timer = try text("systemd/lineup-sync.timer")
        let interval = try #require(exec.firstIndex(of: "--interval").map { exec[$0 + 1] })
        #expect(values("OnUnitInactiveSec", in: timer) == ["\(interval)s"])
        #expect(values("WantedBy", in: timer) == ["timers.target"])
        #expect(values("AccuracySec", in: timer) == ["1s"])
    }

    /// The unit's own command line, as lineup-sync parses it: the credential taken (mode 0400,
    /// as systemd writes it) and the log refused as missing, so every option was accepted.
    @Test func lineupSyncAcceptsTheUnitsCommandLine() throws {
        guard FileManager.default.isExecutableFile(atPath: debugBinary) else {
            Issue.record("lineup-sync is not built: run `swift build` before `swift test`")
            return
        }
        let unit = try text("systemd/lineup-sync.service")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sync-cred-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        FileManager.default.createFile(
            atPath: dir + "/lab-store.conf",
            contents: Data("host = /nonexistent\ndatabase = lab\nuser = station_a\n".utf8),
            attributes: [.posixPermissions: 0o400])
        let log = dir + "/no-log-here.db"
        let arguments = try #require(values("ExecStart", in: unit).first).split(separator: " ").dropFirst().map {
            $0.replacingOccurrences(of: "%d", with: dir).replacingOccurrences(
                of: "/var/lib/lineup/lineup.db", with: log)
        }
        let result = try run(debugBinary, arguments)
        #expect(result.status == 2, "\(result.output)\(result.errors)")
        #expect(result.errors.hasPrefix("lineup-sync: no session log at \(log) "), "\(result.errors)")
        #expect(result.errors.split(separator: "\n").count == 1, "\(result.errors)")
    }

    @Test func sysusersMakesTheUserInTheStationsGroup() throws {
        let conf = try text("systemd/sysusers.d/lineup-sync.conf")
        let lines = conf.split(separator: "\n").filter { !$0.hasPrefix("#") }.map {
            $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        }
        #expect(lines.contains { $0.count >= 2 && $0[0] == "u" && $0[1] == "lineup-sync" })
        #expect(lines.contains { $0 == ["m", "lineup-sync", "lineup"] })
        // The group it joins is the station's, which lineup.conf makes.
        #expect(try text("systemd/sysusers.d/lineup.conf").contains("\ng lineup - -\n"))
    }
}
