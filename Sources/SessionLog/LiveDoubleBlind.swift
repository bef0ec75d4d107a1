import Figures
import Foundation
import GRDB
import ReadingRows
import TrainingEngine

/// While a double-blind session runs, the log already holds what would unblind its handler:
/// the block's seed (in the session's settings and on each trial), every finished trial's
/// layout and outcome, the running trial's events, the handler's guesses. A reader opened with
/// `SessionLog.openReader` (every `lineupctl` reading command, the page, the report, the
/// exports, `stats`) sees none of it until the session has ended: on that connection TEMP
/// views of the same names stand in front of the log's tables (SQLite looks in `temp` first)
/// and leave the running double-blind session out, its row with its settings and seed, its
/// trials, layouts, openings, guesses, events, notes and milestones. The log's own views
/// (`trial_current`, ...) are made again in `temp` from their stored SQL, so they read through
/// the same filter; every query is unchanged. One definition of "running double-blind": mode
/// `double-blind` and no `session_end` row (a session cut off by a crash is ended
/// `interrupted` by the next lineupd, and then shows, unless that lineupd keeps it to be
/// resumed: it is still running), while a lineupd holds the log's lock
/// (`LogLock`): with no lineupd on the log nothing is running, and a session whose end never
/// reached the log (a full disk, a crash) shows as it stands.
///
/// What is withheld is said, never passed over: `LogReader.withheldSessions(_:)` names the
/// sessions a reading leaves out (every listing says so in a line), and a reading of one such
/// session (`session show`, `verify-blinding`, `--session`) is refused with
/// `SessionLogError.withheld`, naming it and when it is readable.
///
/// This is what the tools show; the file itself is readable by the station's group (see
/// docs/session-log.md, "What the log's permissions protect").
enum LiveDoubleBlind {
    /// The running double-blind sessions, as the views below leave them out.
    static let hidden = "(SELECT id FROM temp.live_double_blind)"

    /// Each of the log's tables that holds a fact of a session: the fact its rows give (the one
    /// rule, `Visibility`, says whether a reader of the log sees it while the session runs) and
    /// which of its rows to keep when it does not. A table with no fact of a session (dogs,
    /// samples, the registry) is read as it is.
    static let tables: [(name: String, fact: SessionFact, keep: String)] = [
        // Its settings hold the seed.
        ("session", .seed, "id NOT IN \(hidden)"),
        ("trial", .outcome, "session_id NOT IN \(hidden)"),
        (
            "trial_station", .layout,
            "trial_id NOT IN (SELECT t.id FROM main.trial t WHERE t.session_id IN \(hidden))"
        ),
        ("event", .searchEvent, "session_id IS NULL OR session_id NOT IN \(hidden)"),
        // The salt opens a trial's commitment to its layout.
        ("layout_opening", .layout, "session_id NOT IN \(hidden)"),
        ("handler_guess", .guess, "session_id NOT IN \(hidden)"),
        ("session_note", .note, "session_id NOT IN \(hidden)"),
        // A step passed says how its trials went.
        ("milestone", .outcome, "session_id IS NULL OR session_id NOT IN \(hidden)"),
    ]

    static func withhold(_ db: Database, logPath: String) throws {
        // Not a log (the schema check refuses it next), or no lineupd on it: nothing to withhold.
        let present = try Set(String.fetchAll(db, sql: "SELECT name FROM main.sqlite_master WHERE type = 'table'"))
        let needed = Set(tables.map(\.name) + ["session_end"])
        guard needed.isSubset(of: present), LogLock.isHeld(logPath: logPath) else { return }
        var sql = """
            CREATE TEMP VIEW live_double_blind AS
                SELECT s.id FROM main.session s WHERE s.mode = 'double-blind'
                AND NOT EXISTS (SELECT 1 FROM main.session_end e WHERE e.session_id = s.id);

            """
        for table in tables where !Visibility.shows(table.fact, to: .researcher, in: .doubleBlindRunning) {
            sql += "CREATE TEMP VIEW \(table.name) AS SELECT * FROM main.\(table.name) WHERE \(table.keep);\n"
        }
        try db.execute(sql: sql)
        for (name, sql) in try Row.fetchAll(db, sql: "SELECT name, sql FROM main.sqlite_master WHERE type = 'view'")
            .map({ ($0["name"] as String, $0["sql"] as String) })
        {
            guard let range = sql.range(of: "CREATE VIEW", options: [.caseInsensitive, .anchored]) else {
                throw SessionLogError.database("the log's view \(name) is not a plain CREATE VIEW")
            }
            try db.execute(sql: sql.replacingCharacters(in: range, with: "CREATE TEMP VIEW"))
        }
    }

