import Foundation
import GRDB
import TrainingEngine

/// Which rows a listing, statistic or export covers. Ids are full UUIDs (resolve what
/// the researcher typed with ``LogReader/resolveDog(_:)`` and friends first).
public struct LogFilter: Sendable, Hashable {
    public var dogId: String?
    public var sessionId: String?
    public var trialId: String?
    public var eventKind: EventKind?
    /// Wall-clock bounds, nanoseconds since 1970 (UTC): `since` inclusive, `until` exclusive.
    public var since: Int64?
    public var until: Int64?
    /// Listings (`sessions`, `trials`, `events`) newest first, so `limit` keeps the latest
    /// rows. Statistics and exports ignore it: they read oldest first, as time runs.
    public var newestFirst = false
    /// Only sessions run in this mode, so a dog's figures from trainer-led rounds and from
    /// double-blind tests are not pooled unless asked for.
    public var mode: TrainingMode?
    /// Only sessions of this program (its name, as the log keeps it).
    public var program: String?
    /// Only sessions of this phase, and of this step of it when `step` is set.
    public var phase: String?
    public var step: String?
    /// Only sessions run by this handler (the pseudonymous code).
    public var handler: String?

    public init(
        dogId: String? = nil, sessionId: String? = nil, trialId: String? = nil,
        eventKind: EventKind? = nil, since: Int64? = nil, until: Int64? = nil, mode: TrainingMode? = nil,
        program: String? = nil, phase: String? = nil, step: String? = nil, handler: String? = nil
    ) {
        self.dogId = dogId
        self.sessionId = sessionId
        self.trialId = trialId
        self.eventKind = eventKind
        self.since = since
        self.until = until
        self.mode = mode
        self.program = program
        self.phase = phase
        self.step = step
        self.handler = handler
    }

    /// Whether a choice of the session's own (mode, program, step, handler) narrows the rows.
    public var selectsSessions: Bool {
        mode != nil || program != nil || phase != nil || step != nil || handler != nil
    }

    /// The one SQL condition for the session-level choices, on the session table's alias `s`,
    /// with numbered parameters `?first` to `?first+4` (bind `sessionArguments` there). Every
    /// query that selects trials, sessions, events or milestones by their session uses it, so
    /// `stats`, `report` and `export` select the same trials.
    func sessionCondition(_ s: String = "s", from first: Int) -> String {
        let p = (first..<first + 5).map { "?\($0)" }
        return """
            (\(p[0]) IS NULL OR \(s).mode = \(p[0]))
                AND (\(p[1]) IS NULL OR \(s).program_id IN (SELECT id FROM program WHERE name = \(p[1])))
                AND (\(p[2]) IS NULL OR \(s).phase = \(p[2])) AND (\(p[3]) IS NULL OR \(s).step = \(p[3]))
                AND (\(p[4]) IS NULL OR \(s).handler_id IN (SELECT id FROM handler WHERE code = \(p[4])))
            """
    }

    /// The values of `sessionCondition`'s parameters, in order.
    var sessionArguments: [DatabaseValue] {
        [
            mode?.rawValue.databaseValue ?? .null, program.databaseValue, phase.databaseValue, step.databaseValue,
            handler.databaseValue,
        ]
    }
}

/// Read-only access to the log: everything `lineupctl` shows the researcher.
public struct LogReader: Sendable {
    let database: any DatabaseReader
    public let path: String

    init(database: any DatabaseReader, path: String) {
        self.database = database
        self.path = path
    }

