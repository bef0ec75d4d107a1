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
        case .familiarNovel: [["stats", "--familiar-novel"]]
        case .threshold: ThresholdGrouping.allCases.map { ["stats", "--threshold", "--threshold-by", $0.rawValue] }
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
        try Self.notAnEmptyAgreement(three)
    }

    /// What the store gives is what the readings are for, not merely what the log gives: the
    /// dilutions fitted with their rooms' conditions; a dog's familiar and novel samples, a sample
    /// met before the selection still familiar in it.
    static func notAnEmptyAgreement(_ three: SyncedAndMerged) throws {
        let byDog = try lineupctl(["stats", "--threshold", "--threshold-by", "dog", "--lab", three.conf]).stdout
        #expect(byDog.contains("A-T-001") && byDog.contains("A-T-004"), "\(byDog)")
        #expect(byDog.contains("threshold ") && byDog.contains("guess rate 1/5"), "\(byDog)")
        let rooms = try lineupctl(["stats", "--threshold", "--threshold-by", "conditions", "--lab", three.conf]).stdout
        #expect(rooms.contains("% RH; door open, \"windy\""), "\(rooms)")

        struct Row: Decodable {
            var dog: String
            var familiarSensitivity: Counted
            var novelSensitivity: Counted
            struct Counted: Decodable { var trials: Int }
        }
        func rows(_ selection: [String]) throws -> [Row] {
            let run = try lineupctl(["stats", "--familiar-novel", "--json", "--lab", three.conf] + selection)
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            return try decoder.decode([Row].self, from: Data(run.stdout.utf8)).filter { $0.dog == "A-Aino" }
        }
        // The whole store's first trial of a sample is novel; narrowed to A-Aino's last
        // session, a sample the dog met before is still familiar.
        let all = try rows([])
        #expect(all.count == 1 && all[0].novelSensitivity.trials > 0 && all[0].familiarSensitivity.trials > 0)
        let lastSession = try sqlite(
            three.merged,
            "SELECT s.id FROM session s JOIN dog d ON d.id = s.dog_id WHERE d.name = 'A-Aino' ORDER BY s.wall_ns DESC LIMIT 1"
        )
        let last = try rows(["--session", lastSession])
        #expect(last.count == 1 && last[0].familiarSensitivity.trials > 0)
        #expect(last.first?.novelSensitivity.trials ?? 0 < all.first?.novelSensitivity.trials ?? 0)
    }
}
