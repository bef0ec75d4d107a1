import Foundation
import StationWeb
import Testing
import WebAccounts

/// systemd/lineup-web.service as systemd reads it, and `lineupctl web user add` as a script runs it.
@Suite struct LineupWebUnitTests {
    func run(_ executable: String, _ arguments: [String], input: String? = nil) throws -> (
        status: Int32, out: String, err: String
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["LINEUP_WEB_USERS"] = nil
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        let stdin = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }

    func unitForThisBuild() throws -> String {
        let unit = try String(
            contentsOf: packageRoot.appendingPathComponent("systemd/lineup-web.service"), encoding: .utf8)
        let binary = packageRoot.appendingPathComponent(".build/debug/lineup-web").path
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("unit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("lineup-web.service").path
        try unit.replacingOccurrences(of: "/usr/local/bin/lineup-web", with: binary)
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func theUnitVerifiesAndIsExposedAtMostOnePointFive() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") else {
            Issue.record("systemd-analyze is missing: install Debian's systemd package (.ci/run does)")
            return
        }
        let unit = try unitForThisBuild()
        let verify = try run("/usr/bin/systemd-analyze", ["verify", unit])
        #expect(verify.status == 0, "\(verify.out)\(verify.err)")
        let security = try run("/usr/bin/systemd-analyze", ["security", "--offline=true", unit])
        let line = (security.out + security.err).split(separator: "\n").first { $0.contains("Overall exposure level") }
        let figure = line.flatMap { $0.split(separator: ":").last?.split(separator: " ").first }.flatMap { Double($0) }
        let exposure = try #require(figure, "no exposure figure in: \(security.out)")
        #expect(exposure <= 1.5)
        // Network for this unit only, and the log read-only.
        let text = try String(contentsOfFile: unit, encoding: .utf8)
        #expect(text.contains("RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6"))
        #expect(text.contains("ReadOnlyPaths=/var/lib/lineup"))
        #expect(text.contains("SupplementaryGroups=lineup"))
        // Room for lineup-web's connections and its own files, and a smaller CPU share than
        // lineupd's (whose unit sets none: the default weight, 100).
        func value(_ key: String) -> Int? {
            text.split(separator: "\n").first { $0.hasPrefix(key + "=") }.flatMap { Int($0.dropFirst(key.count + 1)) }
        }
        let files = try #require(value("LimitNOFILE"), "lineup-web.service sets no LimitNOFILE")
        #expect(files >= ConnectionLimits().total + DescriptorBudget.reserve)
        let weight = try #require(value("CPUWeight"), "lineup-web.service sets no CPUWeight")
        #expect(weight < 100)
        let daemon = try String(
            contentsOf: packageRoot.appendingPathComponent("systemd/lineupd.service"), encoding: .utf8)
        #expect(!daemon.contains("CPUWeight="))
        #expect(value("TasksMax") != nil && text.contains("MemoryMax="))
    }

    @Test func webUserAddReadsThePasswordFromStdinAndRefusesBadInputInOneLine() throws {
        let lineupctl = packageRoot.appendingPathComponent(".build/debug/lineupctl").path
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("users-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let users = dir + "/users.db"
        let added = try run(
            lineupctl, ["web", "user", "add", "ana", "--role", "admin", "--users", users, "--password-stdin"],
            input: "a-long-password\n")
        #expect(added.status == 0 && added.err.isEmpty, "\(added.err)")
        #expect(added.out.contains("Added admin ana"))
        for (arguments, input, says) in [
            (["ana", "--role", "admin"], "a-long-password\n", "already exists"),
            (["bo", "--role", "boss"], "a-long-password\n", "unknown role \"boss\""),
            (["bo", "--role", "trainer"], "short\n", "too short"),
            (["b o", "--role", "trainer"], "a-long-password\n", "is not allowed"),
            (["bo", "--role", "trainer"], "", "standard input ended"),
        ] {
            let refused = try run(
                lineupctl, ["web", "user", "add"] + arguments + ["--users", users, "--password-stdin"], input: input)
            #expect(refused.status == 1, "\(arguments)")
            #expect(
                refused.err.contains(says) && refused.err.split(separator: "\n").count == 1,
                "\(arguments): \(refused.err)")
        }
        let store = try WebAccountsProbe.count(users)
        #expect(store == 1)
    }
}

enum WebAccountsProbe {
    static func count(_ path: String) throws -> Int { try UserStore(path: path, create: false).count() }
}
