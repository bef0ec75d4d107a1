import Foundation
import Testing

/// What `sudo install ... /usr/local/bin/` of the README copies must run there alone.
@Suite(.ownThreads) struct InstallTests {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// A copy of lineupctl once needed libMallocInterposerSwift.so from the build directory
    /// (it was linked for the allocation-counting benchmarks) and failed to start on a board.
    @Test(arguments: ["lineupd", "lineupctl"])
    func theBinaryNeedsNoLibraryFromTheBuildDirectory(_ name: String) throws {
        let binary = root.appendingPathComponent(".build/debug/\(name)").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            Issue.record("\(name) is not built: run `swift build` before `swift test`")
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ldd")
        process.arguments = [binary]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(output)")
        let fromBuild = output.split(separator: "\n").filter { $0.contains(root.path) || $0.contains("not found") }
        #expect(fromBuild.isEmpty, "\(name) loads from the build directory: \(fromBuild)")
    }
}
