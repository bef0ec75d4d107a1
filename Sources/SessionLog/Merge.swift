import Foundation
import GRDB

/// What one merge added.
public struct MergeSummary: Sendable, Hashable, Codable {
    public var source: String
    /// The station identity of the merged log.
    public var stationId: String
    public var dogsAdded = 0
    public var dogsMatched = 0
    public var samplesAdded = 0
    public var samplesMatched = 0
    public var sessions = 0
    public var trials = 0
    public var events = 0
    /// Corrections not merged, one line each: the trial already has another correction here.
    public var correctionsRefused: [String] = []
}

extension SessionLog {
    /// Merges another station's log into this one (a lab's log of several stations).
    ///
    /// Rows keep their ids (UUIDs, so they never clash) and their station: sessions and events
    /// get the source's station identity (`station_id`). Merging the same log twice adds
    /// nothing. The same real animal or sample on two stations is matched by an explicit rule,
    /// the project's:
    /// - a dog by its name, any case (each station refuses two dogs of one name, so a name is
    ///   one dog in a lab; name dogs alike on every station, or differently if they differ);
    /// - a sample by its label (the id written on the tube), which must have the same kind;
    /// - a handler by code, a program by the SHA-256 of its text.
    /// A label whose kind differs between the logs is refused before anything is written.
    /// `name` is what messages and `merged_log.path` call the source (`pull` fetches into a
    /// temporary file, and names the host instead); the path by default. `check`: how the
    /// source is checked for damage first (a caller that checked every source already says
    /// `.none`); a damaged source is refused before anything is written.
    public func merge(from path: String, name: String? = nil, check: LogCheck = .integrity) throws -> MergeSummary {
        let name = name ?? path
        // The source must be a session log of this schema (lineupd migrates its own at start).
        // It is attached strictly read-only, as every reader opens a log: attached read-write
        // (as it was), its WAL was checkpointed into it and -wal and -shm deleted at DETACH.
        // A source without its -shm is read through the reader's private copy.
        let reader = try SessionLog.openReader(path: path, check: check)
        let attached = reader.copy?.path ?? path
        var summary = MergeSummary(source: name, stationId: "")
        do {
            try pool.writeWithoutTransaction { db in
                try db.execute(sql: "ATTACH DATABASE ? AS src", arguments: [SessionLog.readOnlyURI(attached)])
                defer { try? db.execute(sql: "DETACH DATABASE src") }
                try db.inTransaction {
                    summary = try Self.merge(db, path: name)
                    return .commit
                }
            }
        } catch let error as SessionLogError {
            throw error
        } catch {
            throw SessionLogError.from(error, path: self.path)
        }
        withExtendedLifetime(reader) {}  // its private copy, if any, was attached until now
        return summary
    }

    private static func columns(_ db: Database, _ table: String) throws -> [String] {
        try Row.fetchAll(db, sql: "PRAGMA main.table_info(\(table))").map { $0["name"] }
    }

