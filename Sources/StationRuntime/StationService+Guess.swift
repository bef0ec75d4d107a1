import Foundation
import SessionLog
import StationControl
import TrainingEngine

// The handler's guess (issue 21): in a double-blind session the handler may say which station
// they believe holds the target, before the dog's indication. Logged with its time; counted by
// `LogReader.guessStats` (docs/figures.md, "The handler's guess").
extension StationService {
    /// Records the guess for the trial being searched, or, between trials, for the next one to
    /// start. Refused outside a double-blind session, after the dog's indication in the trial,
    /// and for a trial already guessed (the first guess stands). Neither the reply nor a refusal
    /// says anything of the layout: the handler must learn nothing from guessing.
    public func guess(_ entry: GuessEntry) throws(ControlRefusal) -> GuessRecorded {
        switching.lock()
        defer { switching.unlock() }
        guard let current, let segment else {
            throw ControlRefusal(.noSession, "no session is running: a guess is for a trial of a double-blind session")
        }
        guard current.mode == .doubleBlind else {
            throw ControlRefusal(
                .badRequest,
                "this session is \(current.mode.rawValue): the handler's guess is recorded in double-blind sessions only"
            )
        }
        let used = segment.usedStations
        let names = used.map { $0 < stationNames.count ? stationNames[$0] : "\($0 + 1)" }
        let typed = entry.station.trimmingCharacters(in: .whitespaces)
        let board: Int
        if let i = names.firstIndex(where: { $0.caseInsensitiveCompare(typed) == .orderedSame }) {
            board = used[i]
        } else if let n = Int(typed), n > 0, used.contains(n - 1) {  // n > 0: Int.min - 1 would trap
            board = n - 1
        } else {
            throw ControlRefusal(
                .unknown,
                "no station \"\(entry.station)\" in this session's lineup: guess one of \(names.joined(separator: ", "))"
            )
        }
        // Which trial: the one being searched, else the next to start (loaded or being loaded).
        let engine = segment.handler.snapshot.read()
        let total = segment.layouts.count
        let trial: Int
        switch engine.activity {
        case .searching:
            trial = engine.begun - 1
            // The feeder hears of an indication a few milliseconds after the hot thread; the
            // figures also drop any guess logged after the trial's first indication.
            if segment.feeder.indicatedTrial.load(ordering: .acquiring) == trial {
                throw ControlRefusal(
                    .notReady,
                    "the dog has already indicated in trial \(current.firstTrial + trial + 1): a guess must come before the dog's indication"
                )
            }
        case .loading:
            trial = engine.begun - 1
        case .idle, .interTrial:
            trial = engine.begun
        case .exercise, .exerciseOver, .ended:
            trial = total
        }
        guard !current.aborted, trial >= 0, trial < total, trial < segment.feeder.trialIds.count else {
            throw ControlRefusal(.notReady, "no trial of this session is left to guess")
        }
        let trialId = segment.feeder.trialIds[trial]
        // A resumed session's segment runs the block from trial firstTrial + 1.
        let number = current.firstTrial + trial + 1
        if (try? log.reader.guessRecorded(forTrial: trialId)) == true {
            throw ControlRefusal(
                .duplicate, "a guess is already recorded for trial \(number): one guess per trial, the first stands")
        }
        _ = try adding {
            try log.recordGuess(
                HandlerGuess(
                    sessionId: current.sessionId, trialId: trialId, trialNumber: number,
                    station: board + 1)
            ).id
        }
        return GuessRecorded(trial: number, station: names[used.firstIndex(of: board)!])
    }
}
