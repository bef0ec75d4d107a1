import Figures
import Foundation
import Readings
import Testing

/// Every reading of Sources/Readings (`ReadingName`, the one list) × every selection the
/// researcher uses × text and JSON, on each fixture: `lineupctl … --lab` on stations synced into
/// a real PostgreSQL prints, byte for byte, what `lineupctl … --db` prints on the same logs
/// merged (the report's but for the time it was made). One suite for every ported reading, in
/// place of a parity file each: a reading added to the list and not here fails to compile
/// (`invocations` switches over every case).
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
        case .report: [["report"]]
        }
    }

    /// The formats a reading prints: text and JSON; the report, HTML alone.
    static func formats(_ reading: ReadingName) -> [[String]] { reading == .report ? [[]] : [[], ["--json"]] }

    /// The output as two runs of one command can be compared: the report without the time it was
    /// made (`Made …`).
    static func comparable(_ reading: ReadingName, _ output: String) -> String {
        reading == .report ? LabReportTests().withoutTimeMade(output) : output
    }

    /// Whether the output holds rows: JSON with an object, a report with trials counted.
    static func answered(_ reading: ReadingName, _ output: String, format: [String]) -> Bool {
        reading == .report
            ? (dataTrials(output) ?? 0) > 0 : format == ["--json"] && output.contains("{")
    }

    /// The report's count of trials (its `data-trials`).
    static func dataTrials(_ html: String) -> Int? {
        guard let range = html.range(of: #"data-trials="[0-9]+""#, options: .regularExpression) else { return nil }
        return Int(html[range].dropFirst("data-trials=\"".count).dropLast())
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
        // The report's trials per selection of the three stations (none: the whole store).
        var reported: [[String]: Int] = [:]
        for reading in ReadingName.allCases {
            // Not an empty agreement: each reading answers with rows somewhere.
            var answered = 0
            for fixture in fixtures {
                for invocation in Self.invocations(reading) {
                    // The whole store, then each selection.
                    for selection in [[]] + fixture.selections {
                        for format in Self.formats(reading) {
                            let arguments = invocation + selection + format
                            // Standard output through a file: a report is more than a pipe holds.
                            let onLog = try exported(arguments + ["--db", fixture.merged])
                            let onLab = try exported(arguments + ["--lab", fixture.conf])
                            let what = "\(fixture.name): \(arguments.joined(separator: " "))"
                            #expect(onLog.status == 0 && onLab.status == 0, "\(what): \(onLog.stderr) \(onLab.stderr)")
                            #expect(
                                Self.comparable(reading, onLab.stdout) == Self.comparable(reading, onLog.stdout),
                                "\(what)")
                            #expect(onLab.stderr.isEmpty, "\(what): \(onLab.stderr)")
                            if Self.answered(reading, onLog.stdout, format: format) { answered += 1 }
                            if reading == .report {
                                #expect(Self.comparable(reading, onLab.stdout) != onLab.stdout, "\(what): no time made")
                                if fixture.name == "three stations" {
                                    reported[selection] = Self.dataTrials(onLab.stdout)
                                }
                            }
                        }
                    }
                }
            }
            #expect(answered > 0, "\(reading): no rows on any fixture")
        }
        // Each selection narrowed the report, and kept some trials.
        let whole = try #require(reported[[]], "the whole store's report counts trials")
        for selection in fixtures[0].selections {
            let kept = try #require(reported[selection], "\(selection): no data-trials")
            #expect(kept > 0 && kept < whole, "\(selection): \(kept) of \(whole) trials")
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
