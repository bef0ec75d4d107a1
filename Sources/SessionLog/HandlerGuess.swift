import Foundation
import GRDB

// The handler's guess (issue 21): in a double-blind session the handler may say, before the
// dog's indication, which station they believe holds the target. Logged so a researcher can
// show the handler did not know (hit rate at chance) and see whether the dog's false alerts
// followed the handler's belief (Lit, Schweitzer & Oberbauer 2011's cueing). The figures are in
// Figures/Guesses.swift, their queries in LogReader+Guesses.swift; docs/figures.md, "The
// handler's guess", defines them.

/// One guess: the trial it is for and the station named, as the log numbers stations (from 1).
public struct HandlerGuess: Sendable, Hashable, Codable {
    public var id: UUID
    public var sessionId: UUID
    /// The id the trial's row has (or will have: a trial's row is written once it is scored,
    /// and a guess is made before that).
    public var trialId: UUID
    /// The trial's number in its session, from 1.
    public var trialNumber: Int
    public var station: Int
    /// When the handler made it: only a guess before the dog's first indication counts.
    public var time: LogTime

    public init(
        id: UUID = UUID(), sessionId: UUID, trialId: UUID, trialNumber: Int, station: Int, time: LogTime = .now()
    ) {
        self.id = id
        self.sessionId = sessionId
        self.trialId = trialId
        self.trialNumber = trialNumber
        self.station = station
        self.time = time
    }
}

/// A row of `handler_guess`.
struct HandlerGuessRow: Encodable, PersistableRecord {
    static let databaseTableName = "handler_guess"
    var id: String
    var sessionId: String
    var trialId: String
    var trialNumber: Int
    var station: Int
    var monoNs: Int64
    var wallNs: Int64

    enum CodingKeys: String, CodingKey {
        case id, station
        case sessionId = "session_id"
        case trialId = "trial_id"
        case trialNumber = "trial_number"
        case monoNs = "mono_ns"
        case wallNs = "wall_ns"
    }
}

extension HandlerGuess: AppendableRecord {
    public func append(to db: Database) throws {
        try HandlerGuessRow(
            id: id.logText, sessionId: sessionId.logText, trialId: trialId.logText, trialNumber: trialNumber,
            station: station, monoNs: time.monoNs, wallNs: time.wallNs
        ).insert(db)
    }
}

extension Schema {
    /// The handler's guesses, one per trial at most (the unique index: the first guess stands).
    /// `trial_id` has no foreign key, as `event.trial_id` has none: the guess is written before
    /// the trial's row, which waits for the trial's outcome.
    static func handlerGuess(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE handler_guess (
                    id TEXT PRIMARY KEY NOT NULL,
                    session_id TEXT NOT NULL REFERENCES session(id),
                    trial_id TEXT NOT NULL,
                    trial_number INTEGER NOT NULL,
                    station INTEGER NOT NULL,
                    mono_ns INTEGER NOT NULL,
                    wall_ns INTEGER NOT NULL);
                CREATE UNIQUE INDEX handler_guess_one_per_trial ON handler_guess(trial_id);
                CREATE INDEX handler_guess_by_session ON handler_guess(session_id);
                CREATE TRIGGER handler_guess_append_only_update BEFORE UPDATE ON handler_guess
                BEGIN SELECT RAISE(ABORT, 'the session log is append-only'); END;
                CREATE TRIGGER handler_guess_append_only_delete BEFORE DELETE ON handler_guess
                BEGIN SELECT RAISE(ABORT, 'the session log is append-only'); END;
                """)
    }
}

extension SessionLog {
    /// Records the handler's guess for a trial; a second guess for the same trial is refused
    /// (`SessionLogError.invalidInput`, saying the first stands) and nothing is written.
    @discardableResult
    public func recordGuess(_ guess: HandlerGuess) throws -> HandlerGuess {
        try writeChecked { db in
            if try Bool.fetchOne(
                db, sql: "SELECT 1 FROM handler_guess WHERE trial_id = ?", arguments: [guess.trialId.logText]) == true
            {
                throw SessionLogError.invalidInput(
                    "a guess is already recorded for trial \(guess.trialNumber): one guess per trial, the first stands")
            }
            try guess.append(to: db)
        }
        return guess
    }
}

extension LogReader {
    /// Whether a guess is already logged for the trial with this id.
    public func guessRecorded(forTrial trialId: UUID) throws -> Bool {
        try read { db in
            try db.tableExists("handler_guess")
                && Bool.fetchOne(
                    db, sql: "SELECT 1 FROM handler_guess WHERE trial_id = ?", arguments: [trialId.logText]) == true
        }
    }
}
