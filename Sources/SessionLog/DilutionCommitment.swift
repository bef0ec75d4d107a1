import Foundation
import GRDB

/// A double-blind threshold trial's dilution, committed before the trial starts (issue 38).
/// The trial's positions (which station holds the target, the controls, the blanks) are
/// committed with the session as every double-blind layout is (`LayoutCommitment`, the target's
/// label left empty: the procedure has not chosen it yet); the dilution is chosen by the
/// procedure from the dog's answers so far, so it is committed on its own once chosen: with
/// the session for the first trial (and for every trial of the method of constant stimuli,
/// whose order is fixed ahead), and for each later staircase trial in the transaction that
/// logs the trial before it. The salt is opened with the trial (`trial_procedure.dilution_salt`).
///
/// The bytes hashed, UTF-8, each line ended by one `\n` (docs/figures.md, "Committed layouts"):
///
///     lineup dilution commitment v1
///     session <session id, lower-case>
///     trial <number, from 1>
///     dilution <the dilution's label; nothing on a catch trial>
///     salt <salt, 64 lower-case hex digits>
public enum DilutionCommitment {
    public static func bytes(session: String, trial: Int, label: String?, salt: String) -> [UInt8] {
        Array(
            "lineup dilution commitment v1\nsession \(session.lowercased())\ntrial \(trial)\ndilution \(label ?? "")\nsalt \(salt)\n"
                .utf8)
    }

    public static func digest(session: String, trial: Int, label: String?, salt: String) -> String {
        LayoutCommitment.hex(SHA256Digest.digest(bytes(session: session, trial: trial, label: label, salt: salt)))
    }
}

/// A row of `dilution_commitment`.
public struct DilutionCommitmentRecord: Sendable, Hashable {
    public var id: UUID
    public var sessionId: UUID
    public var trialNumber: Int
    public var digest: String
    public var time: LogTime

    public init(id: UUID = UUID(), sessionId: UUID, trialNumber: Int, digest: String, time: LogTime = .now()) {
        self.id = id
        self.sessionId = sessionId
        self.trialNumber = trialNumber
        self.digest = digest
        self.time = time
    }
}

extension DilutionCommitmentRecord: AppendableRecord {
    public func append(to db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO dilution_commitment (id, session_id, trial_number, digest, mono_ns, wall_ns)
                VALUES (?, ?, ?, ?, ?, ?)
                """,
            arguments: [id.logText, sessionId.logText, trialNumber, digest, time.monoNs, time.wallNs])
    }
}
