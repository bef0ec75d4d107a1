// The second scoring: every trial of a session decided again from the log's debounced levels,
// presses and the step's rules, written from the rules in docs/figures.md ("How the re-scorer
// decides") and not from the engine's code. It walks the log's rows in order, with its own
// timers for the hold, the hold's tolerance, the search's time-out and the round's end.

/// A trial as the re-scorer decided it.
public struct RescoredTrial: Sendable, Hashable {
    public var startedAt: Int64
    /// Nil when the log started another trial (or ended) before the re-scorer's ended.
    public var endedAt: Int64?
    public var outcome: Verdict?
    public var indicatedStation: Int?
    public var indicated: Set<Int>
    public var indications: [Sighting]
}

/// A station at a time: an indication, or where a press was.
public struct Sighting: Sendable, Hashable {
    public var station: Int
    public var at: Int64
}

public enum Rescorer {
    /// Every disagreement between the log and the re-scorer in `session`, in trial order.
    public static func verify(_ session: LoggedSession) -> [Disagreement] {
        var walk = Walk(session)
        walk.run()
        var out = walk.compare()
        if let procedure = session.procedure {
            // The procedure's answers are the re-scorer's outcomes, each trial matched by its start.
            let rescored = Dictionary(walk.done.map { ($0.startedAt, $0.outcome) }, uniquingKeysWith: { a, _ in a })
            var outcomes: [Int: Verdict?] = [:]
            var targets: [Int: Int?] = [:]
            for row in session.trials {
                outcomes[row.number] = row.outcome == .aborted ? .aborted : rescored[row.startedAt] ?? nil
                targets[row.number] = row.target
            }
            out += checkProcedure(procedure, session: session.session, outcomes: outcomes, targets: targets)
        }
        return out
    }

    /// The re-scorer's trials, by their start.
    public static func rescore(_ session: LoggedSession) -> [RescoredTrial] {
        var walk = Walk(session)
        walk.run()
        return walk.done
    }
}

/// The nose's visit at one station: present, or in a break since `leftAt`.
private struct Visit {
    var station: Int
    var from: Int64
    var present = true
    var leftAt: Int64 = 0
    var held = false
}

private struct Running {
    var row: TrialAsLogged?
    var startedAt: Int64
    var deadline: Int64
    var abortAt: Int64?
    var target: Int?
    var trainerLed: Bool
    var indications: [Sighting] = []
    var indicated: Set<Int> = []
    var first: Int? = nil
    /// Indications away from the target (a search), or presses judging one (a round).
    var wrong = 0
    /// A round's error presses at the target or at no station.
    var notRight = 0
}

private struct Walk {
    let session: LoggedSession
    let rules: ScoringRules
    /// The step's stations (the engine sees no other) and their order, for ties.
    let stations: [Int: Int]
    let rowsByStart: [Int64: TrialAsLogged]
    var chatterAt: Set<Sighting> = []
    var recoveredAt: Set<Sighting> = []

    var active: [Int: Int64] = [:]  // station: active since
    /// Each station's last level taken (an edge passed or a level settled): the debounce
    /// window it opened ends a debounce later.
    var lastLevelAt: [Int: Int64] = [:]
    var stuck: Set<Int> = []
    var storm: Set<Int> = []
    var visit: Visit? = nil
    var running: Running? = nil
    var done: [RescoredTrial] = []
    var loggedIndications: [Int64: [Sighting]] = [:]
    var lastStart: Int64? = nil
    /// The latest decision of the station's own logged in the running trial (its start, a stuck
    /// station, an indication): a trial cut short is known only so far (`resumed`).
    var decidedAt: Int64? = nil
    /// Trials cut short (by their start): the last decision the station logged in each.
    var knownUntil: [Int64: Int64] = [:]
    var presses: [(logged: Int?, rescored: Int?, trial: Int?, at: Int64)] = []

    init(_ session: LoggedSession) {
        self.session = session
        rules = session.rules
        var order: [Int: Int] = [:]
        for trial in session.trials {
            for s in trial.stations where order[s] == nil { order[s] = order.count }
        }
        stations = order
        var rows: [Int64: TrialAsLogged] = [:]
        for trial in session.trials where rows[trial.startedAt] == nil { rows[trial.startedAt] = trial }
        rowsByStart = rows
        for input in session.inputs {
            switch input {
            case .chatter(let s, let at): chatterAt.insert(Sighting(station: s, at: at))
            case .recovered(let s, let at): recoveredAt.insert(Sighting(station: s, at: at))
            default: break
            }
        }
    }