    private static func merge(_ db: Database, path: String) throws -> MergeSummary {
        guard let source = try String.fetchOne(db, sql: "SELECT id FROM src.log_identity") else {
            throw SessionLogError.invalidInput("\(path) has no station identity (start lineupd on it once)")
        }
        let own = try String.fetchOne(db, sql: "SELECT id FROM main.log_identity")
        guard source != own else { throw SessionLogError.invalidInput("\(path) is this log itself") }
        var summary = MergeSummary(source: path, stationId: source)

        // Samples whose label means another kind here: refused before anything is written.
        if let clash = try Row.fetchOne(
            db,
            sql: """
                SELECT s.label, s.kind AS theirs, m.kind AS ours FROM src.sample s
                JOIN main.sample m ON m.label = s.label WHERE m.kind <> s.kind LIMIT 1
                """)
        {
            throw SessionLogError.invalidInput(
                "sample \(clash["label"] as String) is a \(clash["theirs"] as String) in \(path) but a \(clash["ours"] as String) here: "
                    + "one label must name one sample; relabel one of them")
        }

        // Who is who: source id -> id here.
        try db.execute(
            sql: """
                CREATE TEMP TABLE IF NOT EXISTS id_map (kind TEXT NOT NULL, src TEXT NOT NULL, dst TEXT NOT NULL,
                    PRIMARY KEY (kind, src));
                DELETE FROM temp.id_map;
                INSERT INTO temp.id_map SELECT 'dog', s.id,
                    coalesce((SELECT m.id FROM main.dog m WHERE m.name = s.name COLLATE NOCASE ORDER BY m.wall_ns LIMIT 1), s.id)
                    FROM src.dog s;
                INSERT INTO temp.id_map SELECT 'sample', s.id,
                    coalesce((SELECT m.id FROM main.sample m WHERE m.label = s.label), s.id) FROM src.sample s;
                INSERT INTO temp.id_map SELECT 'handler', s.id,
                    coalesce((SELECT m.id FROM main.handler m WHERE m.code = s.code), s.id) FROM src.handler s;
                INSERT INTO temp.id_map SELECT 'program', s.id,
                    coalesce((SELECT m.id FROM main.program m WHERE m.sha256 = s.sha256), s.id) FROM src.program s;
                """)
        summary.dogsMatched =
            try Int.fetchOne(
                db,
                sql: "SELECT count(*) FROM temp.id_map WHERE kind = 'dog' AND src <> dst"
            ) ?? 0
        summary.samplesMatched =
            try Int.fetchOne(
                db,
                sql: "SELECT count(*) FROM temp.id_map WHERE kind = 'sample' AND src <> dst"
            ) ?? 0
        func map(_ kind: String, _ column: String) -> String {
            "(SELECT dst FROM temp.id_map WHERE kind = '\(kind)' AND src = \(column))"
        }
        func copy(_ table: String, replacing: [String: String] = [:], where condition: String = "") throws -> Int {
            let cols = try columns(db, table)
            let values = cols.map { replacing[$0] ?? "s.\($0)" }
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO main.\(table) (\(cols.joined(separator: ", ")))
                    SELECT \(values.joined(separator: ", ")) FROM src.\(table) s \(condition)
                    """)
            return db.changesCount
        }
        summary.dogsAdded = try copy("dog", where: "WHERE \(map("dog", "s.id")) = s.id")
        try _ = copy("handler", where: "WHERE \(map("handler", "s.id")) = s.id")
        // A dilution's stock may be a sample this log knows by another id (matched by label).
        summary.samplesAdded = try copy(
            "sample", replacing: ["stock_id": "coalesce(\(map("sample", "s.stock_id")), s.stock_id)"],
            where: "WHERE \(map("sample", "s.id")) = s.id")
        try _ = copy("program", where: "WHERE \(map("program", "s.id")) = s.id")
        try _ = copy("sample_note", replacing: ["sample_id": map("sample", "s.sample_id")])
        try _ = copy("dog_note", replacing: ["dog_id": map("dog", "s.dog_id")])
        summary.sessions = try copy(
            "session",
            replacing: [
                "dog_id": map("dog", "s.dog_id"),
                "handler_id": "coalesce(\(map("handler", "s.handler_id")), s.handler_id)",
                "program_id": "coalesce(\(map("program", "s.program_id")), s.program_id)",
                "station_id": "coalesce(s.station_id, '\(source)')",
            ])
        try _ = copy("session_note")
        try _ = copy("session_end")
        try _ = copy("handler_guess")
        // A double-blind session's commitments and their openings, so it verifies in the lab
        // log too (the committed bytes name samples by label, which a merge keeps).
        try _ = copy("layout_commitment")
        try _ = copy("layout_opening")
        try _ = copy("dilution_commitment")
        try _ = copy("milestone", replacing: ["dog_id": map("dog", "s.dog_id")])

        // Trials: the compact layout names sample ids, which the matching may change.
        let renamed = try Row.fetchAll(db, sql: "SELECT src, dst FROM temp.id_map WHERE kind = 'sample' AND src <> dst")
            .map { ($0["src"] as String, $0["dst"] as String) }
        let trialColumns = try columns(db, "trial")
        let insert = try db.makeStatement(
            sql: """
                INSERT OR IGNORE INTO main.trial (\(trialColumns.joined(separator: ", ")))
                VALUES (\(trialColumns.map { _ in "?" }.joined(separator: ", ")))
                """)
        // One current version per trial (the project's rule, Schema+Corrections.swift): a
        // correction of a trial this log already holds another correction of is not copied, nor
        // what corrects it; each is said in the summary, at every merge, until it is settled.
        try db.execute(
            sql: """
                CREATE TEMP TABLE IF NOT EXISTS refused_correction (id TEXT PRIMARY KEY NOT NULL);
                DELETE FROM temp.refused_correction;
                """)
        let trials = try Row.fetchCursor(
            db,
            sql:
                "SELECT s.* FROM src.trial s WHERE NOT EXISTS (SELECT 1 FROM main.trial m WHERE m.id = s.id) ORDER BY s.rowid"
        )
        while let row = try trials.next() {
            if let corrects: String = row["corrects"] {
                let id: String = row["id"]
                let other = try String.fetchOne(
                    db, sql: "SELECT id FROM main.trial WHERE corrects = ? AND id <> ? ORDER BY rowid LIMIT 1",
                    arguments: [corrects, id])
                let parentHere =
                    try Bool.fetchOne(
                        db, sql: "SELECT EXISTS (SELECT 1 FROM main.trial WHERE id = ?)", arguments: [corrects])
                    ?? false
                if other != nil || !parentHere {
                    try db.execute(sql: "INSERT INTO temp.refused_correction (id) VALUES (?)", arguments: [id])
                    summary.correctionsRefused.append(
                        other.map {
                            "correction \(id.prefix(8)) of trial \(corrects.prefix(8)) not merged: this log already has correction \($0.prefix(8)) of it, which stands (the first to arrive); correct that one to change it"
                        }
                            ?? "correction \(id.prefix(8)) not merged: it corrects \(corrects.prefix(8)), a correction not merged"
                    )
                    continue
                }
            }
            var values = trialColumns.map { row[$0] as DatabaseValue }
            if !renamed.isEmpty, let at = trialColumns.firstIndex(of: "layout"),
                var layout = String.fromDatabaseValue(values[at])
            {
                for (from, to) in renamed { layout = layout.replacingOccurrences(of: from, with: to) }
                values[at] = layout.databaseValue
            }
            try insert.execute(arguments: StatementArguments(values))
            summary.trials += 1
        }
        try _ = copy(
            "trial_station", replacing: ["sample_id": "coalesce(\(map("sample", "s.sample_id")), s.sample_id)"],
            where: "WHERE s.trial_id NOT IN (SELECT id FROM temp.refused_correction)")
        // A threshold step's state per trial (v13): after its trial, the dilution by its id here.
        try _ = copy(
            "trial_procedure", replacing: ["sample_id": "coalesce(\(map("sample", "s.sample_id")), s.sample_id)"],
            where: "WHERE s.trial_id IN (SELECT id FROM main.trial)")

        // Events: `seq` is each log's own; the id says whether it is here already.
        let eventColumns = try columns(db, "event").filter { $0 != "seq" }
        try db.execute(
            sql: """
                INSERT INTO main.event (\(eventColumns.joined(separator: ", ")))
                SELECT \(eventColumns.map { $0 == "station_id" ? "coalesce(s.station_id, '\(source)')" : "s.\($0)" }.joined(separator: ", "))
                FROM src.event s WHERE NOT EXISTS (SELECT 1 FROM main.event m WHERE m.id = s.id)
                    AND (s.trial_id IS NULL OR s.trial_id NOT IN (SELECT id FROM temp.refused_correction))
                ORDER BY s.seq
                """)
        summary.events = db.changesCount

        // Where this station's rows came from, once.
        let station = try String.fetchOne(
            db, sql: "SELECT station FROM src.session WHERE station IS NOT NULL ORDER BY wall_ns DESC LIMIT 1")
        let now = LogTime.now()
        try db.execute(
            sql: "INSERT OR IGNORE INTO main.merged_log (id, station, path, mono_ns, wall_ns) VALUES (?, ?, ?, ?, ?)",
            arguments: [source, station, path, now.monoNs, now.wallNs])
        // Stations merged in before (a lab log merged into another) keep their own identities.
        try db.execute(sql: "INSERT OR IGNORE INTO main.merged_log SELECT * FROM src.merged_log")
        return summary
    }
}
