import Foundation
import Testing

/// One science: for the same trials, lineupd's summary, `lineupctl stats --json` (each
/// grouping), `session show --json` and a recomputation from `export --what trials` by
/// README's formulas agree exactly.
@Suite(.serialized, .ownThreads) struct FiguresAgreementTests {
    struct Counts: Equatable, CustomStringConvertible {
        var hits = 0, misses = 0, falseAlerts = 0, correctRejections = 0, notExamined = 0
        var blankIndicated = 0, blankPassed = 0, blankNotExamined = 0
        var description: String {
            "hits \(hits) misses \(misses) FA \(falseAlerts) CR \(correctRejections) NE \(notExamined) "
                + "blanks \(blankIndicated)/\(blankPassed)/\(blankNotExamined)"
        }
    }

    /// The station counts lineupd's summary prints.
    func summaryCounts(_ text: String) throws -> Counts {
        let line = try #require(text.split(separator: "\n").first { $0.contains("stations (each station") })
        let numbers = line.split(separator: ":", maxSplits: 1)[1].split(whereSeparator: { !$0.isNumber }).compactMap {
            Int($0)
        }
        try #require(numbers.count == 8, "\(line)")
        return Counts(
            hits: numbers[0], misses: numbers[1], falseAlerts: numbers[2], correctRejections: numbers[3],
            notExamined: numbers[4], blankIndicated: numbers[5], blankPassed: numbers[6], blankNotExamined: numbers[7])
    }

    func counts(_ json: [String: Any]) throws -> Counts {
        let p = try #require(json["presentations"] as? [String: Int])
        return Counts(
            hits: p["hits"]!, misses: p["misses"]!, falseAlerts: p["false_alerts"]!,
            correctRejections: p["correct_rejections"]!, notExamined: p["not_examined"]!,
            blankIndicated: p["blank_indicated"]!, blankPassed: p["blank_passed"]!,
            blankNotExamined: p["blank_not_examined"]!)
    }

    func sum(_ rows: [[String: Any]]) throws -> Counts {
        var total = Counts()
        for row in rows {
            let c = try counts(row)
            total.hits += c.hits
            total.misses += c.misses
            total.falseAlerts += c.falseAlerts
            total.correctRejections += c.correctRejections
            total.notExamined += c.notExamined
            total.blankIndicated += c.blankIndicated
            total.blankPassed += c.blankPassed
            total.blankNotExamined += c.blankNotExamined
        }
        return total
    }

    /// README's rule, applied by hand to the exported columns (station_N_kind, _visited, _indicated).
    func recompute(fromCSV csv: String) throws -> (counts: Counts, sensitivity: (Int, Int), specificity: (Int, Int)) {
        let rows = parseCSV(csv)
        let header = try #require(rows.first)
        var c = Counts()
        for row in rows.dropFirst() where row.count == header.count {
            let field = Dictionary(uniqueKeysWithValues: zip(header, row))
            guard field["outcome"] != "aborted" else { continue }
            var station = 1
            while let kind = field["station_\(station)_kind"], !kind.isEmpty {
                let visited = field["station_\(station)_visited"] == "1"
                let indicated = field["station_\(station)_indicated"] == "1"
                switch kind {
                case "target": if indicated { c.hits += 1 } else { c.misses += 1 }
                case "control", "distractor":
                    if indicated {
                        c.falseAlerts += 1
                    } else if visited {
                        c.correctRejections += 1
                    } else {
                        c.notExamined += 1
                    }
                default:
                    if indicated {
                        c.blankIndicated += 1
                    } else if visited {
                        c.blankPassed += 1
                    } else {
                        c.blankNotExamined += 1
                    }
                }
                station += 1
            }
        }
        return (c, (c.hits, c.hits + c.misses), (c.correctRejections, c.correctRejections + c.falseAlerts))
    }

    func checkAgreement(summary: String, db: String) throws {
        let fromSummary = try summaryCounts(summary)
        for by in ["dog", "session", "station"] {
            let out = try lineupctl(["stats", "--db", db, "--by", by, "--json"])
            #expect(out.status == 0, "\(out.stderr)")
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]])
            #expect(try sum(rows) == fromSummary, "stats --by \(by)")
            if by == "session" {
                let id = try #require(rows.first?["group_id"] as? String)
                let show = try lineupctl(["session", "show", id, "--db", db, "--json"])
                let details = try #require(
                    try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any])
                let figures = try #require(details["figures"] as? [String: Any])
                #expect(try counts(figures) == fromSummary, "session show")
            }
        }
        let export = try lineupctl(["export", "--db", db, "--what", "trials", "--format", "csv"])
        #expect(export.status == 0, "\(export.stderr)")
        let recomputed = try recompute(fromCSV: export.stdout)
        #expect(recomputed.counts == fromSummary, "export recomputation")
        // The proportions the summary prints are the same counts.
        #expect(summary.contains("\(recomputed.sensitivity.0)/\(recomputed.sensitivity.1))"))
        #expect(summary.contains("\(recomputed.specificity.0)/\(recomputed.specificity.1))"))
    }

    @Test(arguments: [3, 11, 2012] as [UInt64])
    func fastBlocksAgreeEverywhere(seed: UInt64) async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("figures-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = "\(dir)/fast.db"
        let run = try await lineupdAwaited(
            ["--simulate", "--fast", "--trials", "150", "--seed", "\(seed)", "--false-alert-rate", "0.08", "--db", db])
        #expect(run.status == 0, "\(run.stderr)")
        try checkAgreement(summary: run.stdout, db: db)
    }

    /// The real-time station (hot thread, ALSA, log feeder) and the log it writes.
    @Test func aRealTimeBlockAgreesEverywhere() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("figures-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = "\(dir)/rt.db"
        let run = try await lineupdAwaited(
            [
                "--simulate", "--trials", "12", "--seed", "5", "--speed", "30", "--device", "null", "--no-realtime",
                "--db", db,
            ]
        )
        #expect(run.status == 0, "\(run.stderr)")
        try checkAgreement(summary: run.stdout, db: db)
    }
}

/// RFC 4180 rows: quoted fields may hold commas, quotes ("") and line breaks.
func parseCSV(_ text: String) -> [[String]] {
    var rows: [[String]] = []
    var row: [String] = []
    var field = ""
    var quoted = false
    var afterQuote = false  // a quote seen inside a quoted field: doubled, or the field's end
    for c in text {
        if quoted {
            if afterQuote {
                afterQuote = false
                if c == "\"" {
                    field.append(c)
                    continue
                }
                quoted = false  // the closing quote: c is read below as outside quotes
            } else {
                if c == "\"" { afterQuote = true } else { field.append(c) }
                continue
            }
        }
        switch c {
        case "\"": quoted = true
        case ",":
            row.append(field)
            field = ""
        case "\r\n", "\n":
            row.append(field)
            rows.append(row)
            row = []
            field = ""
        default: field.append(c)
        }
    }
    if !field.isEmpty || !row.isEmpty {
        row.append(field)
        rows.append(row)
    }
    return rows
}
