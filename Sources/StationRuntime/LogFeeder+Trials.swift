import Figures
import Foundation
import SessionLog
import TrainingEngine

/// Scoring and committing: a trial's end, scored by the one implementation (`Tally`) and committed
/// to the log with its samples and what each station saw.
extension LogFeeder {
    func endTrial(_ end: TrialEnd) {
        searching.store(-1, ordering: .releasing)
        roundEndsAt.store(0, ordering: .releasing)
        guard end.trial >= 0 && end.trial < settings.layouts.count, let sessionId = settings.sessionId else { return }
        let outcome = end.outcome.outcome
        // A threshold trial's target holds the dilution its procedure chose (ThresholdFeed).
        let layout =
            settings.threshold?.filled(settings.layouts[end.trial], trial: end.trial)
            ?? settings.layouts[end.trial]
        let latency = end.firstStation >= 0 ? Int64(bitPattern: end.firstAt &- end.startedAt) : nil
        // The hot loop's masks are the authority on visits and indications; the notes add
        // times, sniffs and dwell.
        let seen = observer.stations(visitedMask: end.visitedMask, indicatedMask: end.indicatedMask)
        let scored = ScoredTrial(outcome: outcome, latencyNs: latency, layout: layout, seen: seen)
        tally.add(scored)
        let slots = scored.stations.map {
            // The sample that sat in the station: what every statistic by sample rests on.
            StationSlot(
                station: number($0.station - 1), sampleId: $0.sample.flatMap(UUID.init(uuidString:)), kind: $0.kind,
                seen: $0.seen,
                novel: $0.station >= 1 && $0.station <= layout.stations.count
                    ? layout.stations[$0.station - 1].novel : nil)
        }
        let record = TrialRecord(
            id: trialIds[end.trial], sessionId: sessionId, number: settings.firstTrial + end.trial + 1,
            seed: settings.blockSeed,
            layout: slots, outcome: outcome, indicatedStation: end.firstStation >= 0 ? number(end.firstStation) : nil,
            latencyNs: latency,
            searchNs: Int64(bitPattern: end.endedAt &- end.startedAt), started: time(end.startedAt),
            ended: time(end.endedAt), reason: reason(end, outcome))
        // A double-blind trial's commitment is opened in the same transaction as its layout.
        var records: [any AppendableRecord] = [record]
        if let opening = commitmentOpening(ofTrial: end.trial, sessionId: sessionId, at: record.ended) {
            records.append(opening)
        }
        // Its procedure's state, and the next trial's dilution committed, before `committed`
        // lets the next trial start.
        records +=
            settings.threshold?.record(
                trial: end.trial, trialId: record.id, number: record.number, outcome: outcome, time: record.ended) ?? []
        do {
            try writer.commit(records)
        } catch {
            if case SessionLogError.notYetOnDisk(let reason) = error {
                // Kept in the writer's spool and retried: the station goes on clicking. Said once.
                trialsSpooled += 1
                if trialsSpooled == 1 {
                    Log.sessionLog.warning(
                        "trial \(settings.firstTrial + end.trial + 1) is not on disk yet (\(reason)); the log keeps it in memory and retries"
                    )
                }
            } else if failure == nil {
                failure = "committing trial \(settings.firstTrial + end.trial + 1): \(error)"
            }
        }
        printLine(end, layout: layout)
        announceCommitment(ofTrial: end.trial + 1)
        // A trial that never started has no visits of its own: none may be carried over.
        visits.removeAll()
        current = -1
        committed.add(1, ordering: .releasing)
        // A repetition is done once its round is committed: status and `layout` then agree on
        // which round is next (counting it at the exercise's end raced the commit).
        if settings.trainerLed { exercisesDone.add(1, ordering: .releasing) }
    }

    /// Why a trial needs a second look: aborted, or a sensor stuck or chattering during it.
    func reason(_ end: TrialEnd, _ outcome: TrialOutcome) -> String? {
        if outcome == .aborted {
            guard let station = refusedBy, current < 0 else { return "the station was stopped" }
            return "sensor fault: never started, station \(name(station)) was active at its start"
        }
        guard end.sensorFaultMask != 0 else { return nil }
        let stations = (0..<64).filter { end.sensorFaultMask & (1 << UInt64($0)) != 0 }.map {
            "\(name($0)) \(trialFaults[$0] == .chatter ? "chattering" : "stuck")"
        }
        return "sensor fault: station \(stations.joined(separator: ", ")) during the trial"
    }
}
