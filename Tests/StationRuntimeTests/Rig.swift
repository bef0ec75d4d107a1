import Foundation
import ProgramFiles
import ReadingRows
import SessionLog
import StationControl
import Synchronization
import Testing
import TrainingEngine

@testable import StationIO
@testable import StationRuntime

/// The live session without a process: an `EngineHandler` and a `LogFeeder` on a real SQLite
/// log in a temporary directory, driven as the hot loop drives them (edges, ready commands,
/// deadlines) at virtual timestamps. The hot loop's own records go into the one ring as
/// `HotLoop` orders them: for each input, the click's record (when the engine asked one), then
/// the raw edge, then the engine's notes (its `afterDecision`).
final class Rig {
    /// Board lines: stations 0..<stations, then the three buttons.
    let stations: Int
    var readyLine: UInt32 { UInt32(stations) }
    var clickerLine: UInt32 { UInt32(stations + 1) }
    var errorLine: UInt32 { UInt32(stations + 2) }

    let configuration: LineupMachine.Configuration
    let layouts: [TrialLayout]
    let handler: EngineHandler
    let feeder: LogFeeder
    let stationRing = EventRing<StationRecord>(capacity: 1 << 12)
    /// Each played click's edge-to-ALSA time; nil: the station has no audio device, so a
    /// click asked leaves no record (the buzzer's is not the log's).
    var clickLatency: UInt64? = 40_000
    let log: SessionLog
    let writer: LogWriter
    let sessionId: UUID
    let dog: DogRecord
    /// Each registered sample's label by its id (the log reports a trial's samples by label).
    private(set) var sampleLabels: [String: String] = [:]
    private let watched = WatchedLines()
    private var tickets: UInt32 = 0
    /// Virtual monotonic time (ns); starts away from 0, which the handler reads as "now".
    var now: UInt64 = 1_000_000_000

    /// A program step from the built-in research program (`phase`, `step`), laid out with
    /// fixed seeds; `blind` as the station service sets it for a double-blind session.
    /// `log` and `dog`: a later session on an earlier rig's log, for the same dog; its samples
    /// (found by label) carry that dog's exposure from the log, as the station service reads it.
    init(
        phase: String, step stepId: String, trials: Int? = nil, blind: Bool = false, seed: UInt64 = 7,
        log earlier: SessionLog? = nil, dog known: DogRecord? = nil
    ) throws {
        let program = try #require(try Program.builtin(named: "research-5-station"))
        let step = try #require(program.step(phase: phase, step: stepId))
        let exercise = try #require(step.exercises.first)
        stations = step.lineup.stations
        configuration = LineupMachine.Configuration(
            step: step, exercise: exercise, stationCount: stations, hold: 2_000_000_000, holdTolerance: 150_000_000)

        if let earlier {
            log = earlier
        } else {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "station-runtime-tests-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            log = try SessionLog(path: directory.appendingPathComponent("lineup.db").path)
        }
        let dog = known ?? DogRecord(name: "Rex")
        let exposure = known == nil ? [:] : try log.reader.exposure(dog: dog.id.uuidString)
        let registered = Dictionary(try log.reader.samples().map { ($0.label, $0) }, uniquingKeysWith: { a, _ in a })
        // The samples the layouts name, registered so each trial's slots point at real rows.
        var samples: [Sample] = []
        var labels: [String: String] = [:]
        for (kind, count) in [(SampleKind.target, 2), (.control, 2 * step.lineup.controls)] where count > 0 {
            for n in 1...count {
                let label = "\(kind.rawValue)-\(n)"
                if let known = registered[label] {
                    samples.append(StationService.layoutSample(known, exposure: exposure))
                    labels[known.id] = label
                    continue
                }
                let added = try log.addSample(SampleRecord(label: label, kind: kind))
                samples.append(Sample(id: added.id.uuidString, kind: kind))
                labels[added.id.uuidString] = added.label
            }
        }
        sampleLabels = labels
        var generator = LayoutGenerator(setup: step.lineup, samples: samples, seed: seed)
        layouts = try generator.block(
            count: configuration.mode == .trainerLed ? exercise.repeats : (trials ?? exercise.trials))
        // The step's rules as the station service logs them, so `verify-scoring` can rescore it.
        let rules = configuration.loggedRules.merging(["debounce_ns": "5000000"]) { _, ours in ours }
        let session = SessionRecord(
            dogId: dog.id, mode: configuration.mode, settings: jsonObject(rules), station: "test")
        try log.append(known == nil ? [dog, session] : [session])
        self.dog = dog
        sessionId = session.id
        writer = log.makeWriter()
        // Double-blind: every trial's layout committed before the first starts, as the station
        // service does (fixed salts here, so runs repeat).
        let commitments =
            blind
            ? TrialCommitment.make(
                session: sessionId, layouts: layouts, usedStations: Array(0..<stations), labels: labels,
                salt: { String(repeating: String(format: "%02x", $0 + 1), count: 32) }) : []
        try log.append(
            TrialCommitment.records(
                commitments, session: sessionId, time: LogTime(monoNs: Int64(now) - 1, wallNs: Int64(now) - 1)))

        handler = EngineHandler(
            configuration: configuration, layouts: layouts, records: stationRing, readyLine: UInt32(stations),
            clickerLine: UInt32(stations + 1), errorLine: UInt32(stations + 2), boardStations: stations)
        let watched = self.watched
        feeder = LogFeeder(
            settings: LogFeeder.Settings(
                sessionId: sessionId, layouts: layouts, stationNames: ["A", "B", "C", "D", "E"],
                buttons: [UInt32(stations): "ready", UInt32(stations + 1): "clicker", UInt32(stations + 2): "error"],
                blockSeed: seed, printTrials: false, trainerLed: configuration.mode == .trainerLed,
                roundLength: configuration.mode == .trainerLed
                    ? configuration.exerciseDuration : configuration.searchTimeout,
                watch: { event in watched.lines.withLock { $0.append(event.line) } }, blind: blind,
                commitments: commitments),
            stationRing: stationRing, recordsReady: -1, writer: writer)
        handler.prime(activeLines: [], at: now)
        // What `LogFeeder.start()` does first (the rig drives the feeder without its thread).
        feeder.announceCommitment(ofTrial: 0)
    }