    /// Runs `body` in one read transaction, so what it sees is one consistent state.
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try database.read(body)
        } catch {
            throw SessionLogError.from(error, path: path)
        }
    }

    // MARK: Resolving what the researcher typed

    /// A dog by full id, unique id prefix (4+ characters) or name (any case).
    public func resolveDog(_ text: String) throws -> String {
        try read { db in
            if let id = try Self.resolve(db, table: "dog", text: text, kind: "dog") { return id }
            let byName = try String.fetchAll(
                db, sql: "SELECT id FROM dog WHERE name = ? COLLATE NOCASE", arguments: [text])
            if byName.count == 1 { return byName[0] }
            if byName.count > 1 { throw SessionLogError.ambiguousId(text, kind: "dog") }
            throw SessionLogError.unknownDog(text)
        }
    }

    /// A session by full id or unique id prefix.
    public func resolveSession(_ text: String) throws -> String {
        try read { db in
            guard let id = try Self.resolve(db, table: "session", text: text, kind: "session") else {
                throw SessionLogError.unknownSession(text)
            }
            return id
        }
    }

    /// A trial by full id or unique id prefix.
    public func resolveTrial(_ text: String) throws -> String {
        try read { db in
            guard let id = try Self.resolve(db, table: "trial", text: text, kind: "trial") else {
                throw SessionLogError.unknownTrial(text)
            }
            return id
        }
    }

    /// A sample by its label (as written on it), full id or unique id prefix.
    public func resolveSample(_ text: String) throws -> String {
        try read { db in
            if let id = try String.fetchOne(
                db, sql: "SELECT id FROM sample WHERE label = ?", arguments: [text])
            {
                return id
            }
            guard let id = try Self.resolve(db, table: "sample", text: text, kind: "sample") else {
                throw SessionLogError.unknownSample(text)
            }
            return id
        }
    }

    /// A program by its name, as sessions logged it; an unknown name names the ones the log has.
    public func resolveProgram(_ name: String) throws -> String {
        try read { db in
            let known = try String.fetchAll(
                db, sql: "SELECT DISTINCT p.name FROM session s JOIN program p ON p.id = s.program_id ORDER BY p.name")
            guard known.contains(name) else {
                throw SessionLogError.invalidInput(
                    "--program \(name): no session of a program so named in the log (\(Self.listing(known)))")
            }
            return name
        }
    }

    /// A handler by the pseudonymous code sessions were logged with.
    public func resolveHandler(_ code: String) throws -> String {
        try read { db in
            let known = try String.fetchAll(db, sql: "SELECT code FROM handler ORDER BY code")
            guard known.contains(code) else {
                throw SessionLogError.invalidInput(
                    "--handler \(code): no handler so coded in the log (\(Self.listing(known)))")
            }
            return code
        }
    }

    /// `PHASE/STEP` (as `session start --step` takes it) or a whole `PHASE`, checked against the
    /// steps sessions were logged with.
    public func resolveStep(_ text: String) throws -> (phase: String, step: String?) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard !parts[0].isEmpty, parts.count == 1 || !parts[1].isEmpty else {
            throw SessionLogError.invalidInput("--step \(text): give PHASE/STEP (discrimination/1) or a whole PHASE")
        }
        return try read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT DISTINCT phase, step FROM session WHERE phase IS NOT NULL ORDER BY phase, step
                    """)
            let known = rows.map { row -> String in
                let phase: String = row["phase"]
                return (row["step"] as String?).map { "\(phase)/\($0)" } ?? phase
            }
            let found = rows.contains { row in
                row["phase"] == parts[0] && (parts.count == 1 || (row["step"] as String?) == parts[1])
            }
            guard found else {
                throw SessionLogError.invalidInput(
                    "--step \(text): no session of that \(parts.count == 1 ? "phase" : "step") in the log (\(Self.listing(known)))"
                )
            }
            return (parts[0], parts.count == 2 ? parts[1] : nil)
        }
    }

    /// The stations of a trial's lineup, by the board's names for them (as its session logged
    /// them, `settings.stations`, in the order of the trial's layout) and the numbers the log
    /// keeps (the board's station, from 1); nil when the session logged no names (older logs,
    /// simulated blocks).
    public func stationNames(trial text: String) throws -> [StationName]? {
        let id = try resolveTrial(text)
        return try read { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql:
                        "SELECT t.layout, s.settings FROM trial t JOIN session s ON s.id = t.session_id WHERE t.id = ?",
                    arguments: [id])
            else { throw SessionLogError.unknownTrial(text) }
            let layout: String = row["layout"]
            let settings: String = row["settings"]
            guard let data = settings.data(using: .utf8),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let listed = object["stations"] as? String
            else { return nil }
            let names = listed.split(separator: ",").map(String.init)
            let numbers = layout.split(separator: ";").compactMap { Int($0.prefix { $0 != ":" }) }
            guard !names.isEmpty, names.count == numbers.count else { return nil }
            return zip(names, numbers).map { StationName(name: $0, number: $1) }
        }
    }

    /// `known: a, b, c` (at most 12 named), or `it has none`.
    static func listing(_ known: [String]) -> String {
        guard !known.isEmpty else { return "it has none" }
        let shown = known.prefix(12).joined(separator: ", ")
        return "known: " + shown + (known.count > 12 ? ", and \(known.count - 12) more" : "")
    }

    static func resolve(_ db: Database, table: String, text: String, kind: String) throws -> String? {
        let lowered = text.lowercased()
        if try String.fetchOne(db, sql: "SELECT id FROM \(table) WHERE id = ?", arguments: [lowered])
            != nil
        {
            return lowered
        }
        // Only hex digits and dashes can be an id prefix; anything else is not an id.
        guard lowered.count >= 4, lowered.allSatisfy({ $0.isHexDigit || $0 == "-" }) else { return nil }
        let matches = try String.fetchAll(
            db, sql: "SELECT id FROM \(table) WHERE id >= ? AND id < ? LIMIT 2",
            arguments: [lowered, lowered + "~"])
        if matches.count > 1 { throw SessionLogError.ambiguousId(text, kind: kind) }
        return matches.first
    }

    // MARK: Dogs and samples

    public func dogs() throws -> [DogSummary] {
        try read { db in
            var iso = ISOTimeFormatter()
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT d.id, d.name, d.born, d.notes, d.wall_ns,
                        (SELECT count(*) FROM session s WHERE s.dog_id = d.id) AS sessions,
                        (SELECT count(*) FROM trial_current t JOIN session s ON s.id = t.session_id
                         WHERE s.dog_id = d.id) AS trials,
                        (SELECT max(s.wall_ns) FROM session s WHERE s.dog_id = d.id) AS last
                    FROM dog d ORDER BY d.name COLLATE NOCASE, d.wall_ns
                    """
            ).map { row in
                DogSummary(
                    id: row["id"], name: row["name"], born: row["born"], notes: row["notes"],
                    added: iso.string(wallNs: row["wall_ns"]), sessions: row["sessions"],
                    trials: row["trials"],
                    lastSession: (row["last"] as Int64?).map { iso.string(wallNs: $0) })
            }
        }
    }

    public func samples(kind: SampleKind? = nil) throws -> [SampleSummary] {
        try read { db in
            var iso = ISOTimeFormatter()
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT s.*, u.uses,
                        (SELECT count(*) FROM sample_note n WHERE n.sample_id = s.id) AS notes
                    FROM sample s JOIN sample_usage u ON u.sample_id = s.id
                    WHERE ?1 IS NULL OR s.kind = ?1
                    ORDER BY s.label
                    """, arguments: [kind?.rawValue]
            ).map { try Self.sampleSummary($0, &iso) }
        }
    }

    static func sampleSummary(_ row: Row, _ iso: inout ISOTimeFormatter) throws -> SampleSummary {
        SampleSummary(
            id: row["id"], label: row["label"], kind: try row.word("kind", of: "sample", row: row["id"]),
            diagnosis: row["diagnosis"],
            source: row["source"], collection: row["collection"], processing: row["processing"],
            collectedOn: row["collected_on"], added: iso.string(wallNs: row["wall_ns"]),
            uses: row["uses"],
            notes: row["notes"])
    }

    public func sample(id: String) throws -> SampleDetails {
        try read { db in
            var iso = ISOTimeFormatter()
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT s.*, u.uses, (SELECT count(*) FROM sample_note n WHERE n.sample_id = s.id) AS notes
                        FROM sample s JOIN sample_usage u ON u.sample_id = s.id WHERE s.id = ?
                        """, arguments: [id])
            else { throw SessionLogError.unknownSample(id) }
            let notes = try Row.fetchAll(
                db,
                sql: "SELECT text, wall_ns FROM sample_note WHERE sample_id = ? ORDER BY wall_ns, mono_ns",
                arguments: [id]
            ).map { NoteLine(time: iso.string(wallNs: $0["wall_ns"]), text: $0["text"]) }
            let dogs = try Row.fetchAll(
                db,
                sql: """
                    SELECT d.name, count(*) AS uses, max(t.wall_ns) AS last FROM trial_station ts
                    JOIN trial t ON t.id = ts.trial_id AND t.corrects IS NULL
                    JOIN session s ON s.id = t.session_id JOIN dog d ON d.id = s.dog_id
                    WHERE ts.sample_id = ? GROUP BY d.id ORDER BY d.name
                    """, arguments: [id]
            ).map {
                SampleUse(dog: $0["name"], uses: $0["uses"], lastUsed: iso.string(wallNs: $0["last"]))
            }
            return SampleDetails(sample: try Self.sampleSummary(row, &iso), notes: notes, usedBy: dogs)
        }
    }

    // MARK: Sessions

    /// Sessions in the filter's order; with `limit`, only that many (the first in that order:
    /// the latest when newest first).
    public func sessions(_ filter: LogFilter = LogFilter(), limit: Int? = nil) throws -> [SessionSummary] {
        try read { db in
            var iso = ISOTimeFormatter()
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT s.id, s.dog_id, d.name AS dog, s.wall_ns, s.phase, s.step, s.exercise, s.mode,
                        p.name AS program, s.station,
                        coalesce(json_extract(s.settings, '$.unlabelled') = 'true', 0) AS unlabelled,
                        count(t.id) AS trials,
                        coalesce(sum(t.outcome = 'hit'), 0) AS hits,
                        coalesce(sum(t.outcome = 'miss'), 0) AS misses,
                        coalesce(sum(t.outcome = 'false-alert'), 0) AS false_alerts,
                        coalesce(sum(t.outcome = 'correct-rejection'), 0) AS correct_rejections,
                        coalesce(sum(t.outcome = 'aborted'), 0) AS aborted,
                        (SELECT e.how FROM session_end e WHERE e.session_id = s.id ORDER BY e.wall_ns LIMIT 1)
                            AS ended_how
                    FROM session s JOIN dog d ON d.id = s.dog_id LEFT JOIN program p ON p.id = s.program_id
                    LEFT JOIN trial_current t ON t.session_id = s.id
                    WHERE (?1 IS NULL OR s.dog_id = ?1) AND (?2 IS NULL OR s.id = ?2)
                        AND (?3 IS NULL OR s.wall_ns >= ?3) AND (?4 IS NULL OR s.wall_ns < ?4)
                        AND \(filter.sessionCondition(from: 5))
                    GROUP BY s.id ORDER BY s.wall_ns \(filter.newestFirst ? "DESC" : "ASC"), s.id LIMIT ?10
                    """,
                arguments: StatementArguments(
                    [
                        filter.dogId.databaseValue, filter.sessionId.databaseValue, filter.since.databaseValue,
                        filter.until.databaseValue,
                    ] + filter.sessionArguments + [(limit ?? -1).databaseValue])
            ).map { row in
                SessionSummary(
                    id: row["id"], dogId: row["dog_id"], dog: row["dog"],
                    started: iso.string(wallNs: row["wall_ns"]), program: row["program"],
                    phase: row["phase"], step: row["step"], exercise: row["exercise"],
                    mode: try row.word("mode", of: "session", row: row["id"]),
                    station: row["station"], unlabelled: row["unlabelled"], results: OutcomeCounts(row),
                    endedHow: row["ended_how"])
            }
        }
    }

    /// Everything the study's session-details view shows.
    public func session(id: String) throws -> SessionDetails {
        let trials = try trials(LogFilter(sessionId: id))
        return try read { db in
            var iso = ISOTimeFormatter()
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT s.*, d.name AS dog, h.code AS handler, p.name AS program, p.sha256
                        FROM session s JOIN dog d ON d.id = s.dog_id
                        LEFT JOIN handler h ON h.id = s.handler_id
                        LEFT JOIN program p ON p.id = s.program_id WHERE s.id = ?
                        """, arguments: [id])
            else { throw SessionLogError.unknownSession(id) }
            let notes = try Row.fetchAll(
                db,
                sql:
                    "SELECT kind, text, wall_ns FROM session_note WHERE session_id = ? ORDER BY wall_ns, mono_ns",
                arguments: [id])
            // The session's figures and its samples, counted by the one implementation.
            var session = Tally()
            var bySample: [String: (label: String?, kind: SampleKind, tally: Tally)] = [:]
            var labels: [String: String] = [:]
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT DISTINCT sm.id, sm.label FROM trial t JOIN trial_station ts ON ts.trial_id = t.id
                    JOIN sample sm ON sm.id = ts.sample_id WHERE t.session_id = ?
                    """, arguments: [id])
            { labels[row[0]] = row[1] }
            try Self.scanTrials(db, LogFilter(sessionId: id), samples: true) { trial, _ in
                session.add(trial)
                for station in trial.stations {
                    // Blanks without a sample id are one group: the clean containers.
                    let key = station.sample ?? "blank"
                    bySample[key, default: (station.sample.flatMap { labels[$0] }, station.kind, Tally())].tally.add(
                        trial, station: station)
                }
            }
            let samples = bySample.values.map { entry in
                let f = entry.tally.figures
                return SessionSample(
                    label: entry.label, kind: entry.kind, presented: f.results.scored,
                    indicated: f.presentations.indications, figures: f)
            }.sorted { ($0.kind.rawValue, $0.label ?? "") < ($1.kind.rawValue, $1.label ?? "") }
            let figures = session.figures
            let counts = figures.results
            let lastTrial = try Int64.fetchOne(
                db, sql: "SELECT max(wall_ns) FROM trial WHERE session_id = ?", arguments: [id])
            let end = try Row.fetchOne(
                db, sql: "SELECT how, detail, wall_ns FROM session_end WHERE session_id = ? ORDER BY wall_ns LIMIT 1",
                arguments: [id])
            let how: String? = end?["how"]
            // An `unknown` end (an older log) carries no time of its own; an interrupted
            // session ended, as far as anyone knows, with its last scored trial.
            let ended: Int64? = how == "ended" || how == "stopped" ? end?["wall_ns"] : lastTrial
            return SessionDetails(
                id: row["id"], dogId: row["dog_id"], dog: row["dog"], handler: row["handler"],
                program: row["program"],
                programSha256: row["sha256"], phase: row["phase"], phaseSteps: row["phase_steps"],
                step: row["step"],
                exercise: row["exercise"], mode: try row.word("mode", of: "session", row: row["id"]),
                station: row["station"],
                settings: row["settings"],
                started: iso.string(wallNs: row["wall_ns"]), ended: ended.map { iso.string(wallNs: $0) },
                endedHow: how, endDetail: end?["detail"],
                results: counts,
                correct: figures.trialAccuracy, figures: figures,
                samples: samples,
                improvementSuggestions: notes.filter { $0["kind"] == "improvement" }.map { $0["text"] },
                comments: notes.filter { $0["kind"] == "comment" }.map { $0["text"] },
                trials: trials)
        }
    }

    // MARK: Trials and events

    /// Trials as they stand after corrections, oldest first (newest first if the filter says so).
    public func trials(_ filter: LogFilter = LogFilter(), limit: Int? = nil) throws -> [LoggedTrial] {
        try read { db in
            var iso = ISOTimeFormatter()
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT t.*, d.name AS dog FROM trial_current t
                    JOIN session s ON s.id = t.session_id JOIN dog d ON d.id = s.dog_id
                    WHERE (?1 IS NULL OR s.dog_id = ?1) AND (?2 IS NULL OR t.session_id = ?2)
                        AND (?3 IS NULL OR t.wall_ns >= ?3) AND (?4 IS NULL OR t.wall_ns < ?4)
                        AND \(filter.sessionCondition(from: 6))
                    ORDER BY t.wall_ns \(filter.newestFirst ? "DESC" : "ASC"), t.number \(filter.newestFirst ? "DESC" : "ASC") LIMIT ?5
                    """,
                arguments: StatementArguments(
                    [
                        filter.dogId.databaseValue, filter.sessionId.databaseValue, filter.since.databaseValue,
                        filter.until.databaseValue, (limit ?? -1).databaseValue,
                    ] + filter.sessionArguments))
            let layoutStatement = try db.cachedStatement(
                sql: """
                    SELECT ts.station, sm.label, ts.kind, ts.visited, ts.indicated, ts.first_indication_ns,
                        ts.sniffs, ts.dwell_ns FROM trial_station ts
                    LEFT JOIN sample sm ON sm.id = ts.sample_id WHERE ts.trial_id = ? ORDER BY ts.station
                    """)
            return try rows.map { row in
                let id: String = row["id"]
                let layout = try Row.fetchAll(layoutStatement, arguments: [id]).map {
                    LayoutSlot(
                        station: $0["station"], sample: $0["label"],
                        kind: try $0.word("kind", of: "trial_station", row: "\(id) station \($0["station"] as Int)"),
                        visited: ($0["visited"] as Int?).map { $0 != 0 },
                        indicated: ($0["indicated"] as Int?).map { $0 != 0 },
                        firstIndicationMs: ($0["first_indication_ns"] as Int64?).map { Double($0) / 1e6 },
                        sniffs: $0["sniffs"], dwellMs: ($0["dwell_ns"] as Int64?).map { Double($0) / 1e6 })
                }
                return LoggedTrial(
                    id: id, sessionId: row["session_id"], dog: row["dog"], number: row["number"],
                    outcome: try row.word("outcome", of: "trial", row: id), indicatedStation: row["indicated_station"],
                    latencyMs: (row["latency_ns"] as Int64?).map { Double($0) / 1e6 },
                    searchMs: (row["search_ns"] as Int64?).map { Double($0) / 1e6 },
                    started: iso.string(wallNs: row["started_wall_ns"]),
                    ended: iso.string(wallNs: row["wall_ns"]),
                    seed: (row["seed"] as Int64?).map { UInt64(bitPattern: $0) }, layout: layout,
                    corrects: row["corrects"], reason: row["reason"])
            }
        }
    }

    /// Events in the order the station logged them.
    public func events(_ filter: LogFilter = LogFilter(), limit: Int? = nil) throws -> [EventSummary] {
        try read { db in
            var iso = ISOTimeFormatter()
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT e.* FROM event e
                    WHERE (?1 IS NULL OR e.session_id IN (SELECT id FROM session WHERE dog_id = ?1))
                        AND (?2 IS NULL OR e.session_id = ?2) AND (?3 IS NULL OR e.trial_id = ?3)
                        AND (?4 IS NULL OR e.kind = ?4)
                        AND (?5 IS NULL OR e.wall_ns >= ?5) AND (?6 IS NULL OR e.wall_ns < ?6)
                    ORDER BY e.seq \(filter.newestFirst ? "DESC" : "ASC") LIMIT ?7
                    """,
                arguments: [
                    filter.dogId, filter.sessionId, filter.trialId, filter.eventKind?.rawValue, filter.since,
                    filter.until, limit ?? -1,
                ]
            ).map { row in
                EventSummary(
                    seq: row["seq"], id: row["id"], sessionId: row["session_id"], trialId: row["trial_id"],
                    kind: row["kind"], station: row["station"], time: iso.string(wallNs: row["wall_ns"]),
                    monoNs: row["mono_ns"], kernelNs: row["kernel_ns"], value: row["value"],
                    durationNs: row["duration_ns"], clickOnsetLatencyNs: row["click_onset_latency_ns"],
                    detail: row["detail"])
            }
        }
    }

    /// How many events match, for "showing N of M".
    public func eventCount(_ filter: LogFilter = LogFilter()) throws -> Int {
        try read { db in
            try Int.fetchOne(
                db,
                sql: """
                    SELECT count(*) FROM event e
                    WHERE (?1 IS NULL OR e.session_id IN (SELECT id FROM session WHERE dog_id = ?1))
                        AND (?2 IS NULL OR e.session_id = ?2) AND (?3 IS NULL OR e.trial_id = ?3)
                        AND (?4 IS NULL OR e.kind = ?4)
                        AND (?5 IS NULL OR e.wall_ns >= ?5) AND (?6 IS NULL OR e.wall_ns < ?6)
                    """,
                arguments: [
                    filter.dogId, filter.sessionId, filter.trialId, filter.eventKind?.rawValue, filter.since,
                    filter.until,
                ]) ?? 0
        }
    }

    // MARK: Progress

    /// A dog's progress, program by program and phase by phase: every phase of the program
    /// (those not started at 0 %), each step's share done, counted by `ProgramProgress` (the
    /// one definition). With `program`, that program only; else each program the dog has
    /// sessions in (the one of its latest session first, each read from the text the log
    /// keeps), then its sessions without a program. A program's phases count only that
    /// program's sessions, trials and milestones. Accuracy figures come straight from the
    /// trials; phases the log holds that the program lacks follow, counted from milestones only.
    public func progress(dogId: String, program given: Program? = nil, window: Int = 20) throws -> [PhaseProgress] {
        try read { db in
            guard
                try String.fetchOne(db, sql: "SELECT id FROM dog WHERE id = ?", arguments: [dogId]) != nil
            else {
                throw SessionLogError.unknownDog(dogId)
            }
            if let given {
                return try Self.progress(db, dogId: dogId, name: given.name, program: given, window: window)
            }
            let names = try String.fetchAll(
                db,
                sql: """
                    SELECT p.name FROM session s JOIN program p ON p.id = s.program_id WHERE s.dog_id = ?
                    GROUP BY p.name ORDER BY max(s.wall_ns) DESC, p.name
                    """, arguments: [dogId])
            var phases: [PhaseProgress] = []
            for name in names {
                phases += try Self.progress(
                    db, dogId: dogId, name: name, program: Self.latestProgram(db, dogId: dogId, named: name),
                    window: window)
            }
            let withoutProgram = try Int.fetchOne(
                db,
                sql: """
                    SELECT (SELECT count(*) FROM session WHERE dog_id = ?1 AND program_id IS NULL)
                        + (SELECT count(*) FROM milestone m LEFT JOIN session s ON s.id = m.session_id
                           WHERE m.dog_id = ?1 AND s.program_id IS NULL)
                    """, arguments: [dogId])
            if withoutProgram ?? 0 > 0 {
                phases += try Self.progress(db, dogId: dogId, name: nil, program: nil, window: window)
            }
            return phases
        }
    }

    /// One program's phases (`name`; nil: the sessions logged without a program), from that
    /// program's sessions, trials and milestones only.
    static func progress(_ db: Database, dogId: String, name: String?, program: Program?, window: Int) throws
        -> [PhaseProgress]
    {
        var iso = ISOTimeFormatter()
        // The sessions of this program (or of none): ?2 the program's name; ?1 the dog.
        let programOf = """
            (CASE WHEN ?2 IS NULL THEN s.program_id IS NULL
                ELSE s.program_id IN (SELECT id FROM program WHERE name = ?2) END)
            """
        let ofProgram = "s.dog_id = ?1 AND \(programOf)"
        let arguments: StatementArguments = [dogId, name]
        var order: [String] = program?.phases.map(\.id) ?? []
        var phases: [String: PhaseProgress] = [:]
        for phase in program?.phases ?? [] {
            var entry = PhaseProgress(phase: phase.id)
            entry.title = phase.title
            entry.phaseSteps = phase.steps.count
            phases[phase.id] = entry
        }
        var outcomes: [String: [Bool]] = [:]
        let sessionRows = try Row.fetchAll(
            db, sql: "SELECT s.phase, s.phase_steps FROM session s WHERE \(ofProgram) ORDER BY s.wall_ns, s.mono_ns",
            arguments: arguments)
        for row in sessionRows {
            let phase: String = row["phase"] ?? "(no phase)"
            if phases[phase] == nil {
                order.append(phase)
                phases[phase] = PhaseProgress(phase: phase)
            }
            phases[phase]?.sessions += 1
            if phases[phase]?.phaseSteps == nil, let steps: Int = row["phase_steps"] {
                phases[phase]?.phaseSteps = steps
            }
        }
        let trialRows = try Row.fetchAll(
            db,
            sql: """
                SELECT s.phase, t.outcome FROM trial_current t JOIN session s ON s.id = t.session_id
                WHERE \(ofProgram) AND t.outcome <> 'aborted' ORDER BY t.wall_ns, t.number
                """, arguments: arguments)
        for row in trialRows {
            let phase: String = row["phase"] ?? "(no phase)"
            let outcome = TrialOutcome(rawValue: row["outcome"]) ?? .aborted
            outcomes[phase, default: []].append(outcome.isCorrect)
        }
        var passedSteps: [String: Set<String>] = [:]
        var passedOn: [String: String] = [:]
        for row in try Row.fetchAll(
            db,
            // A milestone's program is its session's; one logged without a session has none.
            sql: """
                SELECT m.phase, m.step, m.criterion, m.wall_ns FROM milestone m LEFT JOIN session s ON s.id = m.session_id
                WHERE m.dog_id = ?1 AND \(programOf) ORDER BY m.wall_ns
                """, arguments: arguments)
        {
            let phase: String = row["phase"]
            if phases[phase] == nil {
                order.append(phase)
                phases[phase] = PhaseProgress(phase: phase)
            }
            if let step: String = row["step"] {
                passedSteps[phase, default: []].insert(step)
                if passedOn["\(phase)/\(step)"] == nil {
                    passedOn["\(phase)/\(step)"] = iso.string(wallNs: row["wall_ns"])
                }
            } else if phases[phase]?.graduated == nil {
                phases[phase]?.graduated = iso.string(wallNs: row["wall_ns"])
                phases[phase]?.criterion = row["criterion"]
            }
        }
        let progress = try program.map { try ProgramProgress.read(db, dogId: dogId, program: $0) }
        let otherMode = try program.map { try ProgramProgress.otherModeTrials(db, dogId: dogId, program: $0) } ?? [:]
        return order.compactMap { phase in
            guard var entry = phases[phase] else { return nil }
            entry.program = name
            let results = outcomes[phase] ?? []
            entry.trials = results.count
            entry.correct = Proportion(successes: results.filter { $0 }.count, trials: results.count)
            let recent = results.suffix(window)
            entry.recentWindow = recent.count
            entry.recentCorrectPercent =
                recent.isEmpty ? nil : 100 * Double(recent.filter { $0 }.count) / Double(recent.count)
            entry.stepsPassed = passedSteps[phase]?.count ?? 0
            if let progress, let definition = program?.phases.first(where: { $0.id == phase }) {
                entry.steps = definition.steps.map { step in
                    let record = progress.steps["\(phase)/\(step.id)"]
                    return StepProgress(
                        step: step.id, title: step.title, mode: step.mode,
                        percent: Int((progress.stepProgress(phase: definition, step: step) * 100).rounded(.down)),
                        passed: passedOn["\(phase)/\(step.id)"],
                        rule: step.completionRule, trials: record?.tracker.results.count ?? 0,
                        otherModeTrials: otherMode["\(phase)/\(step.id)"] ?? 0,
                        exercises: step.exercises.map {
                            ExerciseProgress(
                                exercise: $0.id, title: $0.title, done: record?.exerciseRounds[$0.id] ?? 0,
                                required: step.criterion == nil ? step.rounds(for: $0) : nil)
                        })
                }
                entry.stepsPassed = definition.steps.filter { progress.passed(phase: definition, step: $0) }.count
                entry.progressPercent =
                    entry.graduated != nil
                    ? 100 : Double(Int((progress.phaseProgress(definition) * 100).rounded(.down)))
            } else if entry.graduated != nil {
                entry.progressPercent = 100
            } else if let steps = entry.phaseSteps, steps > 0 {
                // Not in the program: only the milestones are known.
                entry.progressPercent = min(100, 100 * Double(entry.stepsPassed) / Double(steps))
            }
            return entry
        }
    }

    /// The program the dog's latest session ran, from the text the log keeps (or a built-in
    /// program's, for sessions logged with only its name); nil when none can be read.
    static func latestProgram(_ db: Database, dogId: String, named: String? = nil) throws -> Program? {
        guard
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT p.name, p.content FROM session s JOIN program p ON p.id = s.program_id
                    WHERE s.dog_id = ?1 AND (?2 IS NULL OR p.name = ?2) ORDER BY s.wall_ns DESC, s.mono_ns DESC LIMIT 1
                    """, arguments: [dogId, named])
        else { return nil }
        let name: String = row["name"]
        let content: String = row["content"]
        if let parsed = try? Program.parse(toml: content, source: "the log's copy of \(name)") { return parsed }
        return try? Program.builtin(named: name)
    }

    // MARK: Backup

    /// A consistent copy through SQLite's online backup; the copy is a complete
    /// database on its own (no -wal file needed).
    public func backup(to destination: String) throws {
        if FileManager.default.fileExists(atPath: destination) {
            throw SessionLogError.invalidInput(
                "\(destination) already exists; choose a new file for the backup")
        }
        do {
            let copy = try DatabaseQueue(path: destination)
            try database.backup(to: copy)
            try copy.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = DELETE") }
            try copy.close()
        } catch {
            throw SessionLogError.from(error, path: destination)
        }
    }
}

