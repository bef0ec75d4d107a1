import Foundation
import Testing

@testable import StationWeb

/// A round's line in the trainer's words (`lineupField.trialText`, run in node): an error press
/// shows, and why the round is not a hit. page_test.py's passing run once read "Round 1 of 4:
/// miss; target at A; indication at A; your click at A." after a click and then an error press
/// at the target, a miss by the project's rule that the words did not explain.
@Suite struct RoundWordsTests {
    @Test func anErrorPressShowsAndSaysWhyTheRoundIsAMiss() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/node") else {
            print("RoundWordsTests: node is not installed; the round's words not checked")
            return
        }
        let lines = [
            "trial 1/4  A:target B:blank  search: A held  indication: A  trainer's click at A 69 µs  trainer's error at A  miss",
            "trial 2/4  A:blank B:target  search: B held  indication: B  trainer's click at B 52 µs  hit",
            "trial 3/4  A:target B:blank  search: B sniff  indication: B  no click  trainer's error at B  false-alert",
        ]
        let calls = lines.map { "console.log(window.lineupField.trialText(\(String(reflecting: $0)), true));" }
        let source =
            "globalThis.window = globalThis; globalThis.navigator = {};\n" + FieldAssets.fieldJS + "\n"
            + calls.joined(separator: "\n")
        // node run and waited for on a thread of its own, not on Swift's pool (`onThread`).
        let words = try await onThread { try Self.runNode(source) }
        #expect(
            words.split(separator: "\n").map(String.init) == [
                "Round 1 of 4: miss (you pressed error); target at A; indication at A; your click at A; your error press at A.",
                "Round 2 of 4: hit; target at B; indication at B; your click at B.",
                "Round 3 of 4: false alert (you pressed error); target at A; indication at B; your error press at B.",
            ])
    }

    static func runNode(_ source: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/node")
        process.arguments = ["-e", source]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