    deinit { writer.close() }

    // MARK: The hot loop's side

    /// A debounced station or button edge at `now`: the raw edge into the station ring, then
    /// the engine's decision (as the hot loop does). Returns whether the engine asked a click.
    @discardableResult
    func edge(line: UInt32, active: Bool) -> Bool {
        let edge = SensorEdge(timestamp: now, line: line, isActive: active)
        return carryOut(handler.handle(edge), edgeAt: now, record: .edge(edge, acted: true, knownAt: 0))
    }

    /// A raw edge the debouncer took as chatter: logged, never shown to the engine.
    func chatter(line: UInt32, active: Bool) {
        _ = stationRing.push(.edge(SensorEdge(timestamp: now, line: line, isActive: active), acted: false, knownAt: 0))
    }

    /// What `HotLoop.decide` does with a decision: the click and its record first, then the
    /// input's own record, then the handler's `afterDecision` (which pushes its notes).
    private func carryOut(_ decision: HotPathDecision, edgeAt edge: UInt64, record: StationRecord? = nil) -> Bool {
        var clicked = false
        if case .click = decision {
            clicked = true
            if let latency = clickLatency {
                _ = stationRing.push(
                    .click(
                        ClickRecord(
                            edgeTimestamp: edge, handedTimestamp: edge + latency, triggerTimestamp: 0,
                            delayFrames: 128, rate: 48_000, recoveries: 0)))
            }
        }
        if let record { _ = stationRing.push(record) }
        handler.afterDecision()
        return clicked
    }

    func nose(at station: Int, _ present: Bool) { edge(line: UInt32(station), active: present) }

    /// Virtual time moves to `t`; every deadline the engine set on the way fires at its time.
    /// Returns the times of the clicks the engine asked for on the way.
    @discardableResult
    func advance(to t: UInt64) -> [UInt64] {
        var clicks: [UInt64] = []
        while handler.nextDeadline <= t {
            now = max(now, handler.nextDeadline)
            if carryOut(handler.deadline(now: now), edgeAt: now) { clicks.append(now) }
        }
        now = t
        return clicks
    }

    @discardableResult
    func advance(by ns: UInt64) -> [UInt64] { advance(to: now + ns) }

    /// A ready press over the socket: queued, taken when the hot loop is woken. Returns the
    /// answer published for its ticket.
    func ready() -> (answer: ReadyAnswer?, station: Int, number: Int) {
        tickets += 1
        _ = handler.commands.push(.ready(ticket: tickets))
        _ = carryOut(handler.wokenUp(now: now), edgeAt: now)
        let a = handler.snapshot.answer.load(ordering: .acquiring)
        #expect(UInt32(a >> 32) == tickets, "the answer is for this press")
        return (
            ReadyAnswer(rawValue: UInt8((a >> 24) & 0xFF)), Int((a >> 16) & 0xFF) - 1, Int(a & 0xFFFF)
        )
    }

    /// `status`'s flagged stations from the engine's snapshot, with `unreadable` board lines
    /// out of service in the hot loop.
    func flagged(unreadable: UInt64 = 0) -> [FlaggedStation] {
        handler.snapshot.read().flaggedStations(
            unreadableLines: unreadable, usedStations: Array(0..<stations), stationNames: ["A", "B", "C", "D", "E"])
    }

    // MARK: The feeder's side

    /// One pass of the feeder's thread, then the writer flushed so the log can be read.
    func drain() throws {
        feeder.drainOnce()
        try writer.flush()
    }

    var watchLines: [String] { watched.lines.withLock { $0 } }

    func watchObjects() throws -> [[String: String]] {
        try watchLines.map { line in
            try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String], "\(line)")
        }
    }

    func events(_ kind: EventKind? = nil) throws -> [EventSummary] {
        var filter = LogFilter()
        filter.eventKind = kind
        return try log.reader.events(filter)
    }
}

/// What a watcher received, one JSON line each (the feeder calls it from its thread).
final class WatchedLines: Sendable {
    let lines = Mutex<[String]>([])
}
