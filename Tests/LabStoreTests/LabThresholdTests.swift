import Foundation
import Testing

/// `stats --threshold --lab` prints, byte for byte, what it prints on the merged logs: the same
/// trials counted and fitted by the same `ThresholdCounter`, the samples' dilutions and the
/// sessions' conditions read from the store (its migration v10), each grouping, text and JSON.
@Suite(.serialized) struct LabThresholdTests {
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
                    #expect(onLab.stdout == onLog.stdout, "\(arguments)")
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
}
