import Foundation
import LabStore
import SessionLog
import Testing

/// `report --lab` and `stats --familiar-novel --lab` with each selection option give, byte for
/// byte, what the same command gives on the merged logs with the same options: the store's
/// filter means what the log's means, for the trials counted and for the trials that only count
/// toward a sample's exposure (the dog's earlier trials, outside the selection).
@Suite(.serialized, .timeLimit(.minutes(10)), .ownThreads) struct LabReportFilterTests {
    @Test func eachSelectionOfTheReportOnTheLabEqualsItOnTheMergedLogs() async throws {
        guard let lab = try await SyncedAndMerged.make("eachSelectionOfTheReportOnTheLabEqualsItOnTheMergedLogs")
        else { return }
        defer { lab.remove() }
        let report = LabReportTests()
        let whole = try String(contentsOfFile: try reportFile(["--db", lab.merged], lab, "whole"), encoding: .utf8)
        for selection in try lab.selections() {
            let name = selection.joined(separator: " ")
            let logHTML = try String(
                contentsOfFile: try reportFile(selection + ["--db", lab.merged], lab, "log"), encoding: .utf8)
            let labHTML = try String(
                contentsOfFile: try reportFile(selection + ["--lab", lab.conf], lab, "lab"), encoding: .utf8)
            #expect(report.withoutTimeMade(labHTML) == report.withoutTimeMade(logHTML), "\(name)")
            // Not an empty agreement: the selection narrowed the report, and kept some trials.
            let kept = try #require(dataTrials(labHTML), "\(name): no data-trials")
            #expect(kept > 0 && kept < dataTrials(whole)!, "\(name): \(kept) trials")
        }
    }

    @Test func familiarAndNovelOnTheLabEqualTheMergedLogsForEachSelection() async throws {
        guard
            let lab = try await SyncedAndMerged.make(
                "familiarAndNovelOnTheLabEqualTheMergedLogsForEachSelection")
        else { return }
        defer { lab.remove() }
        for selection in [[]] + (try lab.selections()) {
            for format in [[], ["--json"]] {
                let arguments = ["stats", "--familiar-novel"] + selection + format
                let onLog = try lineupctl(arguments + ["--db", lab.merged])
                let onLab = try lineupctl(arguments + ["--lab", lab.conf])
                #expect(onLog.status == 0 && onLab.status == 0, "\(arguments): \(onLog.stderr) \(onLab.stderr)")
                #expect(onLab.stdout == onLog.stdout, "\(arguments)")
                #expect(onLab.stderr.isEmpty, "\(arguments): \(onLab.stderr)")
            }
        }
        // Not an empty agreement. A-Aino's samples: the whole log's first trial of a sample is
        // novel; narrowed to the last session, a sample the dog met before is still familiar.
        struct Row: Decodable {
            var dog: String
            var familiarSensitivity: Counted
            var novelSensitivity: Counted
            struct Counted: Decodable { var trials: Int }
        }
        func rows(_ selection: [String]) throws -> [Row] {
            let run = try lineupctl(["stats", "--familiar-novel", "--json", "--lab", lab.conf] + selection)
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            return try decoder.decode([Row].self, from: Data(run.stdout.utf8))
        }
        let all = try rows([]).filter { $0.dog == "A-Aino" }
        #expect(all.count == 1 && all[0].novelSensitivity.trials > 0 && all[0].familiarSensitivity.trials > 0)
        let lastSession = try sqlite(
            lab.merged,
            "SELECT s.id FROM session s JOIN dog d ON d.id = s.dog_id WHERE d.name = 'A-Aino' ORDER BY s.wall_ns DESC LIMIT 1"
        )
        let last = try rows(["--session", lastSession])
        #expect(last.count == 1 && last[0].familiarSensitivity.trials > 0)
        #expect(last[0].novelSensitivity.trials < all[0].novelSensitivity.trials)
    }

    /// `lineupctl report ARGUMENTS -o FILE` run to success; the file's path.
    func reportFile(_ arguments: [String], _ lab: SyncedAndMerged, _ name: String) throws -> String {
        let path = "\(lab.directory)/\(name).html"
        let run = try lineupctl(["report"] + arguments + ["-o", path])
        guard run.status == 0, run.stderr.isEmpty else {
            throw TestServerError(message: "report \(arguments): \(run.stderr)")
        }
        return path
    }

    /// The report's count of trials (its `data-trials`).
    func dataTrials(_ html: String) -> Int? {
        guard let range = html.range(of: #"data-trials="[0-9]+""#, options: .regularExpression) else { return nil }
        return Int(html[range].dropFirst("data-trials=\"".count).dropLast())
    }
}
