import Foundation
import Glibc
import SessionLog
import StationIO
import Synchronization
import TrainingEngine

/// The hot loop's one consumer: drains the station's ring (raw edges, clicks) and the engine's
/// note ring, turns them into log events, commits each trial with `commitTrial` and prints its
/// line. Runs on its own thread, so SQLite and stdout never touch the hot path.
public final class LogFeeder: @unchecked Sendable {
    struct Settings {
        /// nil between sessions: edges and the clicker are still logged, to no session.
        var sessionId: UUID?
        var layouts: [TrialLayout]
        var stationNames: [String]
        /// The board stations (0-based) the session uses, in the lineup's order: the engine's
        /// station i is the board's `usedStations[i]`. Empty: all of them, in order.
        var usedStations: [Int] = []
        /// The button lines and their names (`ready`, `clicker`, `error`).
        var buttons: [UInt32: String]
        var blockSeed: UInt64
        /// Print a line per trial on stdout (the simulated station; the journal under systemd).
        var printTrials = true
        /// Trainer-led: each repetition of the exercise is a round, logged as a trial.
        var trainerLed = false
        /// How long a round (trainer-led) or a search (automated) may last, for time left.
        var roundLength: UInt64 = 0
        /// Receives one JSON line per logged event and trial, for `lineupctl watch`.
        var watch: (@Sendable (String) -> Void)? = nil
        /// Double-blind: nothing a handler can read (watch lines and events, the terminal and
        /// the journal) names a station the dog visited, indicated or was clicked at, says
        /// whether it was the target, or gives a trial's outcome, until the session is over.
        /// Any member of the station's group may watch, the handler included, and past trials'
        /// targets tell a handler how the block is laid out (never the same station more than
        /// N times in a row). Faults keep their station: someone must go and clear it. The
        /// log keeps everything; the full trial lines are printed when the session ends.
        var blind = false
    }

    let settings: Settings
    private let stationRing: EventRing<StationRecord>
    private let notes: EventRing<EngineNote>
    private let recordsReady: Int32
    let writer: LogWriter
    let trialIds: [UUID]
    let wallOffset: Int64

    /// The hot loop's reports of edge descriptors that cannot be read; set before `start()`.
    var sourceFaults: EventRing<EdgeSourceFault>?

