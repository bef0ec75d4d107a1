import Foundation
import SessionLog
import Synchronization
import Thresholds
import TrainingEngine

/// How many trials of the block may still run: the layouts' count until a threshold
/// procedure stops, then the trials run. Read by the engine handler on the hot thread
/// (lock-free), lowered by the log feeder.
final class BlockLimit: Sendable {
    let trials: Atomic<Int>
    init(trials: Int) { self.trials = Atomic(trials) }
}

/// A threshold session's procedure as the station runs it (issue 38; docs/programs.md,
/// "Threshold steps"). The engine's `ThresholdRun` decides; this keeps it on the log feeder's
/// thread, which records each trial's answer, fills the trial's target with the dilution the
/// procedure chose, and chooses the next one before `committed` counts the trial: so the
/// assistant's layout, the virtual dog and the handler's ready press (held until the trial
/// before is logged) all see the next trial's dilution, or the block's end, in time. Nothing
/// of it runs on the hot thread: the machine needs only the target's station, fixed ahead.
///
/// Trials are counted in the session (`index`, from 0) inside; the feeder and the segment count
/// them in the segment, which for a resumed session starts at `firstTrial` (`goOn(from:)`).
final class ThresholdFeed: @unchecked Sendable {
    let session: UUID
    /// The ladder's samples (ids, lower-case), labels and concentrations, weakest first.
    let ladder: [String]
    let labels: [String]
    let concentrations: [Double]
    /// Double-blind: each trial's dilution is committed before it starts.
    let blind: Bool
    let limit: BlockLimit
    /// Each trial's dilution-commitment salt (double-blind), by trial index.
    let salts: [String]
    /// The session's trial the segment's first is (0; where a resumed session goes on).
    /// Set before the segment starts.
    private(set) var firstTrial = 0
    /// Feeder thread only.
    private var run: ThresholdRun
    /// The next trial not yet logged (its index) and its rung (nil: a catch trial, or none).
    private let upcoming = Mutex<(index: Int, rung: Int?)>((0, nil))

    init(
        session: UUID, procedure: ThresholdProcedure, ladder: [String], labels: [String], concentrations: [Double],
        trials: Int, seed: UInt64, blind: Bool, salts saved: [String]? = nil,
        salt: () -> String = { LayoutCommitment.newSalt() }
    ) throws(ThresholdError) {
        self.session = session
        self.ladder = ladder.map { $0.lowercased() }
        self.labels = labels
        self.concentrations = concentrations
        self.blind = blind
        run = try ThresholdRun(procedure: procedure, trials: trials, seed: seed)
        limit = BlockLimit(trials: run.plan.count)
        // A resumed session's salts are the ones its commitments were made with.
        salts = saved ?? (blind ? (0..<run.plan.count).map { _ in salt() } : [])
        upcoming.withLock { $0 = (0, Self.rung(run.next(trial: 0))) }
    }

    static func rung(_ next: NextTrial) -> Int? {
        if case .target(let r) = next { return r }
        return nil
    }

    /// Which trials are catch trials (no target): decided ahead, so the positions can be laid
    /// out and committed with the session.
    var plan: [NextTrial] { run.plan }

    /// The next trial not yet logged (its index in the segment) and the sample its target
    /// holds (nil: a catch trial).
    var next: (index: Int, sample: String?) {
        let u = upcoming.withLock { $0 }
        return (u.index - firstTrial, u.rung.map { ladder[$0] })
    }

    /// The state trial `index` (of the session) leaves, recomputed from its logged outcome as
    /// it was recorded then: how a resumed session's procedure is brought back to where it was
    /// (`StationService.resumedThreshold`). Nil past the plan or after the stop.
    func replay(trial index: Int, outcome: TrialOutcome) -> ProcedureTrialState? {
        guard let state = run.record(trial: index, outcome: outcome) else { return nil }
        upcoming.withLock { $0 = (index + 1, state.stopped ? nil : Self.rung(run.next(trial: index + 1))) }
        return state
    }

