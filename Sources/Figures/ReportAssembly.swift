import Foundation
import ProgramFiles
import TrainingEngine

// The report's assembly: plain rows in, `ReportData` out. Its sources only run their queries
// and hand over the rows: a station's (or a merged) log in SessionLog's LogReader+Report.swift,
// the lab store in LabStore's LabReader+Report.swift. One definition, one implementation: the same
// rows give the same report, byte for byte, whichever source held them.
//
// Why this split rather than copying the store's tables into a scratch SQLite file and running
// the log's report on it: the report reads every trial once and a handful of small tables, so
// the store's side is a few queries streamed straight into this assembly; a scratch copy would
// write every trial (1,000,000 in the benchmark) to disk before reading it back.

/// Builds the report from the rows of its source, in this order: `init` with the sessions
/// and programs, `addTrial` for every trial in order, then notes, clicks, faults and
/// milestones in any order, then `finish`.
public struct ReportAssembly {
    /// A session as the report reads it, with its first end (if any).
    public struct SessionRow: Sendable {
        public var id: String
        public var dogId: String
        public var dog: String
        public var wallNs: Int64
        public var phase: String?
        public var step: String?
        public var exercise: String?
        /// The mode as the source spells it (checked here, naming the session).
        public var mode: String
        public var station: String?
        public var stationId: String?
        public var programId: String?
        public var endedHow: String?
        public var endDetail: String?
        /// The session's settings JSON, which name its stations (`StationNames`).
        public var settings: String?

        public init(
            id: String, dogId: String, dog: String, wallNs: Int64, phase: String?, step: String?, exercise: String?,
            mode: String, station: String?, stationId: String?, programId: String?, endedHow: String?,
            endDetail: String?, settings: String? = nil
        ) {
            self.id = id
            self.dogId = dogId
            self.dog = dog
            self.wallNs = wallNs
            self.phase = phase
            self.step = step
            self.exercise = exercise
            self.mode = mode
            self.station = station
            self.stationId = stationId
            self.programId = programId
            self.endedHow = endedHow
            self.endDetail = endDetail
            self.settings = settings
        }
    }

    /// A logged program: its name and text (which names the steps and their criteria).
    public struct ProgramRow: Sendable {
        public var name: String
        public var content: String

        public init(name: String, content: String) {
            self.name = name
            self.content = content
        }
    }

    /// A sample of the registry: its label, and the details the confound figures group by.
    public struct SampleRow: Sendable {
        public var id: String
        public var label: String
        /// The kind as the source spells it (a word lineup does not know counts as a blank, as
        /// `stats --sources` reads it).
        public var kind: String
        public var facts: SampleFacts

        public init(id: String, label: String, kind: String, facts: SampleFacts) {
            self.id = id
            self.label = label
            self.kind = kind
            self.facts = facts
        }
    }

    /// Which dog, session and time the report covers (the rest of the researcher's filter
    /// chose the sessions and trials its source hands over).
    public struct Scope: Sendable, Hashable {
        public var dogId: String?
        public var sessionId: String?
        /// Wall-clock bounds, nanoseconds since 1970 (UTC): `since` inclusive, `until` exclusive.
        public var since: Int64?
        public var until: Int64?

        public init(dogId: String? = nil, sessionId: String? = nil, since: Int64? = nil, until: Int64? = nil) {
            self.dogId = dogId
            self.sessionId = sessionId
            self.since = since
            self.until = until
        }
    }

    /// A row holds a word this lineup does not know (a session's mode from a newer lineup):
    /// where, what it says and what it could say. Its source names it in its own terms.
    public struct UnknownWord: Error, Sendable, Hashable {
        public var table: String
        public var row: String
        public var column: String
        public var value: String
        public var known: [String]
    }

