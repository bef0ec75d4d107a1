import Figures
import Foundation
import SessionLog
import Testing
import TrainingEngine

/// `stats --familiar-novel` and `stats --sources` against a recomputation from
/// `export --what trials` and `export --what samples` by docs/figures.md's definitions: exposure
/// from the exported trials in time order, each station's verdict from its kind, visited and
/// indicated columns.
@Suite(.ownThreads) struct SampleFiguresAgreementTests {
    /// Two dogs, 70 trials each on three stations, samples drawn from small pools (so most
    /// are met again) and new ones now and then, some trials aborted; the dog's indications
    /// from a fixed-seed generator. Every station is visited unless the generator says not.
    func seededLog() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sample-figures-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("lineup.db").path
        let log = try SessionLog(path: path)
        var state: UInt64 = 0x5EED_2026
        func next(_ n: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(n))
        }
        let sources = ["clinic A", "clinic B", "volunteers"]
        var targets: [SampleRecord] = []
        var controls: [SampleRecord] = []
        for k in 0..<4 {
            targets.append(SampleRecord(label: "T\(k)", kind: .target, facts: SampleFacts(source: sources[k % 2])))
            controls.append(
                SampleRecord(label: "C\(k)", kind: .control, facts: SampleFacts(source: sources[1 + k % 2])))
        }
        try log.append(targets + controls)
        var time: Int64 = 1_000_000_000_000
        var fresh = 0
        for name in ["Aino", "Rex"] {
            let dog = DogRecord(name: name)
            let session = SessionRecord(dogId: dog.id, phase: "3 discrimination", step: "step 1", mode: .doubleBlind)
            try log.append([dog, session])
            let writer = log.makeWriter()
            defer { writer.close() }
            for number in 1...70 {
                var samples: [SampleRecord] = []
                if next(5) == 0 {
                    fresh += 1
                    let new = SampleRecord(
                        label: "T-new-\(fresh)", kind: .target, facts: SampleFacts(source: sources[next(3)]))
                    try log.append([new])
                    samples.append(new)
                } else {
                    samples.append(targets[next(4)])
                }
                samples.append(controls[next(4)])
                samples.append(controls[next(4)])
                if samples[1].id == samples[2].id {
                    samples[2] = controls[(controls.firstIndex(of: samples[1])! + 1) % 4]
                }
                // The target's station moves: rotate the lineup by 0, 1 or 2.
                let turn = next(3)
                samples = Array(samples[turn...] + samples[..<turn])
                let layout = samples.enumerated().map { index, sample in
                    let visited = next(6) != 0
                    // A target found 3 times in 4, a control alerted once in 10.
                    let indicated = visited && (sample.kind == .target ? next(4) != 0 : next(10) == 0)
                    return StationSlot(
                        station: index + 1, sampleId: sample.id, kind: sample.kind,
                        seen: StationSeen(
                            visited: visited, indicated: indicated, firstIndicationNs: indicated ? 1_000_000_000 : nil,
                            sniffs: visited && !indicated ? 1 : 0, dwellNs: visited ? 500_000_000 : 0))
                }
                let falseAlert = layout.contains { $0.kind != .target && $0.seen!.indicated }
                let hit = layout.contains { $0.kind == .target && $0.seen!.indicated }
                let outcome: TrialOutcome =
                    next(12) == 0 ? .aborted : falseAlert ? .falseAlert : hit ? .hit : .miss
                time += 20_000_000_000
                let started = LogTime(monoNs: time, wallNs: 1_740_819_600_000_000_000 + time)
                time += 5_000_000_000
                try writer.commitTrial(
                    TrialRecord(
                        sessionId: session.id, number: number, layout: layout, outcome: outcome,
                        started: started, ended: LogTime(monoNs: time, wallNs: 1_740_819_600_000_000_000 + time)))
            }
        }
        return path
    }

    struct Counts: Equatable {
        var hits = 0, misses = 0, correctRejections = 0, falseAlerts = 0
    }

    func json(_ arguments: [String]) throws -> [[String: Any]] {
        let run = try lineupctl(arguments)
        #expect(run.status == 0, "\(run.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]])
    }

    func successes(_ object: Any?) throws -> (Int, Int) {
        let p = try #require(object as? [String: Any])
        return (try #require(p["successes"] as? Int), try #require(p["trials"] as? Int))
    }

    @Test func familiarNovelAndSourcesAgreeWithTheExport() throws {
        let db = try seededLog()
        let trials = try lineupctl(["export", "--db", db, "--what", "trials"])
        #expect(trials.status == 0, "\(trials.stderr)")
        let rows = parseCSV(trials.stdout)
        let header = try #require(rows.first)
        var records = rows.dropFirst().filter { $0.count == header.count }.map {
            Dictionary(uniqueKeysWithValues: zip(header, $0))
        }
        // Time order, as exposure counts it (one station: its monotonic clock orders the log).
        records.sort { Int($0["started_mono_ns"]!)! < Int($1["started_mono_ns"]!)! }
        let samples = try lineupctl(["export", "--db", db, "--what", "samples"])
        let sampleRows = parseCSV(samples.stdout)
        let sampleHeader = try #require(sampleRows.first)
        var sourceOf: [String: String] = [:]
        for row in sampleRows.dropFirst() where row.count == sampleHeader.count {
            let field = Dictionary(uniqueKeysWithValues: zip(sampleHeader, row))
            sourceOf[field["label"]!] = field["source"]!
        }
        var met: [String: Set<String>] = [:]  // dog -> labels met in an earlier trial
        var familiar: [String: Counts] = [:]
        var novel: [String: Counts] = [:]
        var bySource: [String: Counts] = [:]  // "dog/source"
        var novelTrials = 0
        for r in records {
            let dog = r["dog"]!
            var labels: [String] = []
            for station in 1...3 {
                let label = r["station_\(station)_sample"]!
                guard !label.isEmpty else { continue }
                labels.append(label)
                guard r["outcome"] != "aborted" else { continue }
                let isNovel = !(met[dog]?.contains(label) ?? false)
                let kind = r["station_\(station)_kind"]!
                let visited = r["station_\(station)_visited"] == "1"
                let indicated = r["station_\(station)_indicated"] == "1"
                func count(_ c: inout Counts) {
                    if kind == "target" {
                        if indicated { c.hits += 1 } else { c.misses += 1 }
                    } else if indicated {
                        c.falseAlerts += 1
                    } else if visited {
                        c.correctRejections += 1
                    }
                }
                if isNovel {
                    count(&novel[dog, default: Counts()])
                    if kind == "target" { novelTrials += 1 }
                } else {
                    count(&familiar[dog, default: Counts()])
                }
                count(&bySource["\(dog)/\(sourceOf[label]!)", default: Counts()])
            }
            met[dog, default: []].formUnion(labels)
        }
        // The seeded log has both sides to compare, or the test would prove little.
        #expect(novelTrials >= 10)
        let stats = try json(["stats", "--db", db, "--familiar-novel", "--json"])
        #expect(stats.map { $0["dog"] as? String } == ["Aino", "Rex"])
        for row in stats {
            let dog = try #require(row["dog"] as? String)
            let f = familiar[dog]!
            let n = novel[dog]!
            #expect(try successes(row["familiar_sensitivity"]) == (f.hits, f.hits + f.misses), "\(dog)")
            #expect(try successes(row["novel_sensitivity"]) == (n.hits, n.hits + n.misses), "\(dog)")
            #expect(
                try successes(row["familiar_specificity"]) == (f.correctRejections, f.correctRejections + f.falseAlerts)
            )
            #expect(
                try successes(row["novel_specificity"]) == (n.correctRejections, n.correctRejections + n.falseAlerts))
        }
        let confound = try json(["stats", "--db", db, "--sources", "--json"])
        #expect(confound.map { $0["detail"] as? String } == ["source", "source"])
        var seen = 0
        for row in confound {
            let dog = try #require(row["dog"] as? String)
            for value in try #require(row["values"] as? [[String: Any]]) {
                let source = try #require(value["value"] as? String)
                let c = try #require(bySource["\(dog)/\(source)"])
                #expect(try successes(value["sensitivity"]) == (c.hits, c.hits + c.misses), "\(dog) \(source)")
                #expect(
                    try successes(value["specificity"])
                        == (c.correctRejections, c.correctRejections + c.falseAlerts), "\(dog) \(source)")
                seen += 1
            }
        }
        #expect(seen == bySource.count)
    }

    /// Memo: one target met 21 times and found each time, then 15 new targets, 5 found; the
    /// controls come from clinic B, the targets from clinic A, and Memo indicates only clinic A.
    func memoLog() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sample-flags-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("lineup.db").path
        let log = try SessionLog(path: path)
        let dog = DogRecord(name: "Memo")
        let session = SessionRecord(dogId: dog.id, phase: "3 discrimination", step: "step 1", mode: .doubleBlind)
        let old = SampleRecord(label: "T-old", kind: .target, facts: SampleFacts(source: "clinic A"))
        let control = SampleRecord(label: "C-1", kind: .control, facts: SampleFacts(source: "clinic B"))
        try log.append([dog, session, old, control])
        let writer = log.makeWriter()
        defer { writer.close() }
        var time: Int64 = 1_000_000_000_000
        for number in 1...36 {
            var target = old
            if number > 21 {
                target = SampleRecord(label: "T-new-\(number)", kind: .target, facts: SampleFacts(source: "clinic A"))
                try log.append([target])
            }
            let found = number <= 26
            let layout = [
                StationSlot(
                    station: 1, sampleId: target.id, kind: .target,
                    seen: StationSeen(visited: true, indicated: found, firstIndicationNs: found ? 1_000_000_000 : nil)),
                StationSlot(
                    station: 2, sampleId: control.id, kind: .control, seen: StationSeen(visited: true, indicated: false)
                ),
            ]
            time += 20_000_000_000
            let started = LogTime(monoNs: time, wallNs: 1_740_819_600_000_000_000 + time)
            time += 5_000_000_000
            try writer.commitTrial(
                TrialRecord(
                    sessionId: session.id, number: number, layout: layout, outcome: found ? .hit : .miss,
                    started: started, ended: LogTime(monoNs: time, wallNs: 1_740_819_600_000_000_000 + time)))
        }
        return path
    }

    @Test func eachFlagIsALineNamingTheDogAndItsFigures() throws {
        let db = try memoLog()
        let novel = try lineupctl(["stats", "--db", db, "--familiar-novel"])
        #expect(novel.status == 0 && novel.stderr.isEmpty, "\(novel.stderr)")
        #expect(
            novel.stdout.contains(
                "flag: Memo: novel-sample sensitivity 37.5 % (6/16) is below its familiar-sample sensitivity "
                    + "100.0 % (20/20) by 62.5 points (Fisher's exact test, two-sided, p = 3.15e-05)"),
            "\(novel.stdout)")
        let sources = try lineupctl(["stats", "--db", db, "--sources"])
        #expect(sources.status == 0 && sources.stderr.isEmpty, "\(sources.stderr)")
        // Every target from clinic A, every control from B: the design cannot tell them apart.
        #expect(
            sources.stdout.contains(
                "flag: Memo: targets and controls differ in source (by 1.00) and the dog's indications follow the source"
            ), "\(sources.stdout)")
        let both = try lineupctl(["stats", "--db", db, "--sources", "--familiar-novel"])
        #expect(both.status != 0)
        #expect(both.stderr.contains("--familiar-novel, --sources, --guesses and --threshold: choose one"))
        #expect(both.stdout.isEmpty)
    }
}
