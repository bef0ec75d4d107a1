import GRDB

/// While a double-blind session runs, the log already holds what would unblind its handler:
/// the block's seed (in the session's settings and on each trial), every finished trial's
/// layout and outcome, the running trial's events. A reader opened with `SessionLog.openReader`
/// (every `lineupctl` reading command, the page, the report, the exports, `stats`) sees none
/// of it until the session has ended: on that connection TEMP views of the same names stand
/// in front of the log's tables (SQLite looks in `temp` first) and leave out the running
/// double-blind session's trials, layouts, openings, guesses and events, and the seed of its
/// settings. The log's own views (`trial_current`, ...) are made again in `temp` from their
/// stored SQL, so they read through the same filter; every query is unchanged. One definition
/// of "running double-blind": mode `double-blind` and no `session_end` row (a session cut off
/// by a crash is ended `interrupted` by the next lineupd, and then shows), while a lineupd
/// holds the log's lock (`LogLock`): with no lineupd on the log nothing is running, and a
/// session whose end never reached the log (a full disk, a crash) shows as it stands.
///
/// This is what the tools show; the file itself is readable by the station's group (see
/// docs/session-log.md, "What the log's permissions protect").
enum LiveDoubleBlind {
    static func withhold(_ db: Database, logPath: String) throws {
        // Not a log (the schema check refuses it next), or no lineupd on it: nothing to withhold.
        let tables = try Set(String.fetchAll(db, sql: "SELECT name FROM main.sqlite_master WHERE type = 'table'"))
        let needed: Set = [
            "session", "session_end", "trial", "trial_station", "event", "layout_opening", "handler_guess",
        ]
        guard needed.isSubset(of: tables), LogLock.isHeld(logPath: logPath) else { return }
        let hidden = "(SELECT id FROM temp.live_double_blind)"
        let sessionColumns = try Row.fetchAll(db, sql: "PRAGMA main.table_info(session)").map { $0["name"] as String }
        let sessionSelect = sessionColumns.map { column in
            column == "settings"
                ? """
                CASE WHEN id IN \(hidden) THEN
                    CASE WHEN json_valid(settings) THEN json_remove(settings, '$.seed') END
                ELSE settings END AS settings
                """
                : "\"\(column)\""
        }.joined(separator: ", ")
        try db.execute(
            sql: """
                CREATE TEMP VIEW live_double_blind AS
                    SELECT s.id FROM main.session s WHERE s.mode = 'double-blind'
                    AND NOT EXISTS (SELECT 1 FROM main.session_end e WHERE e.session_id = s.id);
                CREATE TEMP VIEW session AS SELECT \(sessionSelect) FROM main.session;
                CREATE TEMP VIEW trial AS
                    SELECT * FROM main.trial WHERE session_id NOT IN \(hidden);
                CREATE TEMP VIEW trial_station AS
                    SELECT * FROM main.trial_station WHERE trial_id NOT IN
                        (SELECT t.id FROM main.trial t WHERE t.session_id IN \(hidden));
                CREATE TEMP VIEW event AS
                    SELECT * FROM main.event WHERE session_id IS NULL OR session_id NOT IN \(hidden);
                CREATE TEMP VIEW layout_opening AS
                    SELECT * FROM main.layout_opening WHERE session_id NOT IN \(hidden);
                CREATE TEMP VIEW handler_guess AS
                    SELECT * FROM main.handler_guess WHERE session_id NOT IN \(hidden);
                """)
        for (name, sql) in try Row.fetchAll(db, sql: "SELECT name, sql FROM main.sqlite_master WHERE type = 'view'")
            .map({ ($0["name"] as String, $0["sql"] as String) })
        {
            guard let range = sql.range(of: "CREATE VIEW", options: [.caseInsensitive, .anchored]) else {
                throw SessionLogError.database("the log's view \(name) is not a plain CREATE VIEW")
            }
            try db.execute(sql: sql.replacingCharacters(in: range, with: "CREATE TEMP VIEW"))
        }
    }
}

extension LogReader {
    /// Whether this reader holds back the session's trials and events because it is a
    /// double-blind session still running, so a listing can say why it shows none.
    public func withholds(session id: String) throws -> Bool {
        try read { db in
            guard
                try Bool.fetchOne(
                    db, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_temp_master WHERE name = 'live_double_blind')")
                    == true
            else { return false }
            return try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM temp.live_double_blind WHERE id = ?)", arguments: [id]) ?? false
        }
    }
}
