import Foundation
import GRDB
import Rescoring
import TrainingEngine

// A threshold step's state per trial (issue 38, schema v13): what the procedure presented
// (its rung and the dilution at the target's station, or a catch trial without a target) and
// what it made of the dog's answer (its step, reversals so far, the next rung, whether it
// stopped). Written in the trial's own transaction; read back with the trial (`LoggedTrial`
// `.procedure`), by `session show` and `trials`. The column meanings: docs/session-log.md,
// "trial_procedure".

/// One trial's procedure state as the log keeps it.
public struct TrialProcedureRecord: Sendable, Hashable, Codable {
    public var id: UUID
    public var sessionId: UUID
    /// The trial's row (written in the same transaction).
    public var trialId: UUID
    /// The trial's number in its session, from 1 (a correction keeps it).
    public var trialNumber: Int
    public var state: ProcedureTrialState
    /// The dilution presented at the target's station (nil on a catch trial, or unlabelled).
    public var sampleId: UUID?
    /// The salt of the trial's dilution commitment (`DilutionCommitment`), opened with the
    /// trial; nil when none was committed (a session that is not double-blind).
    public var dilutionSalt: String?
    public var time: LogTime

    public init(
        id: UUID = UUID(), sessionId: UUID, trialId: UUID, trialNumber: Int, state: ProcedureTrialState,
        sampleId: UUID?, dilutionSalt: String? = nil, time: LogTime = .now()
    ) {
        self.id = id
        self.sessionId = sessionId
        self.trialId = trialId
        self.trialNumber = trialNumber
        self.state = state
        self.sampleId = sampleId
        self.dilutionSalt = dilutionSalt
        self.time = time
    }
}

/// A row of `trial_procedure`.
struct TrialProcedureRow: Encodable, PersistableRecord {
    static let databaseTableName = "trial_procedure"
    var id: String
    var sessionId: String
    var trialId: String
    var trialNumber: Int
    var procedure: String
    var rung: Int?
    var sampleId: String?
    var catchTrial: Int
    var direction: String
    var reversal: Int
    var reversals: Int
    var nextRung: Int?
    var stopped: Int
    var dilutionSalt: String?
    var monoNs: Int64
    var wallNs: Int64

    enum CodingKeys: String, CodingKey {
        case id, procedure, rung, direction, reversal, reversals, stopped
        case sessionId = "session_id"
        case trialId = "trial_id"
        case trialNumber = "trial_number"
        case sampleId = "sample_id"
        case catchTrial = "catch_trial"
        case nextRung = "next_rung"
        case dilutionSalt = "dilution_salt"
        case monoNs = "mono_ns"
        case wallNs = "wall_ns"
    }
}

extension TrialProcedureRecord: AppendableRecord {
    public func append(to db: Database) throws {
        try TrialProcedureRow(
            id: id.logText, sessionId: sessionId.logText, trialId: trialId.logText, trialNumber: trialNumber,
            procedure: state.procedure, rung: state.rung, sampleId: sampleId?.logText,
            catchTrial: state.catchTrial ? 1 : 0, direction: state.directionWord, reversal: state.reversal ? 1 : 0,
            reversals: state.reversals, nextRung: state.nextRung, stopped: state.stopped ? 1 : 0,
            dilutionSalt: dilutionSalt, monoNs: time.monoNs, wallNs: time.wallNs
        ).insert(db)
    }
}

/// A trial's procedure state as listings show it: the dilution by its label.
public struct LoggedProcedureState: Sendable, Hashable, Codable {
    public var procedure: String
    public var rung: Int?
    /// The dilution's label (nil on a catch trial, or when none was recorded).
    public var dilution: String?
    public var catchTrial: Bool
    /// `down`, `up` or `none`: the step after the answer.
    public var direction: String
    public var reversal: Bool
    public var reversals: Int
    public var nextRung: Int?
    public var stopped: Bool

    /// `rung 3 (T-1/1e5), down, 2 reversals` or `catch trial, 2 reversals`: one listing cell.
    public var words: String {
        var parts: [String] = []
        if catchTrial {
            parts.append("catch trial")
        } else {
            parts.append("rung \(rung.map(String.init) ?? "?")" + (dilution.map { " (\($0))" } ?? ""))
        }
        if procedure == "staircase" {
            if direction != "none" { parts.append(direction) }
            parts.append("\(reversals) reversal\(reversals == 1 ? "" : "s")" + (reversal ? " (this one)" : ""))
        }
        if stopped { parts.append("stopped") }
        return parts.joined(separator: ", ")
    }
}

