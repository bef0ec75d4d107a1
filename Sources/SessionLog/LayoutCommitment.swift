import Foundation
import GRDB
import TrainingEngine

/// A double-blind trial's committed layout: the SHA-256 of its layout and a random salt,
/// logged (and shown to the handler's side) before the trial starts, opened by logging the
/// salt after the trial. The salt keeps the digest from being guessed by hashing every
/// possible layout; the session and trial number bind it to one trial.
///
/// The bytes hashed, UTF-8, each line ended by one `\n` (docs/figures.md, "Committed
/// layouts"):
///
///     lineup layout commitment v1
///     session <session id, lower-case>
///     trial <number, from 1>
///     station <number> <kind> <sample label, or nothing>     (one per station, in order)
///     salt <salt, 64 lower-case hex digits>
public enum LayoutCommitment {
    /// One station of the layout as the commitment names it: the board's station number
    /// (from 1, as `trial_station.station`), the kind, and the sample's label (nil: none).
    public struct Station: Sendable, Hashable {
        public var station: Int
        public var kind: SampleKind
        public var label: String?

        public init(station: Int, kind: SampleKind, label: String?) {
            self.station = station
            self.kind = kind
            self.label = label
        }
    }

    /// The exact bytes hashed; stations are put in ascending order of their number.
    public static func bytes(session: String, trial: Int, stations: [Station], salt: String) -> [UInt8] {
        var text = "lineup layout commitment v1\nsession \(session.lowercased())\ntrial \(trial)\n"
        for s in stations.sorted(by: { $0.station < $1.station }) {
            text += "station \(s.station) \(s.kind.rawValue) \(s.label ?? "")\n"
        }
        text += "salt \(salt)\n"
        return Array(text.utf8)
    }

    /// The commitment: the SHA-256 of `bytes`, in lower-case hex (as `sha256sum` prints it).
    public static func digest(session: String, trial: Int, stations: [Station], salt: String) -> String {
        hex(SHA256Digest.digest(bytes(session: session, trial: trial, stations: stations, salt: salt)))
    }

    /// A new salt: 32 bytes from the system's random source, in hex. The station's own, never
    /// the layout's seed (which is logged with the session and would let anyone redo it).
    public static func newSalt() -> String {
        var generator = SystemRandomNumberGenerator()
        return hex((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}

/// A row of `layout_commitment`: written before the trial starts (with the session, for every
/// trial of the block).
public struct LayoutCommitmentRecord: Sendable, Hashable {
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

extension LayoutCommitmentRecord: AppendableRecord {
    public func append(to db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO layout_commitment (id, session_id, trial_number, digest, mono_ns, wall_ns)
                VALUES (?, ?, ?, ?, ?, ?)
                """,
            arguments: [id.logText, sessionId.logText, trialNumber, digest, time.monoNs, time.wallNs])
    }
}

/// A row of `layout_opening`: the salt of a trial's commitment, written once the trial is over
/// (its layout is the trial's own rows, written with it).
public struct LayoutOpeningRecord: Sendable, Hashable {
    public var id: UUID
    public var sessionId: UUID
    public var trialNumber: Int
    public var trialId: UUID
    public var salt: String
    public var time: LogTime

    public init(
        id: UUID = UUID(), sessionId: UUID, trialNumber: Int, trialId: UUID, salt: String, time: LogTime = .now()
    ) {
        self.id = id
        self.sessionId = sessionId
        self.trialNumber = trialNumber
        self.trialId = trialId
        self.salt = salt
        self.time = time
    }
}

extension LayoutOpeningRecord: AppendableRecord {
    public func append(to db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO layout_opening (id, session_id, trial_number, trial_id, salt, mono_ns, wall_ns)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [id.logText, sessionId.logText, trialNumber, trialId.logText, salt, time.monoNs, time.wallNs])
    }
}