    mutating func run() {
        for input in session.inputs {
            switch input {
            case .level(let s, let on, let at, let known):
                // Read late: what the station had decided by then was decided without it.
                advance(to: max(at, known ?? at))
                level(s, on, at)
                lastLevelAt[s] = at
            case .settled(let s, let on, let at, let known):
                // Known when the window closes (or later, when the station settled it late): what
                // fell due by then (at that instant too) was decided on the level before; the
                // level's own time stays the edge's.
                advance(to: max(at, (lastLevelAt[s] ?? at) &+ rules.debounce, known ?? at))
                level(s, on, at)
                lastLevelAt[s] = at
            case .press(let click, let logged, let at):
                advance(to: at)
                press(click: click, logged: logged, at: at)
            case .start(let at):
                advance(to: at)
                start(at)
                decidedAt = at
            case .stuck(let s, let at):
                // Flagged by the station's timer before a hold or an end due at the same time.
                advance(to: at &- 1)
                decidedAt = max(decidedAt ?? at, at)
                guard stations[s] != nil else { break }
                stuck.insert(s)
                if visit?.station == s { visit = nil }
            case .indication(let s, let at):
                // The station logs indications only while a trial runs: the last one started.
                if let last = lastStart { loggedIndications[last, default: []].append(Sighting(station: s, at: at)) }
                decidedAt = max(decidedAt ?? at, at)
            case .resumed(let on, let at):
                // Another run of lineupd (perhaps another boot: `at` is its clock): the trial cut
                // short ends at its logged end, on its own run's clock (what fell due by then
                // stands), and nothing else of that run carries over but what the resume read.
                if let end = running?.row?.endedAt { advance(to: end) }
                // Its indications are compared up to the station's last decision logged in it
                // (`compare`): a raw edge and the decision it brought due (a hold ending before
                // the nose's fall) can reach the disk in two commits, and a power cut between
                // them (the emulated tier's power-cut run at d2af5cc) left the edge and not the
                // indication.
                if let last = lastStart, let decided = decidedAt { knownUntil[last] = decided }
                if let r = running { end(r, outcome: nil, at: nil) }
                active = Dictionary(uniqueKeysWithValues: on.map { ($0, at) })
                lastLevelAt = [:]
                stuck = []
                storm = []
                visit = nil
                lastStart = nil
            case .chatter, .recovered:
                break  // taken at their edge (read ahead in `init`)
            }
        }
        advance(to: .max)
        if let r = running { end(r, outcome: nil, at: nil) }
    }

    // MARK: Time

    /// Fires every timer due at or before `t`, earliest first; at one time the visit's before
    /// the search's or round's end, and that before an abort.
    mutating func advance(to t: Int64) {
        while running != nil {
            var next: Int64 = .max
            var which = 0
            if let v = visit {
                let at = v.present ? (v.held ? Int64.max : v.from &+ rules.hold) : v.leftAt &+ rules.holdTolerance
                if at < next { (next, which) = (at, 1) }
            }
            if let r = running {
                if r.deadline < next { (next, which) = (r.deadline, 2) }
                if let a = r.abortAt, a < next { (next, which) = (a, 3) }
            }
            guard next <= t, next != .max else { return }
            switch which {
            case 1:
                if var v = visit, v.present {
                    v.held = true
                    visit = v
                    indicated(v.station, at: next)
                } else {
                    visit = nil  // the break outlasted the tolerance: the visit is over
                }
            case 2:
                if let r = running { end(r, outcome: verdictAtEnd(r), at: next) }
            default:
                if let r = running { end(r, outcome: .aborted, at: next) }
            }
        }
    }

    func verdictAtEnd(_ r: Running) -> Verdict {
        if r.trainerLed {
            if r.wrong > 0 { return .falseAlert }
            if r.notRight > 0 { return r.target == nil ? .falseAlert : .miss }
            if let target = r.target, r.indicated.contains(target) { return .hit }
            return r.target == nil ? .correctRejection : .miss
        }
        if r.wrong > 0 { return .falseAlert }
        return r.target == nil ? .correctRejection : .miss
    }

