import Figures
import Foundation
import SessionLog
import Thresholds
import TrainingEngine

// Uses the engine's SeededGenerator, so a seed means the same thing everywhere.

/// Fills a log with plausible training data for tests and benchmarks: dogs working
/// through three phases on a five-station lineup, a virtual dog's sniffs, indications
/// and clicks, every row from one seed.
public struct LogFiller: Sendable {
    public var dogs = 3
    public var sessionsPerDog = 4
    public var trialsPerSession = 10
    /// Raw events per trial (edges, sniffs, the indication and the click among them).
    public var eventsPerTrial = 20
    public var stations = 5
    /// The virtual dog: chance to indicate a present target, and to false-alert.
    public var sensitivity = 0.8
    public var falseAlertRate = 0.1
    /// Share of trials with no target at all.
    public var blankTrialRate = 0.2
    public var seed: UInt64 = 1
    /// Where the wall clock starts (2025-03-01T09:00:00Z by default).
    public var startWallNs: Int64 = 1_740_819_600_000_000_000
    /// Put before every dog's name and sample's label: logs of several stations filled with
    /// different prefixes hold different dogs and samples (merge matches them by name and label).
    public var namePrefix = ""
    /// Issue 38: the first target is a stock and the other three its dilutions (1:10, 1:100,
    /// 1:1000 in mineral oil, the last also 2.5 ppb), and each session records its room (a
    /// temperature and humidity from the seed, and a note on every other one). Off by default,
    /// so the figures of the logs filled before stay as they were.
    public var dilutedTargets = false
    /// Issue 38, with `dilutedTargets`: each dog's first session is a 2-down-1-up staircase
    /// (`ThresholdRun`, the station's own) over the stock's three dilutions and the stock,
    /// weakest first, with a catch trial now and then; each trial logs its procedure state and
    /// its dilution's commitment, with the salt that opens it, as a double-blind threshold
    /// session does. Off by default.
    public var staircase = false

    public init() {}

    public struct Summary: Sendable, Hashable, Codable {
        public var dogs = 0
        public var samples = 0
        public var sessions = 0
        public var trials = 0
        public var events = 0
    }