// MARK: - What the reader returns

/// A station as the board names it (`B`) and as the log numbers it (2).
public struct StationName: Sendable, Hashable, Codable {
    public var name: String
    public var number: Int
}

public struct DogSummary: Sendable, Hashable, Codable {
    public var id: String
    public var name: String
    public var born: String?
    public var notes: String?
    public var added: String
    public var sessions: Int
    public var trials: Int
    public var lastSession: String?
}

public struct SampleSummary: Sendable, Hashable, Codable {
    public var id: String
    public var label: String
    public var kind: SampleKind
    public var diagnosis: String?
    public var source: String?
    public var collection: String?
    public var processing: String?
    public var collectedOn: String?
    public var added: String
    /// How many trials the sample stood in.
    public var uses: Int
    public var notes: Int
}

public struct NoteLine: Sendable, Hashable, Codable {
    public var time: String
    public var text: String
}

public struct SampleUse: Sendable, Hashable, Codable {
    public var dog: String
    public var uses: Int
    public var lastUsed: String
}

public struct SampleDetails: Sendable, Hashable, Codable {
    public var sample: SampleSummary
    public var notes: [NoteLine]
    public var usedBy: [SampleUse]
}

extension OutcomeCounts {
    init(_ row: Row) {
        self.init()
        trials = row["trials"]
        hits = row["hits"]
        misses = row["misses"]
        falseAlerts = row["false_alerts"]
        correctRejections = row["correct_rejections"]
        aborted = row["aborted"]
    }
}

