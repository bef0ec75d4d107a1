import Foundation
import GRDB
import TrainingEngine

/// What `lineupctl verify-blinding` finds in one session: each trial's commitment recomputed
/// from the log (docs/figures.md, "Committed layouts").
public struct BlindingVerification: Sendable, Codable, Hashable {
    public struct Trial: Sendable, Codable, Hashable {
        public var number: Int
        public var trialId: String
        /// The commitment logged before the trial (nil: none).
        public var digest: String?
        /// The salt its opening logged after the trial (nil: none), so anyone can recompute it.
        public var salt: String?
        /// Each way the trial fails, in words; empty: its commitment verifies.
        public var problems: [String]
    }

    public var session: String
    public var mode: TrainingMode
    /// Whether the log has the commitments' tables at all (a log older than them has not).
    public var logHasCommitments: Bool
    public var trials: [Trial]
    /// Trials committed but never run (the session ended or was cut before them).
    public var committedNotRun: [Int]

    public var failed: [Trial] { trials.filter { !$0.problems.isEmpty } }
}

extension LogReader {
    /// Recomputes every commitment of a double-blind session from the log: the layout as its
    /// trial rows give it (`trial_station`, the samples' labels, and `trial.layout`, which the
    /// statistics read), with the salt of its opening, against the digest logged before the
    /// trial. A trial fails when its layout does not hash to its commitment (changed after it
    /// was committed), when it was committed after it started or opened before it ended
    /// (revealed early), or when its commitment or opening is missing or doubled. Times compare
    /// within one boot; across boots the log's order decides (`SessionBoots`).
    public func verifyBlinding(session: String) throws -> BlindingVerification {
        try read { db in
            // Running and double-blind: its trials are withheld, so nothing can be verified yet.
            try LiveDoubleBlind.refuse(db, session: session)
            guard
                let sessionRow = try Row.fetchOne(
                    db, sql: "SELECT mode FROM session WHERE id = ?", arguments: [session])
            else { throw SessionLogError.unknownSession(session) }
            let mode: TrainingMode = try sessionRow.word("mode", of: "session", row: session)
            var result = BlindingVerification(
                session: session, mode: mode, logHasCommitments: try db.tableExists("layout_commitment"), trials: [],
                committedNotRun: [])
            guard mode == .doubleBlind, result.logHasCommitments else { return result }

            var commitments: [Int: [(digest: String, monoNs: Int64)]] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT trial_number, digest, mono_ns FROM layout_commitment WHERE session_id = ?",
                arguments: [session])
            {
                commitments[row["trial_number"], default: []].append((row["digest"], row["mono_ns"]))
            }
            var openings: [Int: [(trialId: String, salt: String, monoNs: Int64)]] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT trial_number, trial_id, salt, mono_ns FROM layout_opening WHERE session_id = ?",
                arguments: [session])
            {
                openings[row["trial_number"], default: []].append((row["trial_id"], row["salt"], row["mono_ns"]))
            }
            // Every row of each trial, the original and its corrections: a correction repeats
            // its trial's layout, so it must open the same commitment.
            let trials = try Row.fetchAll(
                db,
                sql: """
                    SELECT id, number, corrects, layout, started_mono_ns, mono_ns FROM trial
                    WHERE session_id = ? ORDER BY number, corrects IS NOT NULL, mono_ns
                    """, arguments: [session])
            // A resumed session may span boots: a trial run in a later boot than its commitment's
            // (the session's first, where every commitment is logged) started after it.
            let boots = try Self.sessionBoots(db, session: session)
            // A threshold session (issue 38): positions committed ahead with the target's label
            // left empty, and each trial's dilution committed on its own before it started.
            let dilutions = try DilutionCommitmentCheck(db, session: session)
            var run = Set<Int>()
            for row in trials {
                let number: Int = row["number"]
                let trialId: String = row["id"]
                let corrects: String? = row["corrects"]
                run.insert(number)
                var problems: [String] = []
                let committed = commitments[number] ?? []
                let opened = openings[number] ?? []
                let original = corrects == nil
                if committed.isEmpty { problems.append("no commitment was logged for it") }
                if committed.count > 1 { problems.append("it was committed \(committed.count) times") }
                if opened.isEmpty { problems.append("its commitment was never opened (no salt logged)") }
                if opened.count > 1 { problems.append("its commitment was opened \(opened.count) times") }
                if original, let c = committed.first, !boots.ranInLaterBoot(trial: number),
                    c.monoNs > row["started_mono_ns"]
                {
                    problems.append("it was committed after it started (its layout was known uncommitted)")
                }
                if original, let o = opened.first {
                    if o.monoNs < row["mono_ns"] {
                        problems.append("its salt was logged before the trial ended (revealed early)")
                    }
                    if o.trialId != trialId { problems.append("its opening names another trial (\(o.trialId))") }
                }
                let stations = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT ts.station, ts.kind, ts.sample_id, sm.label FROM trial_station ts
                        LEFT JOIN sample sm ON sm.id = ts.sample_id
                        WHERE ts.trial_id = ? ORDER BY ts.station
                        """, arguments: [trialId])
                var layout: [LayoutCommitment.Station] = []
                var compact: [String] = []
                for s in stations {
                    let kind: SampleKind = try s.word("kind", of: "trial_station", row: trialId)
                    layout.append(
                        LayoutCommitment.Station(
                            station: s["station"], kind: kind,
                            label: dilutions.isThreshold && kind == .target ? nil : s["label"]))
                    compact.append("\(s["station"] as Int):\(kind.rawValue):\((s["sample_id"] as String?) ?? "")")
                }
                // `trial.layout` repeats the stations for the statistics: it must say the same.
                let logged = ((row["layout"] as String?) ?? "").split(separator: ";").map(String.init).sorted()
                if logged != compact.sorted() {
                    problems.append("its layout column (trial.layout) disagrees with its stations (trial_station)")
                }
                if let c = committed.first, let o = opened.first,
                    LayoutCommitment.digest(session: session, trial: number, stations: layout, salt: o.salt) != c.digest
                {
                    problems.append("its layout does not match its commitment (changed after it was committed)")
                }
                if dilutions.isThreshold {
                    let target = stations.first { (s: Row) in (s["kind"] as String) == SampleKind.target.rawValue }
                    problems += dilutions.problems(
                        trial: number, original: original, startedMonoNs: row["started_mono_ns"],
                        targetLabel: target?["label"], targetSample: target?["sample_id"], boots: boots)
                }
                let which = original ? "" : " (correction \(trialId.prefix(8)))"
                result.trials.append(
                    BlindingVerification.Trial(
                        number: number, trialId: trialId, digest: committed.first?.digest, salt: opened.first?.salt,
                        problems: problems.map { "trial \(number)\(which): \($0)" }))
            }
            result.committedNotRun = commitments.keys.filter { !run.contains($0) }.sorted()
            return result
        }
    }
}

/// The dilution commitments of a threshold session (`DilutionCommitment`), and each trial's
/// opening (`trial_procedure.dilution_salt`).
struct DilutionCommitmentCheck {
    var isThreshold = false
    var commitments: [Int: [(digest: String, monoNs: Int64)]] = [:]
    var openings: [Int: (salt: String?, sample: String?)] = [:]
    /// Constant stimuli: every trial's dilution committed with the session, in its first boot.
    var committedAtStart = false
    var session: String

    init(_ db: Database, session: String) throws {
        self.session = session
        guard try db.tableExists("trial_procedure") else { return }
        for row in try Row.fetchAll(
            db, sql: "SELECT trial_number, digest, mono_ns FROM dilution_commitment WHERE session_id = ?",
            arguments: [session])
        {
            commitments[row["trial_number"], default: []].append((row["digest"], row["mono_ns"]))
        }
        for row in try Row.fetchAll(
            db,
            sql: "SELECT trial_number, dilution_salt, sample_id, procedure FROM trial_procedure WHERE session_id = ?",
            arguments: [session])
        {
            openings[row["trial_number"]] = (row["dilution_salt"], row["sample_id"])
            if (row["procedure"] as String) == "constant-stimuli" { committedAtStart = true }
        }
        isThreshold = !commitments.isEmpty || !openings.isEmpty
    }

    /// What is wrong with trial `number`'s dilution: uncommitted, committed after it started,
    /// unopened, naming another dilution than its target's station holds, or not matching.
    ///
    /// Across boots (a resumed session): a dilution is committed in the boot its session started
    /// in (the first trial's; constant stimuli: every trial's) or in the boot of the trial before
    /// it, logged with that trial. A trial run in another boot than its commitment's started
    /// after it (the log's order: a resume is logged after everything before it); within one
    /// boot the monotonic times decide (docs/figures.md, "Committed layouts").
    func problems(
        trial number: Int, original: Bool, startedMonoNs: Int64, targetLabel: String?, targetSample: String?,
        boots: SessionBoots = SessionBoots(start: nil, resumes: [])
    ) -> [String] {
        let committedIn = number == 1 || committedAtStart ? boots.start : boots.boot(ofTrial: number - 1)
        let ranIn = boots.boot(ofTrial: number)
        let sameBoot = committedIn == nil || ranIn == nil || committedIn == ranIn
        var out: [String] = []
        let committed = commitments[number] ?? []
        guard let opened = openings[number] else {
            return ["its procedure's row (trial_procedure) is missing"]
        }
        if committed.isEmpty { out.append("no dilution commitment was logged for it") }
        if committed.count > 1 { out.append("its dilution was committed \(committed.count) times") }
        if original, sameBoot, let c = committed.first, c.monoNs > startedMonoNs {
            out.append("its dilution was committed after it started")
        }
        if opened.sample?.lowercased() != targetSample?.lowercased() {
            out.append("its procedure's row names another dilution than its target's station holds")
        }
        guard let salt = opened.salt else {
            out.append("its dilution commitment was never opened (no salt logged)")
            return out
        }
        if let c = committed.first,
            DilutionCommitment.digest(session: session, trial: number, label: targetLabel, salt: salt) != c.digest
        {
            out.append("its dilution does not match its commitment (changed after it was committed)")
        }
        return out
    }
}
