import Figures
import Foundation
import GRDB
import ReadingRows
import Rescoring

/// What `lineupctl verify-scoring` finds in one session (docs/figures.md, "How the re-scorer
/// decides").
public struct ScoringVerification: Sendable, Hashable {
    public var session: String
    /// Why the session cannot be rescored (nil: it was); the disagreements are then empty.
    public var notRescored: String?
    /// Trials the log scored (the station's own rows, not corrections).
    public var trials: Int
    public var disagreements: [Disagreement]
}

extension LogReader {
    /// Every session's id, oldest first: what `verify-scoring` with no session checks.
    public func sessionIds() throws -> [String] {
        try read { db in try String.fetchAll(db, sql: "SELECT id FROM session ORDER BY wall_ns, id") }
    }

    /// Rescores `session` from its logged rows by the independent re-scorer and names every
    /// trial where it and the log disagree.
    public func verifyScoring(session: String) throws -> ScoringVerification {
        if try !withheldSessions(LogFilter(sessionId: session)).isEmpty {
            return ScoringVerification(
                session: session,
                notRescored: "a double-blind session still running: its trials are withheld until it ends",
                trials: 0, disagreements: [])
        }
        let logged = try loggedForRescoring(session: session)
        switch logged {
        case .failure(let why):
            return ScoringVerification(session: session, notRescored: why.reason, trials: 0, disagreements: [])
        case .success(let s):
            return ScoringVerification(
                session: session, notRescored: nil, trials: s.trials.count, disagreements: Rescorer.verify(s))
        }
    }

    struct NotRescorable: Error {
        var reason: String
    }

