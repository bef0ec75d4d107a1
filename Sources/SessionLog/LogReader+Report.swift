import Foundation
import GRDB
import GRDBSQLite
import ProgramFiles
import TrainingEngine

// Gathering what `lineupctl report` shows (the types in ReportData.swift).

extension LogReader {
    /// Gathers the report: one read transaction, one `scanTrials` pass. A dog's learning curve
    /// has at most `maxPoints` points: beyond that, consecutive sessions are pooled
    /// (ceil(sessions / maxPoints) per point) and the point's figures are the pooled trials'.
    public func report(_ filter: LogFilter = LogFilter(), maxPoints: Int = 120) throws -> ReportData {
        try read { db in
            // The tallies are arrays by station number: every station is in range first.
            try LogLimits.checkStations(db)
            var iso = ISOTimeFormatter()
            // Sessions of the chosen dog or session; the time window is applied below.
            var sessions: [ReportSession] = []
            var index: [String: Int] = [:]
            var programs: [String: Result<Program, any Error>] = [:]
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT s.id, s.dog_id, d.name AS dog, s.wall_ns, s.phase, s.step, s.exercise, s.mode,
                        s.station, s.station_id, p.id AS program_id, p.name AS program, p.content,
                        (SELECT e.how FROM session_end e WHERE e.session_id = s.id ORDER BY e.wall_ns LIMIT 1) AS how,
                        (SELECT e.detail FROM session_end e WHERE e.session_id = s.id ORDER BY e.wall_ns LIMIT 1)
                            AS detail
                    FROM session s JOIN dog d ON d.id = s.dog_id LEFT JOIN program p ON p.id = s.program_id
                    WHERE (?1 IS NULL OR s.dog_id = ?1) AND (?2 IS NULL OR s.id = ?2)
                        AND \(filter.sessionCondition(from: 3))
                    ORDER BY s.wall_ns, s.id
                    """,
                arguments: StatementArguments(
                    [filter.dogId.databaseValue, filter.sessionId.databaseValue] + filter.sessionArguments))
            for row in rows {
                let id: String = row["id"]
                var session = ReportSession(
                    id: id, dogId: row["dog_id"], dog: row["dog"], started: iso.string(wallNs: row["wall_ns"]),
                    startedWallNs: row["wall_ns"], program: row["program"], phase: row["phase"], step: row["step"],
                    exercise: row["exercise"], mode: try row.word("mode", of: "session", row: id),
                    station: row["station"], stationId: row["station_id"], endedHow: row["how"],
                    endDetail: row["detail"],
                    suggestions: [], tally: Tally(), criterion: nil, criterionNote: nil, clickOnsetNs: [], faults: 0)
                if let programId: String = row["program_id"], let content: String = row["content"] {
                    if programs[programId] == nil {
                        let source = "program \(session.program ?? programId)"
                        do {
                            // Logs written before lineupd kept the program's text hold only a
                            // built-in program's name (`built-in:study.toml`): this build's copy
                            // of it stands in.
                            if content.hasPrefix("built-in:"), content.hasSuffix(".toml"),
                                let builtin = try Program.builtin(
                                    named: String(content.dropFirst("built-in:".count).dropLast(".toml".count)))
                            {
                                programs[programId] = .success(builtin)
                            } else {
                                programs[programId] = .success(try Program.parse(toml: content, source: source))
                            }
                        } catch {
                            programs[programId] = .failure(error)
                        }
                    }
                    switch programs[programId]! {
                    case .success(let program):
                        if let phase = session.phase, let step = session.step,
                            let found = program.step(phase: phase, step: step)
                        {
                            // The step fixes its mode; a session run otherwise does not count toward
                            // its criterion (as for progress and milestones).
                            if found.mode != session.mode {
                                session.criterionNote =
                                    "\(phase)/\(step) is run \(found.mode.rawValue): its \(session.mode.rawValue) sessions do not count toward its criterion"
                            } else {
                                session.criterion = found.criterion
                                if found.criterion == nil { session.criterionNote = "the step has no criterion" }
                            }
                        } else {
                            session.criterionNote = "the program has no such step"
                        }
                    case .failure:
                        session.criterionNote = "the logged program could not be read"
                    }
                } else {
                    session.criterionNote = "no program logged"
                }
                index[id] = sessions.count
                sessions.append(session)
            }
            var inWindow = Set<Int>()
            for (i, s) in sessions.enumerated()
            where (filter.since.map { s.startedWallNs >= $0 } ?? true)
                && (filter.until.map { s.startedWallNs < $0 } ?? true)
            {
                inWindow.insert(i)
            }

            // The one pass: each trial into its session, its dog's stations and the samples. A dog's
            // tallies sit in arrays by station number (and by target position, 0 for none), reached
            // through the session's index: no string hashed per station on 100,000 trials.
            var dogSlots: [String: Int] = [:]
            let sessionDog = sessions.map { s in
                if let slot = dogSlots[s.dogId] { return slot }
                dogSlots[s.dogId] = dogSlots.count
                return dogSlots.count - 1
            }
            var stationTallies = Array(repeating: [Tally](), count: dogSlots.count)
            var positionTallies = Array(repeating: [[Tally]](), count: dogSlots.count)
            var samples: [String: (kind: SampleKind, tally: Tally)] = [:]
            var trials = 0
            // Each dog's scored trials per step with a criterion, for the rolling accuracy.
            var stepResults: [String: [(session: Int, correct: Bool)]] = [:]
            try Self.scanTrials(db, filter, samples: true) { trial, context in
                guard let i = index[context.sessionId] else { return }
                trials += 1
                inWindow.insert(i)
                sessions[i].tally.add(trial)
                if sessions[i].criterion != nil, trial.outcome != .aborted {
                    let s = sessions[i]
                    stepResults["\(s.dogId)/\(s.program ?? "")/\(s.phase ?? "")/\(s.step ?? "")", default: []].append(
                        (i, trial.outcome.isCorrect))
                }
                let d = sessionDog[i]
                let target = trial.stations.first { $0.kind == .target }?.station ?? 0
                while positionTallies[d].count <= target { positionTallies[d].append([]) }
                for station in trial.stations where station.station >= 0 {
                    let n = station.station
                    while stationTallies[d].count <= n { stationTallies[d].append(Tally()) }
                    while positionTallies[d][target].count <= n { positionTallies[d][target].append(Tally()) }
                    stationTallies[d][n].add(trial, station: station)
                    positionTallies[d][target][n].add(trial, station: station)
                    if let sample = station.sample {
                        samples[sample, default: (station.kind, Tally())].tally.add(trial, station: station)
                    }
                }
            }
            // In session order (a merged log holds stations' trials one station after another).
            for (_, results) in stepResults {
                let ordered = results.enumerated().sorted {
                    (sessions[$0.element.session].startedWallNs, $0.offset)
                        < (sessions[$1.element.session].startedWallNs, $1.offset)
                }.map(\.element)
                guard let criterion = sessions[ordered[0].session].criterion else { continue }
                let window = criterion.window
                let count = criterion.countCriterion
                var recent: [Bool] = []
                var all: [Bool] = []
                for (k, result) in ordered.enumerated() {
                    recent.append(result.correct)
                    all.append(result.correct)
                    if recent.count > window { recent.removeFirst() }
                    // Each session's figures as they stood after its last trial.
                    guard k == ordered.count - 1 || ordered[k + 1].session != result.session else { continue }
                    let i = result.session
                    sessions[i].rollingWindow = window
                    sessions[i].rollingAccuracy = Double(recent.filter { $0 }.count) / Double(recent.count)
                    if let count {
                        sessions[i].countCorrect = all.filter { $0 }.count
                        sessions[i].countTrials = all.count
                        sessions[i].countProgress = count.progress(all)
                    }
                }
            }
            // Stations and cells that no trial reached stay out (a tally with no trial).
            func stations(_ d: Int) -> [Int: Tally] {
                var out: [Int: Tally] = [:]
                for (n, tally) in stationTallies[d].enumerated() where tally.results.trials > 0 { out[n] = tally }
                return out
            }
            func positions(_ d: Int) -> [PositionKey: Tally] {
                var out: [PositionKey: Tally] = [:]
                for (target, row) in positionTallies[d].enumerated() {
                    for (n, tally) in row.enumerated() where tally.results.trials > 0 {
                        out[PositionKey(target: target == 0 ? nil : target, station: n)] = tally
                    }
                }
                return out
            }
            sessions = sessions.enumerated().filter { inWindow.contains($0.offset) }.map(\.element)
            index = Dictionary(uniqueKeysWithValues: sessions.enumerated().map { ($0.element.id, $0.offset) })

            // Suggestions, comments, clicks and faults of the sessions in scope.
            for row in try Row.fetchAll(
                db, sql: "SELECT session_id, kind, text FROM session_note ORDER BY wall_ns, mono_ns")
            {
                guard let i = index[row[0] as String] else { continue }
                if (row[1] as String) == "improvement" {
                    sessions[i].suggestions.append(row[2])
                } else {
                    sessions[i].comments.append(row[2])
                }
            }
            let eventWindow = "(?1 IS NULL OR wall_ns >= ?1) AND (?2 IS NULL OR wall_ns < ?2)"
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT session_id, click_onset_latency_ns FROM event
                    WHERE kind = 'click' AND click_onset_latency_ns IS NOT NULL AND \(eventWindow)
                    """, arguments: [filter.since, filter.until])
            {
                if let id: String = row[0], let i = index[id] { sessions[i].clickOnsetNs.append(row[1]) }
            }
            var faults: [String: Int] = [:]
            var outside = 0
            let anyone = filter.dogId == nil && filter.sessionId == nil
            for row in try Row.fetchAll(
                db, sql: "SELECT session_id, detail, station FROM event WHERE kind = 'fault' AND \(eventWindow)",
                arguments: [filter.since, filter.until])
            {
                let sessionId: String? = row[0]
                if let sessionId, let i = index[sessionId] {
                    sessions[i].faults += 1
                } else if sessionId == nil && anyone {
                    outside += 1
                } else {
                    continue
                }
                faults[Self.faultName(row[1], station: row[2]), default: 0] += 1
            }

            // Milestones of the dogs in scope.
            var milestones: [String: [ReportMilestone]] = [:]
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT dog_id, session_id, phase, step, criterion, wall_ns FROM milestone
                    WHERE (?1 IS NULL OR dog_id = ?1) ORDER BY wall_ns
                    """, arguments: [filter.dogId])
            {
                let sessionId: String? = row["session_id"]
                if filter.sessionId != nil && sessionId != filter.sessionId { continue }
                milestones[row["dog_id"], default: []].append(
                    ReportMilestone(
                        sessionId: sessionId, phase: row["phase"], step: row["step"], criterion: row["criterion"],
                        time: iso.string(wallNs: row["wall_ns"])))
            }

            // Dogs, their curves pooled to at most maxPoints points.
            var dogOrder: [String] = []
            var dogSessions: [String: [Int]] = [:]
            for (i, s) in sessions.enumerated() {
                if dogSessions[s.dogId] == nil { dogOrder.append(s.dogId) }
                dogSessions[s.dogId, default: []].append(i)
            }
            let dogs = dogOrder.map { dogId -> ReportDog in
                let own = dogSessions[dogId] ?? []
                let curve = Self.curve(own, sessions, maxPoints: maxPoints)
                return ReportDog(
                    id: dogId, name: sessions[own[0]].dog, sessions: own, points: curve.points, groups: curve.groups,
                    sessionsPerPoint: curve.perPoint, stations: stations(dogSlots[dogId]!),
                    byTargetPosition: positions(dogSlots[dogId]!), milestones: milestones[dogId] ?? [])
            }.sorted { ($0.name, $0.id) < ($1.name, $1.id) }

            var data = ReportData(
                sessions: sessions, dogs: dogs, samples: try Self.reportSamples(db, samples), faults: faults,
                faultsOutsideSessions: outside, trials: trials,
                generated: iso.string(wallNs: LogTime.now().wallNs))
            try data.addSampleFigures(db, filter)
            return data
        }
    }

    /// A dog's learning curve: one line per (program, step, mode), never a point that mixes
    /// them. Within a group, consecutive sessions of the group are pooled, the same number to a
    /// point in every group: the fewest that keep the curve within `maxPoints` (or one point per
    /// group, if the dog has more groups than that). Points are in order of their first session.
    static func curve(_ own: [Int], _ sessions: [ReportSession], maxPoints: Int) -> (
        points: [CurvePoint], groups: [String], perPoint: Int
    ) {
        var groups: [String] = []
        var members: [[Int]] = []
        var slot: [String: Int] = [:]
        for i in own {
            let key = sessions[i].curveGroup
            if slot[key] == nil {
                slot[key] = groups.count
                groups.append(key)
                members.append([])
            }
            members[slot[key]!].append(i)
        }
        let limit = max(1, maxPoints)
        let largest = members.map(\.count).max() ?? 1
        var per = max(1, (own.count + limit - 1) / limit)
        while per < largest && members.reduce(0, { $0 + ($1.count + per - 1) / per }) > limit { per += 1 }
        var points: [CurvePoint] = []
        for (g, list) in members.enumerated() {
            for start in stride(from: 0, to: list.count, by: per) {
                let chunk = Array(list[start..<min(list.count, start + per)])
                var tally = Tally()
                for m in chunk { tally.add(sessions[m].tally) }
                points.append(
                    CurvePoint(
                        sessions: chunk, group: g, tally: tally, figures: tally.figures,
                        clicks: ClickSpread(onsetNs: chunk.flatMap { sessions[$0].clickOnsetNs })))
            }
        }
        points.sort { $0.sessions[0] < $1.sessions[0] }
        return (points, groups, per)
    }

    /// What a fault event's detail says failed; a sensor's fault names its station, so a
    /// flagged station stands out (`sensor stuck at station 2`).
    /// A detail that cannot be read is counted as a plain `fault` rather than failing the report.
    static func faultName(_ detail: String?, station: Int? = nil) -> String {
        guard let detail, let fault = try? EventDetail.decode(FaultDetail.self, from: detail) else { return "fault" }
        if let name = fault.fault { return name }
        if let sensor = fault.sensor {
            return "sensor \(sensor)" + (station.map { " at station \($0)" } ?? "")
        }
        if fault.clickFailed != nil { return "click-failed" }
        if fault.read != nil { return "unreadable" }  // an input that could not be read, not its errno
        return fault.fields.first ?? "fault"
    }

    /// Samples with their rates and the pooled rate of the rest of their kind.
    static func reportSamples(_ db: Database, _ tallies: [String: (kind: SampleKind, tally: Tally)]) throws
        -> [ReportSample]
    {
        var labels: [String: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT id, label FROM sample") { labels[row[0]] = row[1] }
        var samples = tallies.map { id, entry -> ReportSample in
            let f = entry.tally.figures
            let rate: Proportion? =
                switch entry.kind {
                case .target: f.sensitivity
                case .control, .distractor: f.falseAlertRate
                case .blank: nil
                }
            return ReportSample(
                id: id, label: labels[id] ?? id, kind: entry.kind, tally: entry.tally, rate: rate, restRate: nil)
        }
        // Targets are compared with targets; controls and distractors with each other.
        func family(_ kind: SampleKind) -> Int { kind == .target ? 0 : (kind == .blank ? 2 : 1) }
        var sums: [Int: (successes: Int, trials: Int)] = [:]
        for s in samples {
            guard let r = s.rate else { continue }
            sums[family(s.kind), default: (0, 0)].successes += r.successes
            sums[family(s.kind), default: (0, 0)].trials += r.trials
        }
        for i in samples.indices {
            guard let r = samples[i].rate, let total = sums[family(samples[i].kind)] else { continue }
            let restTrials = total.trials - r.trials
            guard restTrials > 0 else { continue }
            samples[i].restRate = Double(total.successes - r.successes) / Double(restTrials)
        }
        return samples.sorted { (family($0.kind), $0.label) < (family($1.kind), $1.label) }
    }
}
