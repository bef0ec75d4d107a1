import Foundation
import Testing

/// Stations were letters in `layout`, status and the page but numbers in `session show`,
/// `trials` and `events` (issue 32): every listing a person reads names them as the board does.
@Suite(.ownThreads) struct StationNamesShownTests {
    @Test func theListingsNameStationsAsTheBlockSaidThem() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("names-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = "\(dir)/block.db"
        let run = try await lineupdAwaited(
            [
                "--simulate", "--trials", "3", "--seed", "4", "--speed", "30", "--device", "null", "--no-realtime",
                "--db", db,
            ])
        #expect(run.status == 0, "\(run.stderr)")
        // The block's own lines name the stations A to E.
        let printed = run.stdout.split(separator: "\n").filter { $0.hasPrefix("trial ") }
        #expect(printed.count == 3)

        let trials = try lineupctl(["trials", "--db", db])
        #expect(trials.status == 0, "\(trials.stderr)")
        let rows = trials.stdout.split(separator: "\n").dropFirst(2)
        #expect(rows.count == 3)
        for row in rows {
            for letter in ["A", "B", "C", "D", "E"] {
                #expect(row.contains(" \(letter):") || row.contains("  \(letter):"))
            }
            #expect(!row.contains(" 1:"), "\(row)")
        }
        // Each trial's indication as the block printed it ("indication: C").
        for line in printed {
            guard let r = line.range(of: "indication: "), let letter = line[r.upperBound...].first, letter != "n" else {
                continue
            }
            #expect(trials.stdout.contains("  \(letter)  "), "\(line)\n\(trials.stdout)")
        }

        let events = try lineupctl(["events", "--db", db, "--kind", "edge", "--limit", "0"])
        #expect(events.status == 0, "\(events.stderr)")
        let stationColumn = events.stdout.split(separator: "\n").dropFirst(2).map {
            $0.split(separator: " ", omittingEmptySubsequences: true)[3]
        }
        #expect(!stationColumn.isEmpty)
        #expect(Set(stationColumn).isSubset(of: ["A", "B", "C", "D", "E"]), "\(Set(stationColumn))")

        let json = try lineupctl(["trials", "--db", db, "--json"])
        #expect(
            json.stdout.contains(#""name":"A""#) || json.stdout.contains(#""name" : "A""#), "\(json.stdout.prefix(400))"
        )
    }
}