    mutating func end(_ r: Running, outcome: Verdict?, at: Int64?) {
        done.append(
            RescoredTrial(
                startedAt: r.startedAt, endedAt: at, outcome: outcome, indicatedStation: r.first,
                indicated: r.indicated, indications: r.indications))
        running = nil
        visit = nil
    }

    // MARK: Inputs

    mutating func start(_ t: Int64) {
        if let r = running { end(r, outcome: nil, at: nil) }
        lastStart = t
        let row = rowsByStart[t]
        let trainerLed = rules.mode == .trainerLed
        let r = Running(
            row: row, startedAt: t, deadline: t &+ (trainerLed ? rules.roundLength : rules.searchTimeout),
            abortAt: row?.outcome == .aborted ? row?.endedAt : nil, target: row?.target, trainerLed: trainerLed)
        // The sensors' state is part of the trial: a station active for the stuck time is
        // stuck; of the others, the nose is at the one active longest, from the start.
        if rules.stuckAfter > 0 {
            for (s, since) in active where stations[s] != nil && t &- since >= rules.stuckAfter { stuck.insert(s) }
        }
        var nose: (station: Int, since: Int64, order: Int)? = nil
        for (s, since) in active {
            guard let order = stations[s], !stuck.contains(s), !storm.contains(s) else { continue }
            if nose == nil || since < nose!.since || (since == nose!.since && order < nose!.order) {
                nose = (s, since, order)
            }
        }
        running = r
        visit = nose.map { Visit(station: $0.station, from: t) }
    }

    mutating func level(_ s: Int, _ on: Bool, _ t: Int64) {
        guard stations[s] != nil else { return }  // a station the step does not use
        let mark = Sighting(station: s, at: t)
        if storm.contains(s) {
            if recoveredAt.contains(mark) {
                storm.remove(s)  // quiet long enough: this edge is the dog's again
            } else {
                follow(s, on, t)
                return
            }
        } else if chatterAt.contains(mark) {
            // The edge that made it a storm: the level is followed (its since kept), the visit
            // there is over, and the nose is given back to the trusted station active longest.
            storm.insert(s)
            follow(s, on, t)
            guard running != nil else { return }
            if visit?.station == s { visit = nil }
            var nose: (station: Int, since: Int64, order: Int)? = nil
            for (o, since) in active where o != s {
                guard let order = stations[o], !stuck.contains(o), !storm.contains(o) else { continue }
                if nose == nil || since < nose!.since || (since == nose!.since && order < nose!.order) {
                    nose = (o, since, order)
                }
            }
            if let nose, visit?.present != true { arrive(nose.station, at: nose.since) }
            return
        }
        if on {
            if active[s] == nil { active[s] = t }
            if stuck.contains(s) { return }  // a stuck sensor's edges are not the dog's
        } else {
            active[s] = nil
            if stuck.contains(s) {
                stuck.remove(s)  // released: trusted again, and not a departure
                return
            }
        }
        guard running != nil else { return }
        if on { arrive(s, at: t) } else { leave(s, at: t) }
    }

    /// A stormy station's level, kept so a start sees it (active since its first edge up).
    mutating func follow(_ s: Int, _ on: Bool, _ t: Int64) {
        if on {
            if active[s] == nil { active[s] = t }
        } else {
            active[s] = nil
        }
    }

    mutating func arrive(_ s: Int, at t: Int64) {
        if var v = visit, v.station == s {
            if v.present { return }  // already there
            if t >= v.leftAt && t &- v.leftAt < rules.holdTolerance {
                // Back within the tolerance: the same visit, and its hold may be complete.
                v.present = true
                let completes = !v.held && t &- v.from >= rules.hold
                if completes { v.held = true }
                visit = v
                if completes { indicated(s, at: t) }
                return
            }
        }
        visit = Visit(station: s, from: t)
    }

    mutating func leave(_ s: Int, at t: Int64) {
        guard var v = visit, v.station == s, v.present else { return }
        let completes = !v.held && t &- v.from >= rules.hold
        if completes { v.held = true }
        v.present = false
        v.leftAt = t
        visit = v
        if completes { indicated(s, at: v.from &+ rules.hold) }
    }

