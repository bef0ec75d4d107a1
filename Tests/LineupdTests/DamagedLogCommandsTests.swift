import Foundation
import Testing

/// Issue 23's "done when": a copy of a log with bytes flipped in a page of its trials is
/// refused by `sessions`, `stats`, `export`, `report` and `merge` (and `events`, `backup`), each
/// in one line, and the refused merge leaves no `--into` file. The built lineupctl, as a
/// researcher runs it; the page is found by sqlite3's own page map (`dbstat`).
@Suite(.ownThreads) struct DamagedLogCommandsTests {
    static func sqlite3(_ path: String, _ sql: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = ["-readonly", path, sql]
        let result = try runToEnd(process)
        #expect(result.status == 0, "sqlite3: \(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A whole copy and a damaged copy of a filled log, in a fresh directory.
    static func logs() throws -> (directory: String, whole: String, damaged: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("damaged-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let station = directory + "/station.db"
        let fill = try lineupBench([
            "fill", "--db", station, "--dogs", "2", "--sessions-per-dog", "3", "--trials-per-session", "20",
            "--events-per-trial", "10",
        ])
        #expect(fill.status == 0, "\(fill.stderr)")
        // A backup is one self-contained file: the bytes flipped are the log's, no WAL over them.
        let whole = directory + "/whole.db"
        let backup = try lineupctl(["backup", whole, "--db", station])
        #expect(backup.status == 0, "\(backup.stderr)")
        let page = try #require(
            Int(
                try sqlite3(
                    whole,
                    "SELECT pageno FROM dbstat WHERE name = 'trial' AND pagetype = 'leaf' ORDER BY pageno LIMIT 1")))
        let size = try #require(Int(try sqlite3(whole, "PRAGMA page_size")))
        let damaged = directory + "/damaged.db"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        // The cell pointers after the leaf page's 8-byte header: the page no longer parses.
        for i in (page - 1) * size + 8..<(page - 1) * size + 16 { bytes[i] ^= 0xFF }
        try bytes.write(to: URL(fileURLWithPath: damaged))
        return (directory, whole, damaged)
    }

    static let commands: [[String]] = [
        ["sessions"], ["stats", "--by", "dog"], ["export", "--what", "trials"], ["export", "--what", "events"],
        ["events"], ["trials"],
    ]

    @Test func aCopyWithBytesFlippedInATrialPageIsRefusedByEveryReadingCommand() throws {
        let (directory, whole, damaged) = try Self.logs()
        // The whole copy is read: the refusals below are the damage's.
        for command in Self.commands {
            let result = try lineupctl(command + ["--db", whole])
            #expect(result.status == 0, "\(command): \(result.stderr)")
        }
        #expect(try lineupctl(["report", "--db", whole, "-o", directory + "/whole.html"]).status == 0)

        func expectRefused(_ result: (status: Int32, stdout: String, stderr: String), _ what: String) {
            #expect(result.status == 1, "\(what)")
            #expect(result.stdout.isEmpty, "\(what): \(result.stdout.prefix(200))")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(what): \(result.stderr)")
            #expect(
                result.stderr.hasPrefix("lineupctl: the session log at \(damaged) is damaged ("),
                "\(what): \(result.stderr)")
            #expect(result.stderr.contains("restore it from a backup"), "\(what): \(result.stderr)")
        }
        for command in Self.commands { expectRefused(try lineupctl(command + ["--db", damaged]), "\(command)") }
        let report = directory + "/damaged.html"
        expectRefused(try lineupctl(["report", "--db", damaged, "-o", report]), "report")
        #expect(!FileManager.default.fileExists(atPath: report))
        expectRefused(try lineupctl(["backup", directory + "/copy.db", "--db", damaged]), "backup")
        #expect(!FileManager.default.fileExists(atPath: directory + "/copy.db"))

        // merge: refused, and no --into file, even after a whole source named first.
        let lab = directory + "/lab.db"
        expectRefused(try lineupctl(["merge", damaged, "--into", lab]), "merge")
        expectRefused(try lineupctl(["merge", whole, damaged, "--into", lab]), "merge whole then damaged")
        for file in [lab, lab + "-wal", lab + "-shm"] {
            #expect(!FileManager.default.fileExists(atPath: file), "\(file)")
        }
        // An existing lab log is left as it was.
        #expect(try lineupctl(["merge", whole, "--into", lab]).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: lab))
        expectRefused(try lineupctl(["merge", damaged, "--into", lab]), "merge into an existing lab log")
        #expect(try Data(contentsOf: URL(fileURLWithPath: lab)) == before)
    }

    /// The refusal's advice runs: its command saves what is readable into a log lineupctl reads.
    @Test func theRefusalsRecipeSavesWhatIsReadable() throws {
        let (directory, whole, damaged) = try Self.logs()
        let said = try lineupctl(["sessions", "--db", damaged]).stderr
        let recipe = try #require(said.range(of: "still readable: ").map { String(said[$0.upperBound...]) })
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(recipe.hasPrefix("sqlite3 \(damaged) .dump"), "\(recipe)")
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", recipe]
        shell.currentDirectoryURL = URL(fileURLWithPath: directory)
        let ran = try runToEnd(shell)
        #expect(ran.status == 0, "\(ran.stderr)")
        let recovered = directory + "/recovered.db"
        let saved = try #require(Int(try Self.sqlite3(recovered, "SELECT count(*) FROM trial")))
        let all = try #require(Int(try Self.sqlite3(whole, "SELECT count(*) FROM trial")))
        // The broken page's trials are lost, the rest saved.
        #expect(saved > 0 && saved < all, "\(saved) of \(all)")
        let listed = try lineupctl(["sessions", "--db", recovered])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(try lineupctl(["report", "--db", recovered, "-o", directory + "/recovered.html"]).status == 0)
    }
}