extension LogReader {
    /// The procedure state of each trial of a session with one, by trial number.
    static func procedureStates(_ db: Database, session: String) throws -> [Int: LoggedProcedureState] {
        var out: [Int: LoggedProcedureState] = [:]
        for row in try Row.fetchAll(
            db,
            sql: """
                SELECT p.*, sm.label FROM trial_procedure p LEFT JOIN sample sm ON sm.id = p.sample_id
                WHERE p.session_id = ? ORDER BY p.trial_number
                """, arguments: [session])
        {
            out[row["trial_number"]] = LoggedProcedureState(
                procedure: row["procedure"], rung: row["rung"], dilution: row["label"],
                catchTrial: (row["catch_trial"] as Int) != 0, direction: row["direction"],
                reversal: (row["reversal"] as Int) != 0, reversals: row["reversals"], nextRung: row["next_rung"],
                stopped: (row["stopped"] as Int) != 0)
        }
        return out
    }
}

extension LogReader {
    /// A threshold session's procedure for the re-scorer: its rules from the session's settings
    /// (`procedure_*`, as lineupd logs them) and each trial's row; nil for any other session.
    static func loggedProcedure(_ db: Database, session: String, settings: [String: Any]) throws -> LoggedProcedure? {
        func text(_ key: String) -> String? { (settings[key] as? String).flatMap { $0.isEmpty ? nil : $0 } }
        func int(_ key: String) -> Int? { text(key).flatMap { Int($0) } }
        guard let name = text("procedure"), try db.tableExists("trial_procedure") else { return nil }
        let rules: ProcedureRules
        switch name {
        case "staircase":
            guard let down = int("procedure_down"), let step = int("procedure_step"),
                let start = int("procedure_start_rung"), let ladder = int("procedure_ladder_rungs")
            else { return nil }
            rules = .staircase(
                down: down, step: step, startRung: start, ladderRungs: ladder,
                stopAfterReversals: int("procedure_stop_after_reversals"),
                stopAfterTrials: int("procedure_stop_after_trials"))
        case "constant-stimuli":
            guard let blocks = int("procedure_blocks"), let rungs = text("procedure_rungs") else { return nil }
            rules = .constantStimuli(
                rungs: rungs.split(separator: ",").compactMap { Int($0) }, blocks: blocks,
                catchTrialsPerBlock: int("procedure_catch_trials_per_block") ?? 0)
        default:
            return nil
        }
        let rows = try Row.fetchAll(
            db, sql: "SELECT trial_number, rung, reversals, stopped FROM trial_procedure WHERE session_id = ?",
            arguments: [session]
        ).map {
            ProcedureRow(
                number: $0["trial_number"], rung: $0["rung"], reversals: $0["reversals"],
                stopped: ($0["stopped"] as Int) != 0)
        }
        return LoggedProcedure(rules: rules, trials: int("trials") ?? rows.count, rows: rows)
    }
}

extension Schema {
    /// v13: a threshold step's state per trial, and a double-blind threshold trial's dilution
    /// commitment. One `trial_procedure` row per trial number in a session (a correction of the
    /// trial keeps the procedure's row: the procedure chose before the outcome was corrected).
    /// A catch trial has no rung and no dilution; every other row has its rung. The commitment
    /// is logged before its trial starts and opened by the row's `dilution_salt`. Append-only
    /// like the rest of the log.
    static func trialProcedure(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE trial_procedure (
                    id TEXT PRIMARY KEY NOT NULL,
                    session_id TEXT NOT NULL REFERENCES session(id),
                    trial_id TEXT NOT NULL REFERENCES trial(id),
                    trial_number INTEGER NOT NULL CHECK (trial_number >= 1),
                    procedure TEXT NOT NULL CHECK (procedure IN ('staircase', 'constant-stimuli')),
                    rung INTEGER CHECK (rung >= 0),
                    sample_id TEXT REFERENCES sample(id),
                    catch_trial INTEGER NOT NULL CHECK (catch_trial IN (0, 1)),
                    direction TEXT NOT NULL CHECK (direction IN ('down', 'up', 'none')),
                    reversal INTEGER NOT NULL CHECK (reversal IN (0, 1)),
                    reversals INTEGER NOT NULL CHECK (reversals >= 0),
                    next_rung INTEGER CHECK (next_rung >= 0),
                    stopped INTEGER NOT NULL CHECK (stopped IN (0, 1)),
                    dilution_salt TEXT,
                    mono_ns INTEGER NOT NULL,
                    wall_ns INTEGER NOT NULL,
                    CHECK ((catch_trial = 1) = (rung IS NULL)),
                    CHECK (catch_trial = 0 OR sample_id IS NULL));
                CREATE UNIQUE INDEX trial_procedure_by_trial ON trial_procedure(session_id, trial_number);
                CREATE TABLE dilution_commitment (
                    id TEXT PRIMARY KEY NOT NULL,
                    session_id TEXT NOT NULL REFERENCES session(id),
                    trial_number INTEGER NOT NULL CHECK (trial_number >= 1),
                    digest TEXT NOT NULL,
                    mono_ns INTEGER NOT NULL,
                    wall_ns INTEGER NOT NULL);
                CREATE UNIQUE INDEX dilution_commitment_by_trial ON dilution_commitment(session_id, trial_number);
                """)
        try appendOnly(db, "trial_procedure")
        try appendOnly(db, "dilution_commitment")
    }
}