public struct SessionSummary: Sendable, Hashable, Codable {
    public var id: String
    public var dogId: String
    public var dog: String
    public var started: String
    /// The program's name, as the log keeps it (nil: none logged, e.g. a simulated block).
    public var program: String?
    public var phase: String?
    public var step: String?
    public var exercise: String?
    public var mode: TrainingMode
    /// The station (board) it ran on, as that station names itself.
    public var station: String?
    /// Run without sample ids (`session start --unlabelled`, or trainer-led with no --sample):
    /// no figure by sample can rest on it.
    public var unlabelled: Bool = false
    public var results: OutcomeCounts
    /// How it ended (see `SessionEnd.How`); nil while it runs.
    public var endedHow: String?
}

public struct SessionSample: Sendable, Hashable, Codable {
    /// Nil for a blank container without a sample id.
    public var label: String?
    public var kind: SampleKind
    /// Scored trials in which it stood.
    public var presented: Int
    /// Of those, trials in which the dog indicated it.
    public var indicated: Int
    /// Its figures in this session (station level, as `stats --by sample`).
    public var figures: Figures
}

public struct LayoutSlot: Sendable, Hashable, Codable {
    public var station: Int
    public var sample: String?
    public var kind: SampleKind
    /// What the station saw (nil for trials logged before schema v3).
    public var visited: Bool?
    public var indicated: Bool?
    public var firstIndicationMs: Double?
    public var sniffs: Int?
    public var dwellMs: Double?
}