    /// The session's rows as the re-scorer reads them: its rules from the settings, its trials
    /// as the station wrote them (corrections are a person's, not the station's scoring), and
    /// its events in the order the station wrote them.
    func loggedForRescoring(session: String) throws -> Result<LoggedSession, NotRescorable> {
        try read { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT mode, settings, mono_ns FROM session WHERE id = ?", arguments: [session])
            else { throw SessionLogError.unknownSession(session) }
            let settings = (row["settings"] as String?).flatMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            if settings?["fast"] as? String == "true" {
                return .failure(NotRescorable(reason: "logged by lineupd --fast, with no raw events"))
            }
            func number(_ key: String) -> Int64? { (settings?[key] as? String).flatMap { Int64($0) } }
            guard let mode = ScoringRules.Mode(rawValue: row["mode"] as String? ?? ""),
                let hold = number("hold_ns"), let tolerance = number("hold_tolerance_ns"),
                let timeout = number("search_timeout_ns"), let round = number("round_ns"),
                let stuck = number("stuck_after_ns"), let end = settings?["end_on_false_alert"] as? String
            else {
                return .failure(
                    NotRescorable(reason: "its settings lack the step's rules (logged before lineup recorded them)"))
            }
            let rules = ScoringRules(
                mode: mode, hold: hold, holdTolerance: tolerance, searchTimeout: timeout, roundLength: round,
                endOnFalseAlert: end == "true", stuckAfter: stuck, debounce: number("debounce_ns") ?? 0)

            var trials: [TrialAsLogged] = []
            for t in try Row.fetchAll(
                db,
                sql: """
                    SELECT id, number, outcome, indicated_station, started_mono_ns, mono_ns FROM trial
                    WHERE session_id = ? AND corrects IS NULL ORDER BY number
                    """, arguments: [session])
            {
                let id: String = t["id"]
                var stations: [Int] = []
                var target: Int? = nil
                var indicated: Set<Int> = []
                var known = true
                for s in try Row.fetchAll(
                    db, sql: "SELECT station, kind, indicated FROM trial_station WHERE trial_id = ? ORDER BY station",
                    arguments: [id])
                {
                    let station: Int = s["station"]
                    stations.append(station)
                    if s["kind"] as String == "target" { target = station }
                    switch s["indicated"] as Int? {
                    case 1?: indicated.insert(station)
                    case nil: known = false
                    default: break
                    }
                }
                guard let outcome = Verdict(rawValue: t["outcome"]) else { continue }
                trials.append(
                    TrialAsLogged(
                        number: t["number"], startedAt: t["started_mono_ns"], endedAt: t["mono_ns"],
                        stations: stations, target: target, outcome: outcome, indicatedStation: t["indicated_station"],
                        indicated: known ? indicated : nil))
            }

            // A station active before the session started: the station primes its engine with
            // it as the session starts.
            let sessionStart: Int64 = row["mono_ns"]
            var inputs: [LoggedInput] = []
            let first = try Int64.fetchOne(
                db, sql: "SELECT min(seq) FROM event WHERE session_id = ?", arguments: [session])
            if let first {
                // Each station's last level before the session (backwards from it: cheap).
                for station in Set(trials.flatMap(\.stations)).sorted() {
                    let value = try Int64.fetchOne(
                        db,
                        sql: """
                            SELECT value FROM event WHERE seq < ? AND station = ?
                                AND ((kind = 'edge' AND (detail IS NULL OR detail NOT LIKE '%"chatter"%'))
                                    OR (kind = 'note' AND detail LIKE '%"settled"%'))
                            ORDER BY seq DESC LIMIT 1
                            """, arguments: [first, station])
                    if value == 1 { inputs.append(.level(station: station, active: true, at: sessionStart)) }
                }
            }
            var eventStations = Set<Int>()
            for e in try Row.fetchAll(
                db,
                sql: """
                    SELECT kind, station, mono_ns, value, detail FROM event WHERE session_id = ? ORDER BY seq
                    """, arguments: [session])
            {
                let kind: String = e["kind"]
                let station: Int? = e["station"]
                if let station { eventStations.insert(station) }
                let at: Int64 = e["mono_ns"]
                let detail = (e["detail"] as String?).flatMap {
                    try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
                }
                switch kind {
                case "edge":
                    // A raw edge the debouncer passed (not marked chatter).
                    guard let station, detail?["chatter"] == nil else { continue }
                    let known = (detail?["known_ns"] as? NSNumber)?.int64Value
                    inputs.append(.level(station: station, active: (e["value"] as Int64?) == 1, at: at, known: known))
                case "note":
                    if detail?["manual_click"] != nil {
                        inputs.append(.press(click: true, station: station, at: at))
                    } else if detail?["error_mark"] != nil {
                        inputs.append(.press(click: false, station: station, at: at))
                    } else if detail?["settled"] != nil, let station, detail?["button"] == nil {
                        let known = (detail?["known_ns"] as? NSNumber)?.int64Value
                        inputs.append(
                            .settled(station: station, active: (e["value"] as Int64?) == 1, at: at, known: known))
                    } else if detail?["sensor"] as? String == "recovered", let station {
                        inputs.append(.recovered(station: station, at: at))
                    } else if detail?["resumed"] as? Bool == true {
                        // The levels lineupd went on from (none given: none active).
                        let on = (detail?["active"] as? [NSNumber] ?? []).map(\.intValue)
                        inputs.append(.resumed(active: Set(on), at: at))
                    }
                case "cue":
                    let cue = detail?["cue"] as? String
                    if cue == "trial-start" || cue == "exercise-start" { inputs.append(.start(at: at)) }
                case "fault":
                    guard let station else { continue }
                    switch detail?["sensor"] as? String {
                    case "stuck": inputs.append(.stuck(station: station, at: at))
                    case "chatter": inputs.append(.chatter(station: station, at: at))
                    default: break
                    }
                case "indication":
                    if let station { inputs.append(.indication(station: station, at: at)) }
                default:
                    continue
                }
            }
            if inputs.isEmpty && !trials.isEmpty {
                return .failure(NotRescorable(reason: "no raw events logged for it"))
            }
            var logged = LoggedSession(session: session, rules: rules, inputs: inputs, trials: trials)
            // Its stations by name (`StationNames`, from its settings and a trial's layout).
            let names =
                trials.first.map { StationNames(settings: row["settings"], numbers: $0.stations) }
                ?? StationNames(settings: row["settings"])
            for number in Set(trials.flatMap(\.stations)).union(eventStations) {
                logged.stationNames[number] = names.name(number)
            }
            logged.procedure = try Self.loggedProcedure(db, session: session, settings: settings ?? [:])
            return .success(logged)
        }
    }
}
