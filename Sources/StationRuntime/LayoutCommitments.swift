import Foundation
import SessionLog
import StationControl
import TrainingEngine

/// A double-blind session's committed layouts (docs/figures.md, "Committed layouts"): one
/// salt and digest per trial, made as the session starts, so every trial is committed before
/// the first one runs. The salts stay in the log feeder's memory until each trial is over.
struct TrialCommitment: Sendable, Hashable {
    var salt: String
    var digest: String
}

extension TrialCommitment {
    /// Each layout's commitment, naming its stations as the log feeder will log them (the
    /// board's station numbers, from 1) and its samples by `labels` (sample id, any case, to
    /// label). `salt` gives trial i's salt (the station's random source; tests pass their own).
    static func make(
        session: UUID, layouts: [TrialLayout], usedStations: [Int], labels: [String: String],
        salt: (Int) -> String = { _ in LayoutCommitment.newSalt() }
    ) -> [TrialCommitment] {
        let labels = Dictionary(labels.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
        return layouts.enumerated().map { index, layout in
            let stations = layout.stations.enumerated().map { i, content in
                LayoutCommitment.Station(
                    station: (i < usedStations.count ? usedStations[i] : i) + 1, kind: content.kind,
                    label: content.sampleID.flatMap { labels[$0.lowercased()] })
            }
            let salt = salt(index)
            return TrialCommitment(
                salt: salt,
                digest: LayoutCommitment.digest(
                    session: session.uuidString, trial: index + 1, stations: stations, salt: salt))
        }
    }

    /// The log's rows for `commitments`, all at `time` (before the first trial starts).
    static func records(_ commitments: [TrialCommitment], session: UUID, time: LogTime) -> [LayoutCommitmentRecord] {
        commitments.enumerated().map {
            LayoutCommitmentRecord(
                sessionId: session, trialNumber: $0.offset + 1, digest: $0.element.digest, time: time)
        }
    }
}

extension LogFeeder {
    /// Tells the handler's side trial `index`'s commitment before it starts: its number and
    /// digest, never its layout or salt.
    func announceCommitment(ofTrial index: Int) {
        guard index >= 0, index < settings.commitments.count else { return }
        settings.watch?(.committed(trial: settings.firstTrial + index + 1, sha256: settings.commitments[index].digest))
    }

    /// The opening of trial `index`'s commitment (its salt), committed with the trial's own
    /// rows (its layout) once the trial is over; nil when the session commits no layouts. The
    /// handler's side is not told: the layout is shown when the session ends.
    func commitmentOpening(ofTrial index: Int, sessionId: UUID, at time: LogTime) -> LayoutOpeningRecord? {
        guard index >= 0, index < settings.commitments.count else { return nil }
        return LayoutOpeningRecord(
            sessionId: sessionId, trialNumber: settings.firstTrial + index + 1, trialId: trialIds[index],
            salt: settings.commitments[index].salt, time: time)
    }
}
