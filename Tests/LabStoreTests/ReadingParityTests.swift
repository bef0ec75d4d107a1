import Figures
import Foundation
import Readings
import Testing

/// Every reading of Sources/Readings (`ReadingName`, the one list) × every selection the
/// researcher uses × text and JSON, on each fixture: `lineupctl … --lab` on stations synced into
/// a real PostgreSQL prints, byte for byte, what `lineupctl … --db` prints on the same logs
/// merged. One suite for every ported reading, in place of a parity file each: a reading added to
/// the list and not here fails to compile (`invocations` switches over every case).
@Suite(.serialized, .ownThreads) struct ReadingParityTests {
    /// How lineupctl asks for each reading, each of its shapes once.
    static func invocations(_ reading: ReadingName) -> [[String]] {
        switch reading {
        case .stats:
            StatsGrouping.allCases.map { ["stats", "--by", $0.rawValue] }
                + [["stats", "--by", "sample", "--prevalence", "0.01"]]
        case .guesses: [["stats", "--guesses"], ["stats", "--guesses", "--by", "session"]]
        case .sources: [["stats", "--sources"]]
        }
    }

    /// A store and the same logs merged, with the selections that fixture was written for.
    struct Fixture {
        let name: String
        let merged: String
        let conf: String
        let selections: [[String]]
    }

    @Test func everyReadingOnTheStoreEqualsItOnTheMergedLogs() async throws {
        // LabFilterTests' three stations (two filled logs, one with a correction and dilutions, and a
        // double-blind block), and LabGuessTests' three stations whose handlers guessed.
        guard let three = try await SyncedAndMerged.make("everyReadingOnTheStoreEqualsItOnTheMergedLogs") else {
            return
        }
        defer { three.remove() }
        // A store of its own: one server holds one lab store (TestServer.makeLab).
        guard let second = try await TestServer.startOrSkip("everyReadingOnTheStoreEqualsItOnTheMergedLogs") else {
            return
        }
        let guessing = try await LabGuessTests().syncedAndMerged(second)
        defer { try? FileManager.default.removeItem(atPath: guessing.directory) }
        let fixtures = [
            Fixture(name: "three stations", merged: three.merged, conf: three.conf, selections: try three.selections()),
            Fixture(
                name: "guessing stations", merged: guessing.merged, conf: guessing.conf,
                selections: try LabGuessTests.selections(merged: guessing.merged)),
        ]
        for reading in ReadingName.allCases {
            // Not an empty agreement: each reading answers with rows somewhere.
            var answered = 0
            for fixture in fixtures {
                for invocation in Self.invocations(reading) {
                    // The whole store, then each selection.
                    for selection in [[]] + fixture.selections {
                        for format in [[], ["--json"]] {
                            let arguments = invocation + selection + format
                            let onLog = try lineupctl(arguments + ["--db", fixture.merged])
                            let onLab = try lineupctl(arguments + ["--lab", fixture.conf])
                            let what = "\(fixture.name): \(arguments.joined(separator: " "))"
                            #expect(onLog.status == 0 && onLab.status == 0, "\(what): \(onLog.stderr) \(onLab.stderr)")
                            #expect(onLab.stdout == onLog.stdout, "\(what)")
                            #expect(onLab.stderr.isEmpty, "\(what): \(onLab.stderr)")
                            if format == ["--json"], onLog.stdout.contains("{") { answered += 1 }
                        }
                    }
                }
            }
            #expect(answered > 0, "\(reading): no rows on any fixture")
        }
    }
}