    private let finishing = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)
    /// Trials committed so far, and inter-trial intervals over: the assistant's cue to load.
    public let committed = Atomic<Int>(0)
    let intervalsOver = Atomic<Int>(0)
    /// Trainer-led repetitions finished, and the one running now (from 1), or -1.
    let exercisesDone = Atomic<Int>(0)
    let exercising = Atomic<Int>(-1)
    /// The trial the dog is searching now (0-based), or -1: the virtual dog's cue in serve mode.
    let searching = Atomic<Int>(-1)
    /// When the running round or search times out (monotonic ns), or 0: `status`'s time left.
    let roundEndsAt = Atomic<UInt64>(0)

    // Feeder thread only until `finished`; then read by the main thread.
    /// The block's figures, counted by the one implementation (`Tally`) from the same trials
    /// the log receives.
    public internal(set) var tally = Tally()
    public internal(set) var handedLatencies: [UInt64] = []
    public internal(set) var onsetLatencies: [UInt64] = []
    public internal(set) var rawEdges = 0
    public internal(set) var failure: String?
    /// Double-blind: the full trial lines, printed once the session is over (`revealLines`).
    var withheldLines: [String] = []
    /// Trials whose commit failed and waited in the writer's spool (written later or lost:
    /// the writer's status says which).
    public internal(set) var trialsSpooled = 0
    /// Sensor faults by kind, and the stations flagged now (0-based) with their fault; read
    /// by `status` from the control thread while the feeder runs.
    public let sensorFaults = Mutex<[String: Int]>([:])
    let flaggedStations = Mutex<[Int: String]>([:])
    /// Starts refused because a station was active: the virtual assistant's cue to try again.
    let refusedStarts = Atomic<Int>(0)
    /// The fault each station last had in the trial in progress, for the trial's reason.
    var trialFaults: [Int: String] = [:]
    /// The station whose activity refused the last start, until a search starts.
    var refusedBy: Int?

    // The trial in progress, as the feeder sees it.
    var current = -1
    var visits: [(station: Int, indicated: Bool)] = []
    /// What each station saw in the trial in progress.
    var observer: TrialObserver
    /// The clicks the engine asked for and whose record has not come yet, in order: the hot
    /// thread makes exactly one record (played or failed) per click it was asked for, in the
    /// order asked, so the n-th record is the n-th ask's. A click is logged against the trial
    /// and the station of its ask, so the click and its trial come from one reading of the
    /// edges, whichever ring delivers first.
    var pendingClicks: [(ask: Int, station: Int, trialId: UUID?)] = []
    var asks = 0
    /// Click records (or failures) that arrived before their ask: the two rings are drained
    /// apart.
    var earlyClicks: [StationRecord] = []
    /// The trial in progress's clicks, for its line: where, whose, and edge to ALSA (nil:
    /// failed or not yet in).
    var roundClicks: [(ask: Int, station: Int, trainer: Bool, latency: UInt64?, failed: Bool)] = []
    private var queue: [EngineNote] = []
    private var waitingSince: UInt64 = 0

    init(
        settings: Settings, stationRing: EventRing<StationRecord>, notes: EventRing<EngineNote>,
        recordsReady: Int32, writer: LogWriter
    ) {
        self.settings = settings
        self.stationRing = stationRing
        self.notes = notes
        self.recordsReady = recordsReady
        self.writer = writer
        trialIds = settings.layouts.map { _ in UUID() }
        observer = TrialObserver(
            stationCount: settings.usedStations.isEmpty ? settings.stationNames.count : settings.usedStations.count)
        wallOffset = WallClock.now() &- Int64(bitPattern: MonotonicClock.now())
    }

    func start() {
        let thread = Thread { [self] in self.run() }
        thread.name = "lineup-log-feeder"
        thread.start()
    }

    /// Drains what is left, then stops. Returns once the feeder has finished.
    func finish() {
        finishing.store(true, ordering: .releasing)
        var one: UInt64 = 1
        _ = write(recordsReady, &one, 8)
        while !finished.load(ordering: .acquiring) { usleep(1000) }
    }

    private func run() {
        var pfd = pollfd(fd: recordsReady, events: Int16(POLLIN), revents: 0)
        var value: UInt64 = 0
        while true {
            let last = finishing.load(ordering: .acquiring)
            drainOnce(final: last)
            if last {
                drainOnce(final: true)
                break
            }
            // The hot loop signals after every round that queued anything, engine notes
            // included; the timeout only bounds the wait for a click record (below).
            _ = poll(&pfd, 1, queue.isEmpty ? 1000 : 20)
            _ = read(recordsReady, &value, 8)
        }
        finished.store(true, ordering: .releasing)
    }

    /// One pass over the rings; internal so tests drive the feeder without its thread.
    func drainOnce(final: Bool) {
        // Notes first: a click record pushed after its trial's notes is then seen in this round
        // or the next, and the trial waits for it below.
        notes.drain { queue.append($0) }
        stationRing.drain { take($0) }
        sourceFaults?.drain { sourceFault($0) }
        var k = 0
        while k < queue.count {
            if case .trialEnded = queue[k], let id = trialId, pendingClicks.contains(where: { $0.trialId == id }),
                !final
            {
                // The click record is on its way from the hot thread; give it a moment.
                let now = MonotonicClock.now()
                if waitingSince == 0 { waitingSince = now }
                if now &- waitingSince < 500_000_000 { break }
            }
            waitingSince = 0
            take(queue[k])
            k += 1
        }
        queue.removeFirst(k)
    }

    func time(_ mono: UInt64) -> LogTime {
        LogTime(monoNs: Int64(bitPattern: mono), wallNs: Int64(bitPattern: mono) &+ wallOffset)
    }

    var trialId: UUID? { current >= 0 && current < trialIds.count ? trialIds[current] : nil }

    /// A click's record (or its failure), logged against the trial and station of the
    /// engine's ask for it; held until the ask is taken if it came first.
    func clickRecord(_ record: StationRecord) {
        guard !pendingClicks.isEmpty else {
            earlyClicks.append(record)
            return
        }
        let ask = pendingClicks.removeFirst()
        if let r = roundClicks.firstIndex(where: { $0.ask == ask.ask }) {
            if case .click(let c) = record {
                roundClicks[r].latency = c.handedLatency
            } else {
                roundClicks[r].failed = true
            }
        }
        switch record {
        case .click(let c): logClick(c, station: ask.station, trialId: ask.trialId)
        case .clickFailed(let ts, let why):
            submit(
                LoggedEvent(
                    kind: .fault, sessionId: settings.sessionId, trialId: ask.trialId,
                    time: time(MonotonicClock.now()), kernelNs: Int64(bitPattern: ts),
                    detail: jsonObject(["click_failed": "\(why)"])))
        default: break
        }
    }

    /// A click as the log keeps it: at the station the engine asked it for (-1: none).
    func logClick(_ c: ClickRecord, station: Int, trialId: UUID?) {
        submit(
            LoggedEvent(
                kind: .click, sessionId: settings.sessionId, trialId: trialId,
                station: station >= 0 ? number(station) : nil,
                time: time(c.handedTimestamp), kernelNs: Int64(bitPattern: c.edgeTimestamp),
                click: ClickTiming(
                    edgeNs: Int64(bitPattern: c.edgeTimestamp), handedNs: Int64(bitPattern: c.handedTimestamp),
                    triggerNs: c.triggerTimestamp == 0 ? nil : Int64(bitPattern: c.triggerTimestamp),
                    delayFrames: Int64(c.delayFrames), onsetLatencyNs: Int64(clamping: c.onsetLatency))))
        handedLatencies.append(c.handedLatency)
        onsetLatencies.append(c.onsetLatency)
    }

    /// The board station (0-based) behind the engine's station `station`.
    func board(_ station: Int) -> Int {
        station >= 0 && station < settings.usedStations.count ? settings.usedStations[station] : station
    }

    /// The engine's station as the log numbers it: the board's station, from 1.
    func number(_ station: Int) -> Int { board(station) + 1 }

    /// The engine's station by the board's name for it.
    func name(_ station: Int) -> String { boardName(board(station)) }

    func boardName(_ station: Int) -> String {
        station >= 0 && station < settings.stationNames.count ? settings.stationNames[station] : "\(station + 1)"
    }

}
