import Figures
import Foundation
import GRDB
import TrainingEngine

extension SessionLog {
    /// Corrects a trial: the trainer's or researcher's word (video review, a sensor that
    /// missed the hold) replaces how the station scored it. The log is append-only, so this is
    /// a new trial row that `corrects` the one it replaces, with the same session, number,
    /// layout and times; what each station saw is kept, but the indicated station becomes the
    /// only one indicated (`ScoredTrial.corrected`). `trial_current`, and so every listing,
    /// statistic and export, shows the correction; the original stays in the log.
    ///
    /// Refused, with nothing written: an unknown trial; one already corrected (the newest
    /// correction is the one to correct, and it is named); an indicated station the trial did
    /// not have; an outcome the layout and the indicated station contradict; no reason; a
    /// correction that changes nothing.
    public func correctTrial(
        _ trialText: String, outcome: TrialOutcome, indicatedStation: Int?, reason: String
    ) throws -> TrialRecord {
        let reason = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !reason.isEmpty else {
            throw SessionLogError.invalidInput("a correction needs a reason (--reason \"video review: no hold\")")
        }
        var made: TrialRecord?
        try writeChecked { db in
            guard let id = try LogReader.resolve(db, table: "trial", text: trialText, kind: "trial") else {
                throw SessionLogError.unknownTrial(trialText)
            }
            if let newer = try String.fetchOne(
                db, sql: "SELECT id FROM trial WHERE corrects = ? ORDER BY wall_ns DESC LIMIT 1", arguments: [id])
            {
                throw SessionLogError.invalidInput(
                    "trial \(id.prefix(8)) was already corrected by \(newer.prefix(8)): correct that one instead")
            }
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM trial WHERE id = ?", arguments: [id]) else {
                throw SessionLogError.unknownTrial(trialText)
            }
            let stations = try Row.fetchAll(
                db,
                sql: """
                    SELECT station, sample_id, kind, visited, indicated, first_indication_ns, sniffs, dwell_ns, novel
                    FROM trial_station WHERE trial_id = ? ORDER BY station
                    """, arguments: [id])
            let slots: [StationSlot] = stations.map { s in
                let visited: Int? = s["visited"]
                return StationSlot(
                    station: s["station"], sampleId: (s["sample_id"] as String?).flatMap(UUID.init(uuidString:)),
                    kind: SampleKind(rawValue: s["kind"]) ?? .blank,
                    seen: visited.map { v in
                        StationSeen(
                            visited: v != 0, indicated: (s["indicated"] as Int? ?? 0) != 0,
                            firstIndicationNs: s["first_indication_ns"], sniffs: s["sniffs"] ?? 0,
                            dwellNs: s["dwell_ns"] ?? 0)
                    }, novel: (s["novel"] as Int?).map { $0 != 0 })
            }
            // A refusal names the stations as the trainer reads them (issue 32), the number beside.
            let settings = try String.fetchOne(
                db, sql: "SELECT settings FROM session WHERE id = ?", arguments: [row["session_id"] as String])
            let names = StationNames(settings: settings, numbers: slots.map(\.station))
            try Self.checkCorrection(outcome: outcome, indicated: indicatedStation, slots: slots, names: names)
            let oldOutcome = TrialOutcome(rawValue: row["outcome"]) ?? .aborted
            let oldIndicated: Int? = row["indicated_station"]
            guard oldOutcome != outcome || oldIndicated != indicatedStation else {
                throw SessionLogError.invalidInput(
                    "trial \(id.prefix(8)) is already \(outcome.rawValue)\(indicatedStation.map { " at station \(names.said($0))" } ?? ""): nothing to correct"
                )
            }
            // The one rule for what a correction does to each station's view.
            let scored = ScoredTrial(
                outcome: oldOutcome, latencyNs: row["latency_ns"],
                stations: slots.map {
                    StationObservation(station: $0.station, kind: $0.kind, sample: $0.sampleId?.logText, seen: $0.seen)
                }
            ).corrected(outcome: outcome, indicatedStation: indicatedStation)
            let correction = TrialRecord(
                sessionId: UUID(uuidString: row["session_id"])!, number: row["number"],
                seed: (row["seed"] as Int64?).map { UInt64(bitPattern: $0) },
                layout: zip(slots, scored.stations).map { slot, station in
                    StationSlot(
                        station: slot.station, sampleId: slot.sampleId, kind: slot.kind, seen: station.seen,
                        novel: slot.novel)
                }, outcome: outcome, indicatedStation: indicatedStation,
                latencyNs: scored.latencyNs ?? (indicatedStation == oldIndicated ? row["latency_ns"] : nil),
                searchNs: row["search_ns"],
                started: LogTime(monoNs: row["started_mono_ns"], wallNs: row["started_wall_ns"]),
                ended: LogTime(monoNs: row["mono_ns"], wallNs: row["wall_ns"]), corrects: UUID(uuidString: id),
                reason: reason)
            try correction.append(to: db)
            // When the correction was made (the row keeps the trial's own times).
            try LoggedEvent(
                kind: .note, sessionId: correction.sessionId, trialId: correction.id,
                detail: #"{"trial_corrected":"\#(id)"}"#
            ).append(to: db)
            made = correction
        }
        guard let made else { throw SessionLogError.database("the correction was not written") }
        return made
    }

    /// An outcome the layout and the indicated station allow, or a one-line refusal.
    static func checkCorrection(outcome: TrialOutcome, indicated: Int?, slots: [StationSlot], names: StationNames)
        throws
    {
        let target = slots.first { $0.kind == .target }?.station
        if let indicated, !slots.contains(where: { $0.station == indicated }) {
            throw SessionLogError.invalidInput(
                "--indicated \(indicated): the trial had stations \(slots.map { names.said($0.station) }.joined(separator: ", "))"
            )
        }
        switch outcome {
        case .hit:
            guard let target else { throw SessionLogError.invalidInput("hit: the trial had no target") }
            guard indicated == target else {
                throw SessionLogError.invalidInput("hit: give --indicated \(names.said(target)), the target's station")
            }
        case .falseAlert:
            guard let indicated else {
                throw SessionLogError.invalidInput("false-alert: give --indicated with the station the dog indicated")
            }
            guard indicated != target else {
                throw SessionLogError.invalidInput(
                    "false-alert: station \(names.said(indicated)) held the target (a hit)")
            }
        case .miss:
            guard target != nil else {
                throw SessionLogError.invalidInput("miss: the trial had no target (a correct-rejection?)")
            }
            guard indicated == nil else {
                throw SessionLogError.invalidInput("miss: nothing was indicated; leave out --indicated")
            }
        case .correctRejection:
            guard target == nil else {
                throw SessionLogError.invalidInput(
                    "correct-rejection: the trial had a target at station \(names.said(target!))")
            }
            guard indicated == nil else {
                throw SessionLogError.invalidInput("correct-rejection: nothing was indicated; leave out --indicated")
            }
        case .aborted:
            guard indicated == nil else {
                throw SessionLogError.invalidInput("aborted: an aborted trial is not scored; leave out --indicated")
            }
        }
    }
}
