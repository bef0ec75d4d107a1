import Foundation
import Testing

/// The README's "What is measured" is `lineup-bench table`'s output: its section has the shape
/// the command writes (the paragraph naming build, machine, date and commit, then the rows and
/// their commands), whatever its figures. The figures themselves come only from a run
/// (`lineup-bench table --write README.md`, release), never from this test.
@Suite(.ownThreads) struct MeasuredTableTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `lineup-bench table --check FILE`: its exit status and standard error.
    private func check(_ file: URL) throws -> (status: Int32, errors: String)? {
        let tool = Self.root.appendingPathComponent(".build/debug/lineup-bench")
        guard FileManager.default.isExecutableFile(atPath: tool.path) else {
            Issue.record("lineup-bench is not built: run `swift build` before `swift test`")
            return nil
        }
        let errorsFile = FileManager.default.temporaryDirectory.appendingPathComponent("table-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: errorsFile.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errorsFile) }
        let process = Process()
        process.executableURL = tool
        process.arguments = ["table", "--check", file.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: errorsFile)
        try process.run()
        process.waitUntilExit()
        return (process.terminationStatus, try String(contentsOf: errorsFile, encoding: .utf8))
    }

    private func readme() throws -> String {
        try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
    }

    /// A copy of the README with `change` applied, checked.
    private func checkChanged(_ change: (String) -> String) throws -> (status: Int32, errors: String)? {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("README-\(UUID().uuidString).md")
        defer { try? FileManager.default.removeItem(at: copy) }
        let original = try readme()
        let changed = change(original)
        #expect(changed != original, "the change did not apply: the test's premise is stale")
        try changed.write(to: copy, atomically: true, encoding: .utf8)
        return try check(copy)
    }

    @Test func theReadmesTableHasTheShapeTheCommandWrites() throws {
        guard let result = try check(Self.root.appendingPathComponent("README.md")) else { return }
        #expect(result.status == 0, "\(result.errors)")
        let text = try readme()
        #expect(text.contains("Measured by `lineup-bench table` in one run"))
        #expect(text.contains(" build at commit `"), "the table names the commit it was measured at")
    }

    @Test func otherFiguresInTheSameShapePass() throws {
        // The numbers are the run's: any others in their place keep the shape.
        guard
            let result = try checkChanged({ text in
                guard let range = text.range(of: "| `lineup-bench engine` | p50 ") else { return text }
                return text.replacingCharacters(in: range, with: "| `lineup-bench engine` | p50 999.99 and ")
            })
        else { return }
        #expect(result.status == 0, "\(result.errors)")
    }

    @Test func aRowMissingOrAnotherCommandFailsNamingTheLine() throws {
        guard
            let missing = try checkChanged({ text in
                text.split(separator: "\n", omittingEmptySubsequences: false)
                    .filter { !$0.contains("| `lineup-bench block --trials 10000` |") }.joined(separator: "\n")
            })
        else { return }
        #expect(missing.status == 1)
        #expect(missing.errors.contains("README-") && missing.errors.contains("line "), "\(missing.errors)")

        guard
            let other = try checkChanged({
                $0.replacingOccurrences(
                    of: "`lineup-bench click --clicks 1000`", with: "`lineup-bench click --clicks 500`")
            })
        else { return }
        #expect(other.status == 1, "a row's command is the command's, not a hand-edited one")
    }

    @Test func anEmptyFigureOrNoMarkersFails() throws {
        guard
            let empty = try checkChanged({ text in
                text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                    guard line.hasPrefix("| the engine alone") else { return String(line) }
                    var cells = line.split(separator: "|", omittingEmptySubsequences: false)
                    cells[cells.count - 2] = "  "
                    return cells.joined(separator: "|")
                }.joined(separator: "\n")
            })
        else { return }
        #expect(empty.status == 1, "\(empty.errors)")

        guard
            let unmarked = try checkChanged({
                $0.replacingOccurrences(of: "<!-- lineup-bench table: end -->", with: "")
            })
        else { return }
        #expect(unmarked.status == 1)
        #expect(unmarked.errors.contains("lineup-bench table: end"), "\(unmarked.errors)")
    }
}