    /// The running double-blind sessions this connection withholds (none on a connection that
    /// withholds nothing: lineupd's own, lineup-sync's).
    static func sessions(_ db: Database, _ filter: LogFilter = LogFilter()) throws -> [WithheldSession] {
        guard
            try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_temp_master WHERE name = 'live_double_blind')") == true,
            filter.trialId == nil
        else { return [] }
        var arguments: [DatabaseValue] = [
            filter.dogId.databaseValue, filter.sessionId.databaseValue, filter.until.databaseValue,
        ]
        arguments += filter.sessionArguments
        var iso = ISOTimeFormatter()
        return try Row.fetchAll(
            db,
            sql: """
                SELECT s.id, d.name AS dog, s.wall_ns, s.phase, s.step, s.settings
                FROM main.session s JOIN main.dog d ON d.id = s.dog_id
                WHERE s.id IN (SELECT id FROM temp.live_double_blind)
                AND (?1 IS NULL OR s.dog_id = ?1) AND (?2 IS NULL OR s.id = ?2) AND (?3 IS NULL OR s.wall_ns < ?3)
                AND \(filter.sessionCondition(from: 4))
                ORDER BY s.wall_ns, s.id
                """, arguments: StatementArguments(arguments)
        ).map { row in
            let settings = (row["settings"] as String?).flatMap { $0.data(using: .utf8) }
                .flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
            let samples = (settings?["samples"] as? String)?.split(separator: ",").map(String.init) ?? []
            let phase: String? = row["phase"]
            let step: String? = row["step"]
            return WithheldSession(
                id: row["id"], dog: row["dog"],
                started: String(iso.string(wallNs: row["wall_ns"]).prefix(16))
                    .replacingOccurrences(of: "T", with: " "),
                step: phase.map { p in step.map { "\(p)/\($0)" } ?? p }, samples: samples)
        }
    }

    /// Refuses a reading of one session that this connection withholds.
    static func refuse(_ db: Database, session id: String) throws {
        if let withheld = try sessions(db, LogFilter(sessionId: id)).first { throw SessionLogError.withheld(withheld) }
    }
}

/// A running double-blind session that a reader leaves out until it ends: which one (its id,
/// dog, start and step, nothing of its layouts, outcomes or seed), so what is withheld is said.
public struct WithheldSession: Sendable, Codable, Hashable {
    public var id: String
    public var dog: String
    /// When it started, to the minute, in the station's time zone.
    public var started: String
    /// `phase/step`, as `session start` took it.
    public var step: String?
    /// The samples it was started with, as named then (labels or ids): their uses in it are withheld.
    public var samples: [String]

    /// Whether the session was started with the sample (by its label, id or id prefix, as
    /// `session start --sample` takes them).
    public func uses(sample id: String, label: String) -> Bool {
        samples.contains { $0 == label || (!$0.isEmpty && id.hasPrefix($0.lowercased())) }
    }

    /// `a double-blind session is running (session 3f2a9c1e, Rex, phase-3/1, started 2026-05-01 14:30):
    /// WHAT withheld until it ends`: the one sentence every surface says it with. `what` carries
    /// its verb ("its trials are").
    public static func sentence(_ sessions: [WithheldSession], _ what: String) -> String {
        let named = sessions.map { s in
            "session \(s.id.prefix(8)), \(s.dog)\(s.step.map { ", \($0)" } ?? ""), started \(s.started)"
        }.joined(separator: "; ")
        let running =
            sessions.count == 1
            ? "a double-blind session is running (\(named))"
            : "\(sessions.count) double-blind sessions are running (\(named))"
        return "\(running): \(what) withheld until it ends"
    }
}

extension LogReader {
    /// The running double-blind sessions this reader leaves out of a reading with `filter`
    /// (its dog, session, mode, program, step, handler, and those started before `until`), so
    /// the reading can say so. Empty when nothing is withheld.
    public func withheldSessions(_ filter: LogFilter = LogFilter()) throws -> [WithheldSession] {
        try read { db in try LiveDoubleBlind.sessions(db, filter) }
    }
}