/// One trial as the log keeps it (after corrections), for listings and exports. Not the
/// engine's `TrialSummary`, which is the trial as the machine ends it.
public struct LoggedTrial: Sendable, Hashable, Codable {
    public var id: String
    public var sessionId: String
    public var dog: String
    public var number: Int
    public var outcome: TrialOutcome
    public var indicatedStation: Int?
    public var latencyMs: Double?
    public var searchMs: Double?
    public var started: String
    public var ended: String
    public var seed: UInt64?
    public var layout: [LayoutSlot]
    public var corrects: String?
    public var reason: String?
}

public struct SessionDetails: Sendable, Hashable, Codable {
    public var id: String
    public var dogId: String
    public var dog: String
    public var handler: String?
    public var program: String?
    public var programSha256: String?
    public var phase: String?
    public var phaseSteps: Int?
    public var step: String?
    public var exercise: String?
    public var mode: TrainingMode
    public var station: String?
    public var settings: String
    public var started: String
    public var ended: String?
    /// `ended`, `stopped`, `interrupted` or `unknown` (see `SessionEnd.How`); nil while the
    /// session runs.
    public var endedHow: String?
    public var endDetail: String?
    public var results: OutcomeCounts
    /// Hits and correct rejections over scored trials (`figures.trialAccuracy`).
    public var correct: Proportion
    /// The session's figures, as `stats --by session` gives them.
    public var figures: Figures
    public var samples: [SessionSample]
    public var improvementSuggestions: [String]
    public var comments: [String]
    public var trials: [LoggedTrial]
}

