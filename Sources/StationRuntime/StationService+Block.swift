import Foundation
import SessionLog
import StationControl
import TrainingEngine
import VirtualDog

// A simulated block (`lineupd --simulate`): a session like any other, on the virtual dog.
extension StationService {
    /// Starts a simulated block as a session like any other: the virtual dog's, on the
    /// simulated samples, with the plan's lineup and times (it follows no program). The same
    /// segments, log feeder and dog serve it as serve a session started over the socket.
    public func startBlock(_ plan: BlockPlan) throws -> UUID {
        switching.lock()
        defer { switching.unlock() }
        guard current == nil else { throw ControlRefusal(.sessionRunning, "a session is running") }
        // The virtual dog's exposure from the log: rotation and novelty as for any dog.
        let (dogId, newDog) = try virtualDog(in: log, notes: "lineupd --simulate")
        let exposure = newDog == nil ? try log.reader.exposure(dog: dogId.uuidString) : [:]
        let samples = try plan.registerSamples(in: log).map {
            var sample = $0
            sample.dogUsageCount = exposure[sample.id] ?? 0
            return sample
        }
        var generator = LayoutGenerator(setup: plan.setup, samples: samples, seed: plan.seed)
        let layouts: [TrialLayout]
        do {
            layouts = try generator.block(count: plan.trials)
        } catch {
            throw ControlRefusal(.badRequest, "cannot lay out the block: \(error)")
        }
        let session = SessionRecord(
            dogId: dogId, phase: "simulation", mode: .doubleBlind, settings: plan.settingsJSON(running(plan.machine)),
            station: stationName)
        // A double-blind block: its layouts committed like a double-blind session's.
        let labels = Dictionary(
            try log.reader.samples().map { ($0.id, $0.label) }, uniquingKeysWith: { first, _ in first })
        let commitments = TrialCommitment.make(
            session: session.id, layouts: layouts, usedStations: Array(0..<plan.machine.stationCount), labels: labels)
        // A session cut short and never resumed ends as this block starts: one session at a time.
        endInterrupted(suggestions: nil, why: "a new simulated block was started instead")
        try writer.flush()
        try log.append(
            (newDog.map { [$0] } ?? []) + [session]
                + TrialCommitment.records(commitments, session: session.id, time: .now()))
        // What a resume needs (`lineupd --simulate --resume`), before the first trial.
        let trialIds = layouts.map { _ in UUID() }
        let stations = Array(0..<plan.machine.stationCount)
        _ = saveResumable(
            ResumableSession(
                session: session.id, dog: "virtual dog", dogId: dogId, mode: .doubleBlind, step: "simulation",
                program: nil, configuration: plan.machine, layouts: layouts, trialIds: trialIds,
                salts: commitments.map(\.salt), digests: commitments.map(\.digest), seed: plan.seed,
                usedStations: stations, labels: labels, outputMode: .none, autoStart: false,
                startedWallNs: session.time.wallNs, simulatedBlock: true))
        stopSegment(aborting: false)
        try startSegment(
            session: session.id, configuration: plan.machine, layouts: layouts, seed: plan.seed,
            usedStations: stations, blind: false, commitments: commitments, trialIds: trialIds)
        current = Current(
            sessionId: session.id, dog: "virtual dog", mode: .doubleBlind, step: "simulation", trials: plan.trials,
            seed: plan.seed, dogId: dogId, program: nil)
        return session.id
    }

    /// The running session's trials: those logged before its segment (a resumed session's) and
    /// the block's whole count. Nil between sessions.
    public var sessionTrials: (before: Int, total: Int)? {
        switching.lock()
        defer { switching.unlock() }
        return current.map { ($0.firstTrial, $0.trials) }
    }

    /// Where the running block is: trials committed, intervals over, starts refused (a
    /// station active at the ready press). Nil between sessions.
    public var blockProgress: (committed: Int, intervalsOver: Int, refusedStarts: Int)? {
        switching.lock()
        defer { switching.unlock() }
        guard current != nil, let segment else { return nil }
        return (
            segment.feeder.committed.load(ordering: .acquiring),
            segment.feeder.intervalsOver.load(ordering: .acquiring),
            segment.feeder.refusedStarts.load(ordering: .acquiring)
        )
    }
}
