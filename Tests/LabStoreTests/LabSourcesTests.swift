import Foundation
import Testing

/// `stats --sources --lab` prints, byte for byte, what it prints on the merged logs: the same
/// trials counted by the same `ConfoundCounter`, the samples' details read from the store.
@Suite(.serialized) struct LabSourcesTests {
    @Test func sourcesOnTheLabEqualTheMergedLogs() async throws {
        guard let lab = try await SyncedAndMerged.make("sourcesOnTheLabEqualTheMergedLogs") else { return }
        defer { lab.remove() }
        for filter in [[], ["--dog", "B-Aino"], ["--mode", "automated", "--step", "3 discrimination"]] {
            for format in [[], ["--json"]] {
                let arguments = ["stats", "--sources"] + filter + format
                let onLog = try lineupctl(arguments + ["--db", lab.merged])
                let onLab = try lineupctl(arguments + ["--lab", lab.conf])
                #expect(onLog.status == 0 && onLab.status == 0, "\(arguments): \(onLog.stderr) \(onLab.stderr)")
                #expect(onLab.stdout == onLog.stdout, "\(arguments)")
                // Not an empty agreement: the filler's samples come from two clinics.
                #expect(onLab.stdout.contains("clinic A") && onLab.stdout.contains("clinic B"), "\(arguments)")
            }
        }
    }
}
