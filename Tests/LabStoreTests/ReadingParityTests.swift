import Figures
import Foundation
import Readings
import Testing

/// Every reading of Sources/Readings (`ReadingName`, the one list) × every selection the
/// researcher uses × text and JSON: `lineupctl … --lab` on three stations synced into a real
/// PostgreSQL prints, byte for byte, what `lineupctl … --db` prints on the same logs merged.
/// One suite for every ported reading, in place of a parity file each: a reading added to the
/// list and not here fails to compile (`invocations` switches over every case).
@Suite(.serialized) struct ReadingParityTests {
    /// How lineupctl asks for each reading, each of its shapes once.
    static func invocations(_ reading: ReadingName) -> [[String]] {
        switch reading {
        case .stats:
            StatsGrouping.allCases.map { ["stats", "--by", $0.rawValue] }
                + [["stats", "--by", "sample", "--prevalence", "0.01"]]
        }
    }

    @Test func everyReadingOnTheStoreEqualsItOnTheMergedLogs() async throws {
        guard let lab = try await SyncedAndMerged.make("everyReadingOnTheStoreEqualsItOnTheMergedLogs") else { return }
        defer { lab.remove() }
        // The whole store, then each selection (each keeps some trials and leaves some out:
        // LabFilterTests).
        let selections = [[]] + (try lab.selections())
        var compared = 0
        for reading in ReadingName.allCases {
            for invocation in Self.invocations(reading) {
                for selection in selections {
                    for format in [[], ["--json"]] {
                        let arguments = invocation + selection + format
                        let onLog = try lineupctl(arguments + ["--db", lab.merged])
                        let onLab = try lineupctl(arguments + ["--lab", lab.conf])
                        #expect(onLog.status == 0 && onLab.status == 0, "\(arguments): \(onLog.stderr) \(onLab.stderr)")
                        #expect(onLab.stdout == onLog.stdout, "\(arguments)")
                        #expect(onLab.stderr.isEmpty, "\(arguments): \(onLab.stderr)")
                        // Not an empty agreement: each answer holds rows.
                        #expect(onLog.stdout.split(separator: "\n").count > 1, "\(arguments): \(onLog.stdout)")
                        compared += 1
                    }
                }
            }
        }
        #expect(compared == ReadingName.allCases.map { Self.invocations($0).count }.reduce(0, +) * selections.count * 2)
    }
}