    /// Writes the data, one transaction per session.
    @discardableResult
    public func fill(_ log: SessionLog) throws -> Summary {
        var random = SeededGenerator(seed: seed)
        var summary = Summary()
        var mono: Int64 = 1_000_000_000
        var wall = startWallNs
        func tick(_ ns: Int64) -> LogTime {
            mono += ns
            wall += ns
            return LogTime(monoNs: mono, wallNs: wall)
        }
        func uuid() -> UUID {
            var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
            bytes[6] = (bytes[6] & 0x0F) | 0x40
            bytes[8] = (bytes[8] & 0x3F) | 0x80
            return UUID(
                uuid: (
                    bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                    bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                ))
        }
        let names = ["Aino", "Bruno", "Cara", "Dusty", "Eetu", "Fanni", "Gizmo", "Halla", "Iso", "Jeppe"]
        var header: [any AppendableRecord] = []
        let program = ProgramRecord(
            id: uuid(), name: "default", content: "# default program (generated)\n", time: tick(1_000))
        header.append(program)
        let handler = HandlerRecord(id: uuid(), code: "H1", time: tick(1_000))
        header.append(handler)
        var dogIds: [UUID] = []
        for index in 0..<dogs {
            let name = namePrefix + (index < names.count ? names[index] : "Dog \(index + 1)")
            let dog = DogRecord(id: uuid(), name: name, born: "2021-0\(index % 9 + 1)-15", time: tick(1_000))
            dogIds.append(dog.id)
            header.append(dog)
        }
        var targets: [UUID] = []
        var controls: [(UUID, SampleKind)] = []
        for index in 0..<12 {
            let kind: SampleKind = index < 4 ? .target : (index < 10 ? .control : .distractor)
            var sample = SampleRecord(
                id: uuid(),
                label: namePrefix
                    + String(format: "%@-%03d", kind == .target ? "T" : (kind == .control ? "C" : "D"), index + 1),
                kind: kind,
                facts: SampleFacts(
                    diagnosis: kind == .target ? "lung cancer" : nil, source: index % 2 == 0 ? "clinic A" : "clinic B",
                    collection: "breath, face mask, 5 min", processing: "frozen -20 C",
                    collectedOn: "2025-01-\(10 + index)"), time: tick(1_000))
            if dilutedTargets, kind == .target, index > 0, let stock = targets.first {
                let factor = [10.0, 100, 1000][index - 1]
                sample.dilution = SampleDilution(
                    stockId: stock, factor: factor, concentration: index == 3 ? 2.5 : nil,
                    concentrationUnit: index == 3 ? "ppb" : nil, diluent: "mineral oil", madeOn: "2025-02-0\(index)",
                    madeBy: "R7")
            }
            if kind == .target { targets.append(sample.id) } else { controls.append((sample.id, kind)) }
            header.append(sample)
        }
        try log.append(header)
        summary.dogs = dogs
        summary.samples = 12
        let phases = ["1 learning to indicate", "2 learning the target scent", "3 discrimination"]
        for dogId in dogIds {
            for sessionIndex in 0..<sessionsPerDog {
                let phaseIndex = min(phases.count - 1, sessionIndex * phases.count / max(1, sessionsPerDog))
                var session = SessionRecord(
                    id: uuid(), dogId: dogId, handlerId: handler.id, programId: program.id,
                    phase: phases[phaseIndex], phaseSteps: 3, step: "step \(sessionIndex % 3 + 1)",
                    exercise: "exercise 1", mode: .automated,
                    settings: #"{"hold_s":2,"trial_timeout_s":60,"stations":\#(stations)}"#, station: "pi",
                    bootId: nil, time: tick(60_000_000_000))
                if dilutedTargets {
                    session.conditions = SessionConditions(
                        temperatureC: Double(Int.random(in: 180...260, using: &random)) / 10,
                        humidityPercent: Double(Int.random(in: 40...70, using: &random)),
                        text: sessionIndex % 2 == 0 ? "door open, \"windy\"" : nil)
                }
                var events: [LoggedEvent] = []
                var trials: [TrialRecord] = []
                var procedureRows: [any AppendableRecord] = []
                // The ladder weakest first: 1:1000, 1:100, 1:10, the stock.
                let ladder = Array(targets.reversed())
                var run =
                    staircase && dilutedTargets && sessionIndex == 0
                    ? try ThresholdRun(
                        procedure: ThresholdProcedure(
                            method: .staircase(
                                StaircaseRules(
                                    down: 2, startRung: 3, stopAfterTrials: trialsPerSession, catchTrialRate: 0.2)),
                            ladderRungs: ladder.count), trials: max(1, trialsPerSession), seed: random.next())
                    : nil
                events.reserveCapacity(trialsPerSession * eventsPerTrial)
                for number in 1...max(1, trialsPerSession) {
                    let started = tick(20_000_000_000)
                    let trialId = uuid()
                    var hasTarget = Double.random(in: 0..<1, using: &random) >= blankTrialRate
                    let asked = run?.next(trial: number - 1)
                    if let asked { hasTarget = asked != .catchTrial }
                    let targetStation = hasTarget ? Int.random(in: 1...stations, using: &random) : nil
                    var layout: [StationSlot] = []
                    // Diluted targets: the dog finds a weaker one less often (the stock, 1:10,
                    // 1:100, 1:1000), down to near chance on five stations.
                    var findChance = sensitivity
                    for station in 1...stations {
                        if station == targetStation {
                            var sampleId = targets.randomElement(using: &random)
                            if dilutedTargets {
                                let rung = Int.random(in: 0..<targets.count, using: &random)
                                sampleId = targets[rung]
                                findChance = [0.95, 0.85, 0.6, 0.3][rung]
                            }
                            if case .target(let rung) = asked {
                                sampleId = ladder[rung]
                                findChance = [0.3, 0.6, 0.85, 0.95][rung]
                            }
                            layout.append(StationSlot(station: station, sampleId: sampleId, kind: .target))
                        } else if station % 2 == 0 {
                            layout.append(StationSlot(station: station, sampleId: nil, kind: .blank))
                        } else {
                            let (sampleId, kind) = controls[Int.random(in: 0..<controls.count, using: &random)]
                            layout.append(StationSlot(station: station, sampleId: sampleId, kind: kind))
                        }
                    }
                    let roll = Double.random(in: 0..<1, using: &random)
                    var indicated: Int? = nil
                    if let target = targetStation, roll < findChance {
                        indicated = target
                    } else if roll > 1 - falseAlertRate {
                        indicated = layout.filter { $0.kind != .target }.randomElement(using: &random)?.station
                    }
                    let outcome: TrialOutcome =
                        indicated == nil
                        ? (hasTarget ? .miss : .correctRejection) : (indicated == targetStation ? .hit : .falseAlert)
                    let latency = Int64.random(in: 2_000_000_000...20_000_000_000, using: &random)
                    // What each station saw: the indicated one held, others sniffed or not reached.
                    for k in layout.indices {
                        let isIndicated = layout[k].station == indicated
                        let visited = isIndicated || Double.random(in: 0..<1, using: &random) < 0.8
                        let sniffs = visited ? Int.random(in: isIndicated ? 0...1 : 1...2, using: &random) : 0
                        layout[k].seen = StationSeen(
                            visited: visited, indicated: isIndicated, firstIndicationNs: isIndicated ? latency : nil,
                            sniffs: sniffs,
                            dwellNs: Int64(sniffs) * 400_000_000 + (isIndicated ? 2_000_000_000 : 0))
                    }
                    var t = started
                    for k in 0..<eventsPerTrial {
                        let station = Int.random(in: 1...stations, using: &random)
                        t.monoNs += latency / Int64(max(1, eventsPerTrial))
                        t.wallNs += latency / Int64(max(1, eventsPerTrial))
                        var event = LoggedEvent(
                            id: uuid(), kind: .edge, sessionId: session.id, trialId: trialId, station: station, time: t,
                            kernelNs: t.monoNs - 40_000, value: Int64(k % 2))
                        if k == eventsPerTrial - 2, let at = indicated {
                            event.kind = .indication
                            event.station = at
                            event.durationNs = 2_000_000_000
                            event.kernelNs = nil
                            event.value = nil
                        } else if k == eventsPerTrial - 1, let at = indicated, at == targetStation {
                            event.kind = .click
                            event.station = at
                            event.kernelNs = nil
                            event.value = nil
                            event.click = ClickTiming(
                                edgeNs: t.monoNs - 3_000_000, handedNs: t.monoNs - 2_900_000,
                                triggerNs: t.monoNs - 2_800_000, delayFrames: 128, onsetLatencyNs: 2_700_000)
                        } else if k % 5 == 4 {
                            event.kind = .sniff
                            event.durationNs = Int64.random(in: 100_000_000...900_000_000, using: &random)
                            event.kernelNs = nil
                            event.value = nil
                            event.detail = #"{"source":"generator","note":"short visit, \"quick\""}"#
                        }
                        events.append(event)
                    }
                    let ended = tick(latency)
                    if let state = run?.record(trial: number - 1, outcome: outcome) {
                        let target = layout.first { $0.kind == .target }?.sampleId
                        let label = target.flatMap { id in
                            header.compactMap { $0 as? SampleRecord }.first { $0.id == id }?.label
                        }
                        let salt = (0..<4).map { _ in String(format: "%016llx", random.next()) }.joined()
                        // The next trial's dilution is committed as this one is logged; the first at the start.
                        procedureRows.append(
                            DilutionCommitmentRecord(
                                sessionId: session.id, trialNumber: number,
                                digest: DilutionCommitment.digest(
                                    session: session.id.uuidString, trial: number, label: label, salt: salt),
                                time: started))
                        procedureRows.append(
                            TrialProcedureRecord(
                                id: uuid(), sessionId: session.id, trialId: trialId, trialNumber: number, state: state,
                                sampleId: target, dilutionSalt: salt, time: ended))
                    }
                    trials.append(
                        TrialRecord(
                            id: trialId, sessionId: session.id, number: number, seed: random.next(), layout: layout,
                            outcome: outcome, indicatedStation: indicated, latencyNs: indicated == nil ? nil : latency,
                            searchNs: latency, started: started, ended: ended))
                }
                let note = SessionNote(
                    id: uuid(), sessionId: session.id, kind: .improvement,
                    text: "Try a higher-value reward, e.g. cheese", time: tick(1_000_000_000))
                let end = SessionEnd(
                    id: uuid(), sessionId: session.id, how: .ended, detail: "ended by the trainer", time: note.time)
                // One transaction per session, in the order the station writes them.
                try log.append([session] + events + trials + procedureRows + [note, end])
                summary.sessions += 1
                summary.trials += trials.count
                summary.events += events.count
            }
        }
        return summary
    }
}