public struct EventSummary: Sendable, Hashable, Codable {
    public var seq: Int64
    public var id: String
    public var sessionId: String?
    public var trialId: String?
    public var kind: String
    public var station: Int?
    public var time: String
    public var monoNs: Int64
    public var kernelNs: Int64?
    public var value: Int64?
    public var durationNs: Int64?
    public var clickOnsetLatencyNs: Int64?
    public var detail: String?
}

public struct PhaseProgress: Sendable, Hashable, Codable {
    public var phase: String
    public var title: String?
    /// The program it is counted against (nil: not known, milestones only).
    public var program: String?
    /// Each step's progress, when the program is known.
    public var steps: [StepProgress] = []
    public var sessions = 0
    /// Scored trials in the phase.
    public var trials = 0
    public var correct = Proportion(successes: 0, trials: 0)
    public var recentWindow = 0
    public var recentCorrectPercent: Double?
    public var stepsPassed = 0
    public var phaseSteps: Int?
    /// Passed steps over the phase's steps, 100 once graduated; nil if the phase's
    /// size is not known.
    public var progressPercent: Double?
    /// When the phase was graduated, if it was.
    public var graduated: String?
    public var criterion: String?

    public init(phase: String) { self.phase = phase }
}

/// One step of a phase: its share done (`ProgramProgress`), when it was passed, and what passes it.
public struct StepProgress: Sendable, Hashable, Codable {
    public var step: String
    public var title: String
    public var mode: TrainingMode
    public var percent: Int
    /// When its milestone was logged, if it has one.
    public var passed: String?
    /// The criterion, or the exercises' rounds, in words.
    public var rule: String
    /// Scored trials and rounds on the step (in the step's own mode: what its criterion counts).
    public var trials: Int
    /// Scored trials the dog ran on the step in another mode: in the log, not counted toward it.
    public var otherModeTrials: Int = 0
    public var exercises: [ExerciseProgress]
}

/// Finished rounds (or trials) of one exercise, and how many a step without criterion needs.
public struct ExerciseProgress: Sendable, Hashable, Codable {
    public var exercise: String
    public var title: String
    public var done: Int
    public var required: Int?
}
