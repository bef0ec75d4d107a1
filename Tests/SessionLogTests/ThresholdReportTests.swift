import Figures
import Foundation
import LineupBench
import Readings
import Report
import Testing

@testable import SessionLog

/// Issue 38 in the report: a session whose targets are dilutions gets its staircase track (each
/// trial's dilution, found or not, in the order they ran) and its fitted curve with the data per
/// dilution, drawn from what `stats --threshold` counts and fits; a log without dilutions gets
/// no such section.
@Suite struct ThresholdReportTests {
    func attributes(_ tag: Substring, _ name: String) -> String? {
        guard let start = tag.range(of: " data-\(name)=\"") else { return nil }
        let rest = tag[start.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }

    @Test func aSessionOfDilutionsHasItsTrackAndItsCurve() throws {
        let log = try DilutionExportTests.dilutedLog()
        let html = ReportHTML.render(try log.reader.report(), scope: "all")
        let stats = try log.reader.thresholdStats(by: .session)
        #expect(stats.count == 6)
        #expect(html.contains("<a href=\"#thresholds\">"))
        let blocks = html.components(separatedBy: "<div class=\"threshold\"").dropFirst()
        #expect(blocks.count == stats.count)
        // The trials of each session in order, as the log lists them.
        let trials = try log.reader.trials()
        let samples = Dictionary(uniqueKeysWithValues: try log.reader.samples().map { ($0.label, $0) })
        for (block, row) in zip(blocks, stats) {
            #expect(block.contains("data-session=\"\(row.sessionId!)\""))
            let track = block.components(separatedBy: "<g class=\"trial\"").dropFirst().map {
                (attributes(Substring($0), "sample") ?? "", attributes(Substring($0), "found") ?? "")
            }
            let expected = trials.filter { $0.sessionId == row.sessionId && $0.outcome != .aborted }.compactMap {
                trial -> (String, String)? in
                guard let target = trial.layout.first(where: { $0.kind == .target }), let label = target.sample,
                    samples[label] != nil
                else { return nil }
                return (label, trial.outcome == .hit ? "1" : "0")
            }
            #expect(track.map { "\($0.0):\($0.1)" } == expected.map { "\($0.0):\($0.1)" })
            let points = block.components(separatedBy: "<g class=\"dilution\"").dropFirst().map {
                "\(attributes(Substring($0), "sample")!) \(attributes(Substring($0), "trials")!) \(attributes(Substring($0), "found")!)"
            }
            #expect(points == row.dilutions.map { "\($0.sample) \($0.trials) \($0.found)" })
            if let fit = row.fit {
                #expect(block.contains("data-threshold=\"\(fit.threshold)\""))
                #expect(block.contains("data-guess-rate=\"\(fit.guessRate)\""))
            }
        }
        #expect(stats.contains { $0.fit != nil })
    }

    @Test func aLogWithoutDilutionsHasNoThresholdSection() throws {
        let log = try ExportTests.filledLog()
        let html = ReportHTML.render(try log.reader.report(), scope: "all")
        #expect(!html.contains("id=\"thresholds\"") && !html.contains("#thresholds"))
    }
}