    let filter: Scope
    let maxPoints: Int
    var iso = ISOTimeFormatter()
    var sessions: [ReportSession] = []
    var index: [String: Int] = [:]
    var inWindow = Set<Int>()
    // A dog's tallies sit in arrays by station slot (and by the target's slot + 1, 0 for none),
    // reached through the session's index: no string hashed per station on 100,000 trials. A
    // slot is a named station (`StationNames`); each session maps its numbers to slots once.
    var dogSlots: [String: Int] = [:]
    var sessionDog: [Int] = []
    var sessionSettings: [String?] = []
    /// Each session's names by its id, as its first trial placed them (`StationNames`), and
    /// its settings, for a sentence that names a station (a sensor's fault).
    var sessionNames: [String: StationNames] = [:]
    var settingsById: [String: String] = [:]
    /// Per session, by station number: its slot (-1: not yet named); empty until its first trial.
    var sessionStationSlots: [[Int]] = []
    var stationSlots: [NamedStation: Int] = [:]
    var slotStations: [NamedStation] = []
    var stationTallies: [[Tally]] = []
    var positionTallies: [[[Tally]]] = []
    var samples: [String: (kind: SampleKind, tally: Tally)] = [:]
    var trials = 0
    /// Each dog's scored trials per step with a criterion, in trial order, for the rolling accuracy.
    var stepResults: [String: [(session: Int, correct: Bool)]] = [:]
    var familiarNovel = FamiliarNovelCounter()
    var confound = ConfoundCounter()
    var trialsClosed = false
    var faults: [String: Int] = [:]
    var faultsOutside = 0
    var milestones: [String: [ReportMilestone]] = [:]

