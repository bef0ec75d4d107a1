import Figures
import Foundation
import Testing

/// `stats --threshold --lab` prints, byte for byte, what it prints on the merged logs: the same
/// trials counted and fitted by the same `ThresholdCounter`, the samples' dilutions and the
/// sessions' conditions read from the store (its migration v10), each grouping, text and JSON.
@Suite(.serialized, .ownThreads) struct LabThresholdTests {
    @Test func thresholdsOnTheLabEqualTheMergedLogs() async throws {
        guard let lab = try await SyncedAndMerged.make("thresholdsOnTheLabEqualTheMergedLogs") else { return }
        defer { lab.remove() }
        for grouping in ["session", "dog", "conditions"] {
            for filter in [[], ["--dog", "A-Bruno"]] {
                for format in [[], ["--json"]] {
                    let arguments = ["stats", "--threshold", "--threshold-by", grouping] + filter + format
                    let onLog = try lineupctl(arguments + ["--db", lab.merged])
                    let onLab = try lineupctl(arguments + ["--lab", lab.conf])
                    #expect(onLog.status == 0 && onLab.status == 0, "\(arguments): \(onLog.stderr) \(onLab.stderr)")
                    #expect(onLab.stdout == Self.withheld(onLog.stdout, lab: onLab.stdout), "\(arguments)")
                    // Not an empty agreement: A's dilutions, fitted, with their conditions.
                    #expect(onLab.stdout.contains("A-T-001") && onLab.stdout.contains("A-T-004"), "\(arguments)")
                }
            }
        }
        let text = try lineupctl(["stats", "--threshold", "--threshold-by", "dog", "--lab", lab.conf]).stdout
        #expect(text.contains("threshold ") && text.contains("guess rate 1/5"), "\(text)")
        let rooms = try lineupctl(["stats", "--threshold", "--threshold-by", "conditions", "--lab", lab.conf]).stdout
        #expect(rooms.contains("% RH; door open, \"windy\""), "\(rooms)")
    }

    /// The log's output as a store without the staircase's state per trial prints it: each
    /// reversal estimate withheld in words (until lab migration v11 mirrors `trial_procedure`;
    /// a store with it prints the log's own). The fixture's logs have no staircase, so their
    /// rows only ever say why the estimate is not computed.
    static func withheld(_ log: String, lab: String) -> String {
        let why = ThresholdRow.procedureWithheldLabStore
        guard lab.contains(why) else { return log }
        return
            log
            .replacing(/reversal estimate: [^\n]*/, with: "reversal estimate: \(why)")
            .replacing(/"reversal_not_computed"( ?): ?"[^"]*"/) { match in
                "\"reversal_not_computed\"\(match.1):\(match.1)\"\(why)\""
            }
    }
}
