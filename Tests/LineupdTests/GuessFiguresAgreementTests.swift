import Figures
import Foundation
import SessionLog
import Testing
import TrainingEngine

/// Every figure `stats --guesses --json` prints per handler, recomputed from
/// `export --what guesses` alone by docs/figures.md's definitions ("The handler's guess"): the
/// rules are written out again here, so the test fails when the export or the figures change theirs.
@Suite(.ownThreads) struct GuessFiguresAgreementTests {
    /// One guessed trial: the target's station (nil: none), where the dog indicated (2 s into
    /// the search), the guess, and whether it came 3 s in (after the indication) rather than 1 s
    /// before the start.
    struct Trial {
        var target: Int?
        var indicated: [Int]
        var guess: Int
        var late = false
        /// When the guess was made, from the trial's start (overrides `late`).
        var guessAtNs: Int64? = nil
    }

    /// Targets at stations 1 to `stations` in turn, the dog finding each; the handler guessing
    /// the target in the first `right` trials and the next station after it in the others.
    static func found(_ count: Int, stations: Int = 5, right: Int) -> [Trial] {
        (0..<count).map { i in
            let target = i % stations + 1
            return Trial(target: target, indicated: [target], guess: i < right ? target : target % stations + 1)
        }
    }

    /// A log written record by record with fixed times: handler H1 (a late guess, two trials
    /// without a target, false alerts at the guess and away from it, a trial corrected to a miss,
    /// a correction corrected again, a trial corrected to aborted), H2 (five- and four-station
    /// lineups: no p-value) and a session without a handler code.
    func guessLog() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "guess-figures-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("lineup.db").path
        let log = try SessionLog(path: path)
        let target = SampleRecord(label: "T", kind: .target)
        let control = SampleRecord(label: "C", kind: .control)
        let rex = DogRecord(name: "Rex")
        let aino = DogRecord(name: "Aino")
        let h1 = HandlerRecord(code: "H1")
        let h2 = HandlerRecord(code: "H2")
        try log.append([target, control, rex, aino, h1, h2])
        func at(_ ns: Int64) -> LogTime {
            LogTime(monoNs: 1_000_000_000_000 + ns, wallNs: 1_740_819_600_000_000_000 + ns)
        }
        let minute: Int64 = 60_000_000_000
        func session(_ dog: DogRecord, _ handler: HandlerRecord?, stations: Int, startNs: Int64, _ trials: [Trial])
            throws -> [UUID]
        {
            let session = SessionRecord(
                dogId: dog.id, handlerId: handler?.id, phase: "2 discrimination", phaseSteps: 3, step: "step 1",
                mode: .doubleBlind, time: at(startNs))
            try log.append([session])
            var ids: [UUID] = []
            for (index, spec) in trials.enumerated() {
                let started = startNs + Int64(index + 1) * minute
                let slots = (1...stations).map { s in
                    let indicated = spec.indicated.contains(s)
                    return StationSlot(
                        station: s, sampleId: s == spec.target ? target.id : control.id,
                        kind: s == spec.target ? .target : .control,
                        seen: StationSeen(
                            visited: true, indicated: indicated, firstIndicationNs: indicated ? 2_000_000_000 : nil,
                            sniffs: indicated ? 0 : 1, dwellNs: 500_000_000))
                }
                let outcome: TrialOutcome =
                    spec.indicated.contains { $0 != spec.target }
                    ? .falseAlert : spec.target == nil ? .correctRejection : spec.indicated.isEmpty ? .miss : .hit
                let trial = TrialRecord(
                    sessionId: session.id, number: index + 1, layout: slots, outcome: outcome,
                    indicatedStation: spec.indicated.first, latencyNs: spec.indicated.isEmpty ? nil : 2_000_000_000,
                    started: at(started), ended: at(started + 10_000_000_000))
                try log.recordGuess(
                    HandlerGuess(
                        sessionId: session.id, trialId: trial.id, trialNumber: index + 1, station: spec.guess,
                        time: at(started + (spec.guessAtNs ?? (spec.late ? 3_000_000_000 : -1_000_000_000)))))
                try log.append([trial])
                ids.append(trial.id)
            }
            return ids
        }
        let first = try session(
            rex, h1, stations: 5, startNs: 0,
            Self.found(10, right: 6) + [
                Trial(target: 3, indicated: [3], guess: 3, late: true),
                // At the very moment of the indication: late too.
                Trial(target: 4, indicated: [4], guess: 4, guessAtNs: 2_000_000_000),
                Trial(target: nil, indicated: [2], guess: 2),
                Trial(target: nil, indicated: [4], guess: 1),
                Trial(target: 1, indicated: [1, 3], guess: 3),
                Trial(target: 2, indicated: [2, 5], guess: 4),
            ])
        let id = { (trial: UUID) in trial.uuidString.lowercased() }
        let correction = try log.correctTrial(id(first[0]), outcome: .miss, indicatedStation: nil, reason: "video")
        _ = try log.correctTrial(id(correction.id), outcome: .hit, indicatedStation: 1, reason: "second look")
        _ = try log.correctTrial(id(first[1]), outcome: .miss, indicatedStation: nil, reason: "no hold")
        _ = try log.correctTrial(id(first[6]), outcome: .aborted, indicatedStation: nil, reason: "lid open")
        var lastAtGuess = Self.found(6, right: 4)
        lastAtGuess[5].indicated = [lastAtGuess[5].guess]
        _ = try session(aino, h2, stations: 5, startNs: 60 * minute, lastAtGuess)
        _ = try session(aino, h2, stations: 4, startNs: 120 * minute, Self.found(4, stations: 4, right: 1))
        _ = try session(
            rex, nil, stations: 5, startNs: 180 * minute,
            (0..<5).map { i in Trial(target: i % 5 + 1, indicated: [i % 5 + 1], guess: 1) })
        return path
    }

    /// One handler's figures as docs/figures.md defines them, counted from exported rows.
    struct Recomputed: Equatable {
        var group: String
        var guesses = 0
        var targetAbsentGuesses = 0
        var hits = 0
        var lateGuesses = 0
        var chance: Double?
        var pValue: Double?
        var falseAlerts = 0
        var falseAlertsAtGuess = 0
    }

    /// P(X ≥ k), X ~ Binomial(n, p), summed term by term (the coefficients built up exactly in
    /// Double for these small n), not by the code under test.
    static func upperTail(_ k: Int, _ n: Int, _ p: Double) -> Double {
        var sum = 0.0
        for i in k...n {
            var coefficient = 1.0
            for j in 0..<i { coefficient = coefficient * Double(n - j) / Double(j + 1) }
            sum += coefficient * pow(p, Double(i)) * pow(1 - p, Double(n - i))
        }
        return sum
    }

    /// The figures per handler code from the export's CSV, in the order each first appears.
    static func recompute(_ csv: String) throws -> [Recomputed] {
        let rows = parseCSV(csv)
        let header = try #require(rows.first)
        var groups: [Recomputed] = []
        var lineups: [String: Set<Int>] = [:]
        var chanceSums: [String: Double] = [:]
        for values in rows.dropFirst() where values.count == header.count {
            let row = Dictionary(uniqueKeysWithValues: zip(header, values))
            let group = row["handler"]!.isEmpty ? "(no handler code)" : row["handler"]!
            if !groups.contains(where: { $0.group == group }) { groups.append(Recomputed(group: group)) }
            let g = groups.firstIndex { $0.group == group }!
            // Counted: a scored trial (as it stands), the guess before the dog's first indication.
            guard ["hit", "miss", "false-alert", "correct-rejection"].contains(row["outcome"]!) else { continue }
            guard row["before_indication"] == "1" else {
                groups[g].lateGuesses += 1
                continue
            }
            let n = Int(row["stations"]!)!
            let targets = row["target_stations"]!.split(separator: " | ").map { Int($0)! }
            let guessed = Int(row["guessed_station"]!)!
            groups[g].guesses += 1
            lineups[group, default: []].insert(n)
            if targets.isEmpty {
                groups[g].targetAbsentGuesses += 1
            } else {
                chanceSums[group, default: 0] += 1 / Double(n)
            }
            let hit = targets.contains(guessed)
            if hit { groups[g].hits += 1 }
            // False alerts count only where the guess was wrong.
            guard !hit, n > targets.count else { continue }
            for station in row["false_alert_stations"]!.split(separator: " | ").map({ Int($0)! }) {
                groups[g].falseAlerts += 1
                if station == guessed { groups[g].falseAlertsAtGuess += 1 }
            }
        }
        for g in groups.indices {
            let group = groups[g].group
            guard groups[g].guesses > 0 else { continue }
            groups[g].chance = chanceSums[group, default: 0] / Double(groups[g].guesses)
            let present = groups[g].guesses - groups[g].targetAbsentGuesses
            if present > 0, let lineup = lineups[group], lineup.count == 1 {
                groups[g].pValue = upperTail(groups[g].hits, present, 1 / Double(lineup.first!))
            }
        }
        return groups
    }

    /// What `stats --guesses --json` prints, in the same shape.
    func printed(_ arguments: [String]) throws -> [Recomputed] {
        let run = try lineupctl(["stats", "--guesses", "--json"] + arguments)
        #expect(run.status == 0, "\(run.stderr)")
        let groups = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]])
        return try groups.map { g in
            Recomputed(
                group: try #require(g["group"] as? String), guesses: try #require(g["guesses"] as? Int),
                targetAbsentGuesses: try #require(g["target_absent_guesses"] as? Int),
                hits: try #require(g["hits"] as? Int), lateGuesses: try #require(g["late_guesses"] as? Int),
                chance: g["chance"] as? Double, pValue: g["p_value"] as? Double,
                falseAlerts: try #require(g["false_alerts"] as? Int),
                falseAlertsAtGuess: try #require(g["false_alerts_at_guess"] as? Int))
        }
    }

    /// Equal counts, and the two fractions equal to within rounding.
    func agree(_ a: [Recomputed], _ b: [Recomputed], _ context: String) {
        func rounded(_ r: Recomputed) -> Recomputed {
            var r = r
            r.chance = r.chance.map { ($0 * 1e12).rounded() / 1e12 }
            r.pValue = r.pValue.map { ($0 * 1e12).rounded() / 1e12 }
            return r
        }
        #expect(a.map(rounded) == b.map(rounded), "\(context)")
    }

    @Test func everyGuessFigureIsRecomputedFromTheExport() throws {
        let db = try guessLog()
        defer { try? FileManager.default.removeItem(atPath: (db as NSString).deletingLastPathComponent) }
        let filters: [[String]] = [
            [], ["--dog", "Rex"], ["--handler", "H2"], ["--since", "2025-03-01T10:00Z"],
            ["--until", "2025-03-01T09:08Z"],
        ]
        for filter in filters {
            let export = try lineupctl(["export", "--what", "guesses", "--db", db] + filter)
            #expect(export.status == 0 && export.stderr.isEmpty, "\(filter): \(export.stderr)")
            agree(try Self.recompute(export.stdout), try printed(["--db", db] + filter), "\(filter)")
        }

        // Not an empty agreement: the figures are those the log was written for. H1: ten found
        // (six right; the wrong one corrected to aborted dropped), the late guess, two trials
        // without a target and two with a false alert beside the find; H2: lineups of 5 and 4.
        let all = try printed(["--db", db])
        let present = 9 + 2
        var h1 = Recomputed(group: "H1", guesses: 13, targetAbsentGuesses: 2, hits: 6, lateGuesses: 2)
        h1.chance = Double(present) / 5 / 13
        h1.pValue = Self.upperTail(6, present, 0.2)
        h1.falseAlerts = 4
        h1.falseAlertsAtGuess = 2
        var h2 = Recomputed(group: "H2", guesses: 10, hits: 5, falseAlerts: 1, falseAlertsAtGuess: 1)
        h2.chance = (6.0 / 5 + 4.0 / 4) / 10
        var none = Recomputed(group: "(no handler code)", guesses: 5, hits: 1)
        none.chance = 0.2
        none.pValue = Self.upperTail(1, 5, 0.2)
        agree(all, [h1, h2, none], "the fixture's figures")
        // The p-value as the figures compute it, a second check of the test's own sum.
        #expect(abs(Self.upperTail(6, 11, 0.2) - binomialUpperTail(successes: 6, trials: 11, probability: 0.2)) < 1e-12)

        // The trial corrected to aborted keeps its row, saying so; the corrected trials are
        // written as they stand, with the trial the guess was made for beside them.
        let rows = parseCSV(try lineupctl(["export", "--what", "guesses", "--db", db]).stdout)
        let header = rows[0]
        let records = rows.dropFirst().filter { $0.count == header.count }.map {
            Dictionary(uniqueKeysWithValues: zip(header, $0))
        }
        let guesses = 16 + 6 + 4 + 5
        #expect(records.count == guesses)
        #expect(records.filter { $0["outcome"] == "aborted" }.map { $0["trial_number"] } == ["7"])
        let corrected = records.filter { $0["trial_id"] != $0["guessed_trial_id"] }.map { $0["trial_number"]! }
        #expect(corrected == ["1", "2", "7"])
        #expect(records.filter { $0["before_indication"] == "0" }.map { $0["trial_number"] } == ["11", "12"])

        // The computed columns against the trials' export, by the definitions: the guess's
        // mono_ns before started_mono_ns + latency_ns, the targets and the indicated stations
        // without one from the per-station columns.
        let trialRows = parseCSV(try lineupctl(["export", "--what", "trials", "--db", db]).stdout)
        var trials: [String: [String: String]] = [:]
        for values in trialRows.dropFirst() where values.count == trialRows[0].count {
            let row = Dictionary(uniqueKeysWithValues: zip(trialRows[0], values))
            trials[row["trial_id"]!] = row
        }
        for guess in records {
            let trial = try #require(trials[guess["trial_id"]!], "\(guess)")
            let stations = (1...5).filter { !(trial["station_\($0)_kind"] ?? "").isEmpty }
            let targets = stations.filter { trial["station_\($0)_kind"] == "target" }
            let falseAlerts = stations.filter {
                trial["station_\($0)_kind"] != "target" && trial["station_\($0)_indicated"] == "1"
            }
            let before =
                trial["latency_ns"]!.isEmpty
                || Int64(guess["mono_ns"]!)! < Int64(trial["started_mono_ns"]!)! + Int64(trial["latency_ns"]!)!
            #expect(guess["stations"] == String(stations.count), "\(guess)")
            #expect(guess["target_stations"] == targets.map(String.init).joined(separator: " | "), "\(guess)")
            #expect(guess["false_alert_stations"] == falseAlerts.map(String.init).joined(separator: " | "), "\(guess)")
            #expect(guess["before_indication"] == (before ? "1" : "0"), "\(guess)")
            #expect(guess["outcome"] == trial["outcome"] && guess["trial_number"] == trial["number"], "\(guess)")
        }
    }

    @Test func aLogWithoutGuessesExportsTheHeaderAlone() throws {
        let db = try guessLog()
        defer { try? FileManager.default.removeItem(atPath: (db as NSString).deletingLastPathComponent) }
        // A log older than the handler's guess has no handler_guess table.
        let drop = Process()
        drop.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        drop.arguments = [db, "DROP TABLE handler_guess"]
        try drop.run()
        drop.waitUntilExit()
        #expect(drop.terminationStatus == 0)
        for format in ["csv", "jsonl"] {
            let run = try lineupctl(["export", "--what", "guesses", "--format", format, "--db", db])
            #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
            #expect(
                run.stdout
                    == (format == "csv"
                        ? "guess_id,session_id,dog,handler,trial_id,guessed_trial_id,trial_number,guessed_station,"
                            + "stations,target_stations,outcome,time,mono_ns,before_indication,false_alert_stations\r\n"
                        : ""),
                "\(run.stdout)")
        }
        // A handler the log does not know is one line, as for the other tables.
        let unknown = try lineupctl(["export", "--what", "guesses", "--handler", "H9", "--db", db])
        #expect(unknown.status != 0 && unknown.stdout.isEmpty, "\(unknown.stdout)")
        #expect(unknown.stderr.contains("H9") && unknown.stderr.split(separator: "\n").count == 1, "\(unknown.stderr)")
    }
}
