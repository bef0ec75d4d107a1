import Figures
import Foundation
import Glibc
import SessionLog
import StationControl
import StationIO
import Synchronization
import TrainingEngine

/// The hot loop's one consumer: drains the station's one ring (raw edges, clicks and the
/// engine's notes, in the order the hot thread made them), turns them into log events, commits
/// each trial with `commitTrial` and prints its line. Runs on its own thread, so SQLite and
/// stdout never touch the hot path. Order alone attributes each record: nothing waits.
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
        var watch: (@Sendable (WatchEvent) -> Void)? = nil
        /// Double-blind: nothing a handler can read (watch lines and events, the terminal and
        /// the journal) names a station the dog visited, indicated or was clicked at, says
        /// whether it was the target, or gives a trial's outcome, until the session is over.
        /// Any member of the station's group may watch, the handler included, and past trials'
        /// targets tell a handler how the block is laid out (never the same station more than
        /// N times in a row). Faults keep their station: someone must go and clear it. The
        /// log keeps everything; the full trial lines are printed when the session ends.
        var blind = false
        /// The session as the one rule (`Visibility`) sees it: watchers and the terminal are
        /// the handler's side.
        var blindState: BlindState { blind ? .doubleBlindRunning : .notBlind }
        /// Double-blind: each trial's committed layout (salt and digest), by trial index; empty
        /// when the session commits none.
        var commitments: [TrialCommitment] = []
        /// A resumed session: the trials (or rounds) logged before this segment; `layouts` are
        /// the block's from trial `firstTrial + 1`, and every number the feeder writes counts on.
        var firstTrial = 0
        /// Each layout's trial id (a resumed session keeps the ids its events already carry);
        /// nil: new ones.
        var trialIds: [UUID]? = nil
        /// A threshold step's procedure (issue 38): fills each trial's target with its dilution
        /// and logs the procedure's state with the trial.
        var threshold: ThresholdFeed? = nil
    }

    let settings: Settings
    private let stationRing: EventRing<StationRecord>
    /// The engine's notes as they come out of the ring (a trial's end spans two records).
    var noteDecoder = EngineNote.Decoder()
    private let recordsReady: Int32
    let writer: LogWriter
    let trialIds: [UUID]
    let wallOffset: Int64

    /// The hot loop's reports of edge descriptors that cannot be read; set before `start()`.
    var sourceFaults: EventRing<EdgeSourceFault>?
    /// The click player's reports of a sound device that fails and recovers; set before `start()`.
    var soundReports: EventRing<SoundReport>?

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
    /// The last trial (0-based) the dog indicated in, or -1: a handler's guess comes before it.
    let indicatedTrial = Atomic<Int>(-1)

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
    /// Sensor faults logged so far, by kind; read by `status` from the control thread while the
    /// feeder runs. Which stations are flagged now is the engine's (`EngineSnapshot`) and the
    /// hot loop's (`HotLoop.linesOutOfService`), never counted here.
    public let sensorFaults = Mutex<[StationFault: Int]>([:])
    /// Starts refused because a station was active: the virtual assistant's cue to try again.
    let refusedStarts = Atomic<Int>(0)
    /// The fault each station last had in the trial in progress, for the trial's reason.
    var trialFaults: [Int: StationFault] = [:]
    /// The station whose activity refused the last start, until a search starts.
    var refusedBy: Int?
    /// Whether the journal was last told the log fails (`watchLogHealth`); feeder thread only.
    var logFailingSaid = false

    // The trial in progress, as the feeder sees it.
    var current = -1
    var visits: [(station: Int, indicated: Bool)] = []
    /// What each station saw in the trial in progress.
    var observer: TrialObserver
    /// A click's record (played or failed) waiting for its ask, the engine's note that follows
    /// it in the same input (the hot loop pushes the record, the input's raw edge, then the
    /// engine handler's notes). The record carries no station; the ask says where, whose, and
    /// which trial.
    var heldClick: StationRecord?
    /// The last click logged: its edge's timestamp and trial, for the feeder's pulse after it.
    var lastClick: (edge: UInt64, trialId: UUID?) = (0, nil)
    var asks = 0
    /// The trial in progress's clicks, for its line: where, whose, and edge to ALSA (nil:
    /// failed, or no record: no audio device).
    var roundClicks: [(ask: Int, station: Int, trainer: Bool, latency: UInt64?, failed: Bool)] = []
    /// The trial in progress's error presses, by the station the nose was at (-1: none), for its
    /// line: an error press at the target makes a round not correct, so the line must show it.
    var roundErrors: [Int] = []

    init(
        settings: Settings, stationRing: EventRing<StationRecord>, recordsReady: Int32, writer: LogWriter
    ) {
        self.settings = settings
        self.stationRing = stationRing
        self.recordsReady = recordsReady
        self.writer = writer
        trialIds = settings.trialIds ?? settings.layouts.map { _ in UUID() }
        observer = TrialObserver(
            stationCount: settings.usedStations.isEmpty ? settings.stationNames.count : settings.usedStations.count)
        wallOffset = WallClock.now() &- Int64(bitPattern: MonotonicClock.now())
    }

    func start() {
        // Trial 1's commitment reaches the handler's side before anything of the segment.
        announceCommitment(ofTrial: 0)
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
            drainOnce()
            watchLogHealth()
            if last {
                drainOnce()
                break
            }
            // The hot loop signals after every round that pushed anything, engine notes
            // included; the timeout is only a backstop.
            _ = poll(&pfd, 1, 1000)
            _ = read(recordsReady, &value, 8)
        }
        finished.store(true, ordering: .releasing)
    }

    /// One pass over the rings; internal so tests drive the feeder without its thread.
    func drainOnce() {
        stationRing.drain { take($0) }
        sourceFaults?.drain { sourceFault($0) }
        soundReports?.drain { soundReport($0) }
    }

    func time(_ mono: UInt64) -> LogTime {
        LogTime(monoNs: Int64(bitPattern: mono), wallNs: Int64(bitPattern: mono) &+ wallOffset)
    }

    var trialId: UUID? { current >= 0 && current < trialIds.count ? trialIds[current] : nil }

    /// A click's record (or its failure), logged against the trial and station of the
    /// engine's ask for it (`station` -1: none).
    func clickRecord(_ record: StationRecord, station: Int, trialId: UUID?) {
        switch record {
        case .click(let c): logClick(c, station: station, trialId: trialId)
        case .clickFailed(let ts, let why):
            submit(
                LoggedEvent(
                    kind: .fault, sessionId: settings.sessionId, trialId: trialId,
                    time: time(MonotonicClock.now()), kernelNs: Int64(bitPattern: ts),
                    detail: EventDetail.encode(FaultDetail(clickFailed: "\(why)"))))
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
        lastClick = (c.edgeTimestamp, trialId)
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