    /// `sessions`: those the filter chose (dog, session, mode, program, step, handler; the time
    /// window is applied here), oldest first (by start, then id). `programs`: by id.
    public init(
        scope filter: Scope, maxPoints: Int, sessions rows: [SessionRow], programs: [String: ProgramRow]
    ) throws {
        self.filter = filter
        self.maxPoints = maxPoints
        var parsed: [String: Result<Program, any Error>] = [:]
        for row in rows {
            guard let mode = TrainingMode(rawValue: row.mode) else {
                throw UnknownWord(
                    table: "session", row: row.id, column: "mode", value: row.mode,
                    known: TrainingMode.allCases.map(\.rawValue))
            }
            let logged = row.programId.flatMap { programs[$0] }
            var session = ReportSession(
                id: row.id, dogId: row.dogId, dog: row.dog, started: iso.string(wallNs: row.wallNs),
                startedWallNs: row.wallNs, program: logged?.name, phase: row.phase, step: row.step,
                exercise: row.exercise, mode: mode, station: row.station, stationId: row.stationId,
                endedHow: row.endedHow, endDetail: row.endDetail,
                suggestions: [], tally: Tally(), criterion: nil, criterionNote: nil, clickOnsetNs: [], faults: 0)
            if let programId = row.programId, let logged {
                if parsed[programId] == nil {
                    parsed[programId] = Result(catching: { try Self.program(logged) })
                }
                switch parsed[programId]! {
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
            index[row.id] = sessions.count
            sessions.append(session)
            sessionSettings.append(row.settings)
            if let settings = row.settings { settingsById[row.id] = settings }
        }
        sessionStationSlots = Array(repeating: [], count: sessions.count)
        for (i, s) in sessions.enumerated()
        where (filter.since.map { s.startedWallNs >= $0 } ?? true)
            && (filter.until.map { s.startedWallNs < $0 } ?? true)
        {
            inWindow.insert(i)
        }
        sessionDog = sessions.map { s in
            if let slot = dogSlots[s.dogId] { return slot }
            dogSlots[s.dogId] = dogSlots.count
            return dogSlots.count - 1
        }
        stationTallies = Array(repeating: [], count: dogSlots.count)
        positionTallies = Array(repeating: [], count: dogSlots.count)
    }

    static func program(_ logged: ProgramRow) throws -> Program {
        let content = logged.content
        // Logs written before lineupd kept the program's text hold only a built-in program's
        // name (`built-in:study.toml`): this build's copy of it stands in.
        if content.hasPrefix("built-in:"), content.hasSuffix(".toml"),
            let builtin = try Program.builtin(
                named: String(content.dropFirst("built-in:".count).dropLast(".toml".count)))
        {
            return builtin
        }
        return try Program.parse(toml: content, source: "program \(logged.name)")
    }

    /// The next trial (after corrections) of the chosen dog, or of every dog when none is
    /// chosen: every one, in order of its start (then session id, then trial number), since
    /// each counts toward its samples' exposure. `inScope`: whether the filter chose it (its
    /// session, mode, program, step, handler and time); only those are counted. The trial's
    /// sample ids must be read (`TrialRowDecoder(samples: true)`).
    public mutating func addTrial(
        _ trial: ScoredTrial, dogId: String, dog: String, sessionId: String, inScope: Bool
    ) {
        precondition(!trialsClosed, "a trial after the report's notes, clicks or faults")
        familiarNovel.add(trial, dogId: dogId, dog: dog, inScope: inScope)
        // The criterion counts the dog's trials on the step from the first, as progress does,
        // whatever the report's time window: those before it too.
        if let i = index[sessionId], sessions[i].criterion != nil, trial.outcome != .aborted {
            let s = sessions[i]
            stepResults["\(s.dogId)/\(s.program ?? "")/\(s.phase ?? "")/\(s.step ?? "")", default: []].append(
                (i, trial.outcome.isCorrect))
        }
        guard inScope else { return }
        confound.add(trial, dogId: dogId, dog: dog)
        guard let i = index[sessionId] else { return }
        trials += 1
        inWindow.insert(i)
        sessions[i].tally.add(trial)
        let d = sessionDog[i]
        let target = trial.stations.first { $0.kind == .target }.map { slot(session: i, $0.station, trial) + 1 } ?? 0
        while positionTallies[d].count <= target { positionTallies[d].append([]) }
        for station in trial.stations where station.station >= 0 {
            let n = slot(session: i, station.station, trial)
            while stationTallies[d].count <= n { stationTallies[d].append(Tally()) }
            while positionTallies[d][target].count <= n { positionTallies[d][target].append(Tally()) }
            stationTallies[d][n].add(trial, station: station)
            positionTallies[d][target][n].add(trial, station: station)
            if let sample = station.sample {
                samples[sample, default: (station.kind, Tally())].tally.add(trial, station: station)
            }
        }
    }

    /// Station `number`'s slot in session `i`, named at the session's first trial.
    mutating func slot(session i: Int, _ number: Int, _ trial: ScoredTrial) -> Int {
        if number < sessionStationSlots[i].count, sessionStationSlots[i][number] >= 0 {
            return sessionStationSlots[i][number]
        }
        let names = StationNames(settings: sessionSettings[i], numbers: trial.stations.map(\.station))
        if sessionNames[sessions[i].id] == nil { sessionNames[sessions[i].id] = names }
        let named = names.station(number)
        let slot = stationSlots[named] ?? slotStations.count
        if slot == slotStations.count {
            stationSlots[named] = slot
            slotStations.append(named)
        }
        while sessionStationSlots[i].count <= number { sessionStationSlots[i].append(-1) }
        sessionStationSlots[i][number] = slot
        return slot
    }

    /// After the last trial: each session's criterion figures, and the sessions in scope (in
    /// the time window, or with a trial in it).
    mutating func closeTrials() {
        guard !trialsClosed else { return }
        trialsClosed = true
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
            var trackers = criterion.each.map { GraduationTracker(criterion: $0) }
            for (k, result) in ordered.enumerated() {
                recent.append(result.correct)
                all.append(result.correct)
                for t in trackers.indices { trackers[t].record(correct: result.correct) }
                if recent.count > window { recent.removeFirst() }
                // Each session's figures as they stood after its last trial.
                guard k == ordered.count - 1 || ordered[k + 1].session != result.session else { continue }
                let i = result.session
                sessions[i].rollingWindow = window
                sessions[i].rollingAccuracy = Double(recent.filter { $0 }.count) / Double(recent.count)
                sessions[i].criterionVerdicts = trackers.compactMap(\.verdict)
                if let count {
                    sessions[i].countCorrect = all.filter { $0 }.count
                    sessions[i].countTrials = all.count
                    sessions[i].countProgress = count.progress(all)
                }
            }
        }
        // The tallies stay by the old indices (sessionDog); only sessions are renumbered.
        sessions = sessions.enumerated().filter { inWindow.contains($0.offset) }.map(\.element)
        index = Dictionary(uniqueKeysWithValues: sessions.enumerated().map { ($0.element.id, $0.offset) })
    }

    /// A session's note: `improvement` (a suggestion) or a comment. In the order they were written.
    public mutating func addNote(sessionId: String, kind: String, text: String) {
        closeTrials()
        guard let i = index[sessionId] else { return }
        if kind == "improvement" {
            sessions[i].suggestions.append(text)
        } else {
            sessions[i].comments.append(text)
        }
    }

    /// A click's onset latency, of a click event in the time window.
    public mutating func addClick(sessionId: String?, onsetNs: Int64) {
        closeTrials()
        if let sessionId, let i = index[sessionId] { sessions[i].clickOnsetNs.append(onsetNs) }
    }

    /// Station `number` of a session as a sentence names it, `East (2)` (`StationNames.said`):
    /// by the names its trials were counted under, else by its settings alone
    /// (`StationNames(settings:)`); outside any session, the board's default.
    public func stationSaid(session id: String?, _ number: Int) -> String {
        guard let id else { return StationNames(settings: nil).said(number) }
        return (sessionNames[id] ?? StationNames(settings: settingsById[id])).said(number)
    }

    /// A fault event in the time window, by what failed (`click-failed`, `sensor stuck at
    /// station East (2)`: its source reads that from the event's detail).
    public mutating func addFault(sessionId: String?, named name: String) {
        closeTrials()
        if let sessionId, let i = index[sessionId] {
            sessions[i].faults += 1
        } else if sessionId == nil && filter.dogId == nil && filter.sessionId == nil {
            faultsOutside += 1
        } else {
            return
        }
        faults[name, default: 0] += 1
    }

    /// A milestone, oldest first (then by id).
    public mutating func addMilestone(
        dogId: String, sessionId: String?, phase: String, step: String?, criterion: String?, wallNs: Int64
    ) {
        if let dog = filter.dogId, dog != dogId { return }
        if filter.sessionId != nil && sessionId != filter.sessionId { return }
        milestones[dogId, default: []].append(
            ReportMilestone(
                sessionId: sessionId, phase: phase, step: step, criterion: criterion,
                time: iso.string(wallNs: wallNs)))
    }

    /// The report, with every sample of the registry (`samples`) for labels and details.
    public mutating func finish(samples registry: [SampleRow], generatedWallNs: Int64) -> ReportData {
        closeTrials()
        // Stations and cells that no trial reached stay out (a tally with no trial).
        func stations(_ d: Int) -> [NamedStation: Tally] {
            var out: [NamedStation: Tally] = [:]
            for (n, tally) in stationTallies[d].enumerated() where tally.results.trials > 0 {
                out[slotStations[n]] = tally
            }
            return out
        }
        func positions(_ d: Int) -> [PositionKey: Tally] {
            var out: [PositionKey: Tally] = [:]
            for (target, row) in positionTallies[d].enumerated() {
                for (n, tally) in row.enumerated() where tally.results.trials > 0 {
                    out[PositionKey(target: target == 0 ? nil : slotStations[target - 1], station: slotStations[n])] =
                        tally
                }
            }
            return out
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

        var labels: [String: String] = [:]
        var details: [String: SampleRegistryDetails] = [:]
        for row in registry {
            labels[row.id] = row.label
            details[row.id] = SampleRegistryDetails(kind: SampleKind(rawValue: row.kind) ?? .blank, facts: row.facts)
        }
        var data = ReportData(
            sessions: sessions, dogs: dogs, samples: Self.reportSamples(samples, labels: labels), faults: faults,
            faultsOutsideSessions: faultsOutside, trials: trials, generated: iso.string(wallNs: generatedWallNs))
        // The figures `stats --familiar-novel` and `stats --sources` give, for the report's dogs.
        for row in familiarNovel.rows { data.familiarNovel[row.dogId] = row }
        for row in confound.rows(details: details) { data.confound[row.dogId, default: []].append(row) }
        return data
    }
}

extension ReportAssembly {
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

    /// Samples with their rates, and each judged against the rest of its kind (`SampleFlag`).
    static func reportSamples(_ tallies: [String: (kind: SampleKind, tally: Tally)], labels: [String: String])
        -> [ReportSample]
    {
        let flags = SampleFlag.judge(tallies.map { ($0.key, $0.value.kind, $0.value.tally.figures) })
        let samples = tallies.map { id, entry -> ReportSample in
            let f = entry.tally.figures
            let rate: Proportion? =
                switch entry.kind {
                case .target: f.sensitivity
                case .control, .distractor: f.falseAlertRate
                case .blank: nil
                }
            return ReportSample(
                id: id, label: labels[id] ?? id, kind: entry.kind, tally: entry.tally, rate: rate, flag: flags[id])
        }
        func family(_ kind: SampleKind) -> Int { kind == .target ? 0 : (kind == .blank ? 2 : 1) }
        // The id last: two stations' samples may share a label in the lab store.
        return samples.sorted { (family($0.kind), $0.label, $0.id) < (family($1.kind), $1.label, $1.id) }
    }
}