    /// A hold reached T at `s`.
    mutating func indicated(_ s: Int, at t: Int64) {
        guard var r = running else { return }
        r.indications.append(Sighting(station: s, at: t))
        if r.trainerLed {
            running = r  // a round's holds are data; the trainer judges
            return
        }
        r.indicated.insert(s)
        if r.first == nil { r.first = s }
        if s == r.target {
            end(r, outcome: r.wrong > 0 ? .falseAlert : .hit, at: t)
            return
        }
        r.wrong += 1
        if rules.endOnFalseAlert {
            end(r, outcome: .falseAlert, at: t)
            return
        }
        running = r
    }

    mutating func press(click: Bool, logged: Int?, at t: Int64) {
        let nose = running != nil && visit?.present == true ? visit?.station : nil
        presses.append((logged, nose, running?.row?.number, t))
        guard var r = running, r.trainerLed else { return }
        func judge(_ s: Int) {
            r.indicated.insert(s)
            if r.first == nil { r.first = s }
        }
        if click {
            if let nose {
                judge(nose)
                if nose != r.target { r.wrong += 1 }
            } else if let target = r.target {
                judge(target)  // the trainer saw what no sensor sees
            } else {
                r.wrong += 1
            }
        } else if let nose, nose != r.target {
            judge(nose)
            r.wrong += 1
        } else {
            r.notRight += 1
        }
        running = r
    }

    // MARK: Comparing

    func compare() -> [Disagreement] {
        var out: [Disagreement] = []
        let rescored = Dictionary(done.map { ($0.startedAt, $0) }, uniquingKeysWith: { first, _ in first })
        func say(_ trial: Int?, _ what: String, _ log: String, _ ours: String) {
            out.append(
                Disagreement(session: session.session, trial: trial, what: what, logSays: log, rescorerSays: ours))
        }
        for row in session.trials.sorted(by: { $0.number < $1.number }) {
            guard var r = rescored[row.startedAt] else {
                // An aborted trial that never started (its start refused) has no start to rescore.
                if row.outcome != .aborted { say(row.number, "start", "it started", "no start cue in the log") }
                continue
            }
            if row.outcome != .aborted {
                let ours = r.outcome?.rawValue ?? "still running"
                if row.outcome != r.outcome { say(row.number, "outcome", row.outcome.rawValue, ours) }
                if let end = r.endedAt, end != row.endedAt {
                    say(row.number, "end", seconds(row.endedAt - row.startedAt), seconds(end - r.startedAt))
                }
            }
            if row.outcome == .aborted, !r.indications.isEmpty, rules.mode != .trainerLed,
                let until = knownUntil[row.startedAt]
            {
                // Cut short: what the station could have logged by its last logged decision.
                r.indications = r.indications.filter { $0.at <= until }
                r.indicated = Set(r.indications.map(\.station))
                r.indicatedStation = r.indications.first?.station
            }
            if row.indicatedStation != r.indicatedStation {
                say(row.number, "indicated station", name(row.indicatedStation), name(r.indicatedStation))
            }
            if let logged = row.indicated, logged != r.indicated {
                say(row.number, "indicated stations", names(logged), names(r.indicated))
            }
            let logged = loggedIndications[row.startedAt] ?? []
            if logged != r.indications {
                say(
                    row.number, "indications", sightings(logged, from: row.startedAt),
                    sightings(r.indications, from: row.startedAt))
            }
        }
        for p in presses where p.logged != p.rescored {
            say(
                p.trial, "press at \(seconds(p.at - (rowStart(p.trial) ?? p.at))) attributed to", name(p.logged),
                name(p.rescored))
        }
        return out
    }

    func rowStart(_ number: Int?) -> Int64? {
        guard let number else { return nil }
        return session.trials.first { $0.number == number }?.startedAt
    }

    /// A station as a person reads it: its board's name with the log's number, `B (2)`.
    func said(_ s: Int) -> String { session.stationNames[s].map { "\($0) (\(s))" } ?? "\(s)" }
    func name(_ s: Int?) -> String { s.map { "station \(said($0))" } ?? "no station" }
    func names(_ s: Set<Int>) -> String { s.isEmpty ? "none" : s.sorted().map(said).joined(separator: ",") }
    func seconds(_ ns: Int64) -> String {
        let ms = ns / 1_000_000
        return "\(ms / 1000).\(String(repeating: "0", count: 3 - String(abs(ms % 1000)).count))\(abs(ms % 1000)) s"
    }
    func sightings(_ list: [Sighting], from start: Int64) -> String {
        list.isEmpty ? "none" : list.map { "\(said($0.station)) at \(seconds($0.at - start))" }.joined(separator: ", ")
    }
}
