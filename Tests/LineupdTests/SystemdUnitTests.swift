import Foundation
import Testing

/// The unit files as systemd itself reads them.
@Suite(.ownThreads) struct SystemdUnitTests {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-analyze")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// The unit with ExecStart pointing at this build's lineupd, so verify can find it.
    func unitForThisBuild() throws -> String {
        let unit = try String(contentsOf: root.appendingPathComponent("systemd/lineupd.service"), encoding: .utf8)
        let binary = root.appendingPathComponent(".build/debug/lineupd").path
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("unit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("lineupd.service").path
        try unit.replacingOccurrences(of: "/usr/local/bin/lineupd", with: binary)
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func theServiceVerifies() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") else {
            Issue.record("systemd-analyze is missing: install Debian's systemd package (.ci/run does)")
            return
        }
        let result = try run(["verify", try unitForThisBuild()])
        #expect(result.status == 0, "\(result.output)")
    }

    @Test func theServiceIsExposedAtMostTwo() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") else {
            Issue.record("systemd-analyze is missing: install Debian's systemd package (.ci/run does)")
            return
        }
        let result = try run(["security", "--offline=true", try unitForThisBuild()])
        let line = result.output.split(separator: "\n").first { $0.contains("Overall exposure level") }
        let figure = line.flatMap { $0.split(separator: ":").last?.split(separator: " ").first }.flatMap { Double($0) }
        let exposure = try #require(figure, "no exposure figure in: \(result.output)")
        #expect(exposure <= 2.0)
    }
}
