import Foundation
import LabStore
import SessionLog
import Testing

/// `report --lab` with each selection option gives, byte for byte, what the same command gives
/// on the merged logs with the same options: the store's filter means what the log's means, for
/// the trials counted and for the trials that only count toward a sample's exposure (the dog's
/// earlier trials, outside the selection). `stats --familiar-novel` is ReadingParityTests'.
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