    /// The segment from here on runs the session's trials from `first` (a resume): its block
    /// limit counts in the segment, none left once the procedure has stopped.
    func goOn(from first: Int) {
        firstTrial = first
        limit.trials.store(run.hasStopped ? 0 : max(0, run.plan.count - first), ordering: .releasing)
    }

    /// The concentration of a sample of the ladder (nil: not one of it).
    func concentration(of sample: String?) -> Double? {
        guard let sample, let i = ladder.firstIndex(of: sample.lowercased()) else { return nil }
        return concentrations[i]
    }

    /// The dilution commitments logged with the session: the first trial's (a staircase's
    /// later ones are chosen as it goes), or every trial's (constant stimuli fix the order).
    func commitmentsAtStart(time: LogTime) -> [DilutionCommitmentRecord] {
        guard blind else { return [] }
        if case .constantStimuli = run.procedure.method {
            return run.plan.indices.map { commitment(ofTrial: $0, rung: Self.rung(run.plan[$0]), time: time) }
        }
        return [commitment(ofTrial: 0, rung: Self.rung(run.next(trial: 0)), time: time)]
    }

    private func commitment(ofTrial index: Int, rung: Int?, time: LogTime) -> DilutionCommitmentRecord {
        DilutionCommitmentRecord(
            sessionId: session, trialNumber: index + 1,
            digest: DilutionCommitment.digest(
                session: session.uuidString, trial: index + 1, label: rung.map { labels[$0] }, salt: salts[index]),
            time: time)
    }

    /// Trial `index`'s layout with its target's dilution in place (feeder thread: before the
    /// trial's answer is recorded).
    func filled(_ layout: TrialLayout, trial local: Int) -> TrialLayout {
        guard let rung = Self.rung(run.next(trial: firstTrial + local)), let t = layout.targetStation else {
            return layout
        }
        var out = layout
        out.stations[t].sampleID = ladder[rung]
        return out
    }

    /// Records trial `index`'s outcome (feeder thread): the trial's procedure row, and the
    /// next trial's dilution commitment, both for the trial's own transaction; lowers the
    /// block's limit when the procedure stops.
    func record(trial local: Int, trialId: UUID, number: Int, outcome: TrialOutcome, time: LogTime)
        -> [any AppendableRecord]
    {
        recordTrial(firstTrial + local, trialId: trialId, number: number, outcome: outcome, time: time)
    }

    /// `record` by the session's trial index: also the trial a resume logs as cut short.
    func recordTrial(_ index: Int, trialId: UUID, number: Int, outcome: TrialOutcome, time: LogTime)
        -> [any AppendableRecord]
    {
        let presented = Self.rung(run.next(trial: index))
        guard let state = run.record(trial: index, outcome: outcome) else { return [] }
        var records: [any AppendableRecord] = [
            TrialProcedureRecord(
                sessionId: session, trialId: trialId, trialNumber: number, state: state,
                sampleId: presented.flatMap { UUID(uuidString: ladder[$0]) },
                dilutionSalt: blind && index < salts.count ? salts[index] : nil, time: time)
        ]
        let nextIndex = index + 1
        if state.stopped {
            limit.trials.store(max(0, nextIndex - firstTrial), ordering: .releasing)
            upcoming.withLock { $0 = (nextIndex, nil) }
            return records
        }
        let rung = Self.rung(run.next(trial: nextIndex))
        if blind, case .staircase = run.procedure.method, nextIndex < salts.count {
            records.append(commitment(ofTrial: nextIndex, rung: rung, time: time))
        }
        upcoming.withLock { $0 = (nextIndex, rung) }
        return records
    }
}

extension StationService.Segment {
    /// Trial `index`'s layout as the assistant loads it and the virtual dog meets it: a
    /// threshold trial's target holds the dilution its procedure chose, once chosen (the trial
    /// before it logged).
    func layout(_ index: Int) -> TrialLayout {
        var layout = layouts[index]
        if let threshold, let t = layout.targetStation {
            let next = threshold.next
            layout.stations[t].sampleID = next.index == index ? next.sample : nil
        }
        return layout
    }
}
