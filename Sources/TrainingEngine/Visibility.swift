// The one visibility rule (issue 34): who may see what of a session, decided here and asked by
// every surface (the watch stream, lineupd's trial lines, `status`, the log's readers, the page,
// lineup-sync and its heartbeat). Pure values and a switch: no I/O, no allocation, so the
// engine may ask it too.

/// A kind of fact about a session that a surface may give or withhold.
public enum SessionFact: String, Sendable, Hashable, CaseIterable {
    /// Which sample (or kind) stands at which station: the layouts, and the loading
    /// instructions ("load trial 3") that are made of them.
    case layout
    /// How a trial went: its outcome, indicated station, full trial line, and what is counted
    /// from them (hits, rates, a milestone reached).
    case outcome
    /// The block's seed, which predicts every layout.
    case seed
    /// Where the dog's nose went: the station of an edge, sniff, indication, click or press, and
    /// an event's detail (whether a hold was at the target, which sample was at the nose).
    case searchEvent = "search-event"
    /// The station whose sensor is faulty, and the fault's detail.
    case faultStation = "fault-station"
    /// That the dog's nose is at some station right now (`status`'s `holding`).
    case holdingNow = "holding-now"
    /// The handler's guesses of where the target was.
    case guess
    /// Each station sensor's level now (`status`'s inputs; the buttons' are not a station's).
    case stationInputLevel = "station-input-level"
    /// How often a sample has stood in a trial, and which trials.
    case sampleUse = "sample-use"
    /// Free-text notes on the session.
    case note
    /// Which dog runs the session.
    case dog
    /// That a session runs, its id, step and start: what every refusal names.
    case session
    /// Its trial number and count, that a trial is over, each event's kind and time, a cue's
    /// words, a layout's commitment (a digest, nothing of the layout).
    case progress
}

/// Who receives a surface's bytes.
public enum Viewer: String, Sendable, Hashable, CaseIterable {
    /// The handler and the trainer: the watch stream, `status`, `ready`, lineupd's trial lines on
    /// the terminal and in the journal, and the page's live view for every role (the handler may
    /// be logged in under any account).
    case handler
    /// The assistant who loads the containers: the assistant's view of the layout.
    case assistant
    /// Whoever reads the station's log: every `lineupctl` reading, the page's log routes.
    case researcher
    /// The lab store's readers (`lineupctl ... --lab`, lineup-lab's page): what lineup-sync sends.
    case labReader = "lab-reader"
    /// The heartbeat lineup-sync pushes to the lab store, whose page a handler may see.
    case heartbeat
}

/// Where a session stands for the rule.
public enum BlindState: String, Sendable, Hashable, CaseIterable {
    /// A double-blind session that has not ended.
    case doubleBlindRunning = "double-blind-running"
    /// A double-blind session that has ended: everything is shown.
    case doubleBlindEnded = "double-blind-ended"
    /// A trainer-led or automated session: everything is shown.
    case notBlind = "not-blind"

    public init(mode: TrainingMode?, running: Bool) {
        self = mode != .doubleBlind ? .notBlind : running ? .doubleBlindRunning : .doubleBlindEnded
    }
}

/// A set of viewers, held in one byte.
public struct Viewers: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ viewer: Viewer) {
        switch viewer {
        case .handler: rawValue = 1
        case .assistant: rawValue = 2
        case .researcher: rawValue = 4
        case .labReader: rawValue = 8
        case .heartbeat: rawValue = 16
        }
    }
    public static let handler = Viewers(.handler)
    public static let assistant = Viewers(.assistant)
    public static let researcher = Viewers(.researcher)
    public static let labReader = Viewers(.labReader)
    public static let heartbeat = Viewers(.heartbeat)
    public static let nobody: Viewers = []
}

/// The rule: what each viewer may see of a session in each state.
public enum Visibility {
    /// Who may see `fact` while a double-blind session runs. Ended, or not blind, everyone sees
    /// everything (the log keeps it all from the start, for the researcher).
    ///
    /// Why each row:
    /// - the layout goes to the assistant who loads it, no one else; the seed predicts every
    ///   layout, so it goes to no one; an outcome, where the nose went, a guess, a station's
    ///   level and a sample's uses each tell where the target was or was not (and past targets
    ///   tell where the next cannot be), so they go to no one until it ends;
    /// - a sensor fault keeps its station at the station (someone must go and clear it), but not
    ///   in the heartbeat: which sensor chatters or falls silent during a search can say where
    ///   the dog was, and the lab's page need not clear it; for the same reason the heartbeat
    ///   says "searching" for "holding", which the handler sees anyway (the dog is in front of them);
    /// - the session itself (its id, step, start) is named by every reading's refusal; its dog
    ///   too, except in the heartbeat, which says only that a blind session runs; the lab store
    ///   holds nothing of it (lineup-sync holds its rows back until it ends);
    /// - its progress (trial numbers, event kinds and times, cues, commitments) is what the
    ///   handler hears and sees anyway, and the heartbeat's trial counts.
    public static func whileDoubleBlindRuns(_ fact: SessionFact) -> Viewers {
        switch fact {
        case .layout: [.assistant]
        case .outcome, .seed, .searchEvent, .guess, .stationInputLevel, .sampleUse, .note: .nobody
        case .faultStation, .holdingNow: [.handler, .assistant]
        case .dog: [.handler, .assistant, .researcher]
        case .session: [.handler, .assistant, .researcher, .heartbeat]
        case .progress: [.handler, .assistant, .heartbeat]
        }
    }

    /// Whether `viewer` may see `fact` of a session in `state`.
    public static func shows(_ fact: SessionFact, to viewer: Viewer, in state: BlindState) -> Bool {
        state != .doubleBlindRunning || whileDoubleBlindRuns(fact).contains(Viewers(viewer))
    }

    /// Whether `viewer` may see `fact` of a session run in `mode` while it runs.
    public static func shows(_ fact: SessionFact, to viewer: Viewer, runningIn mode: TrainingMode?) -> Bool {
        shows(fact, to: viewer, in: BlindState(mode: mode, running: true))
    }

    /// The facts of a running double-blind session withheld from `viewer`.
    public static func withheld(from viewer: Viewer) -> [SessionFact] {
        SessionFact.allCases.filter { !shows($0, to: viewer, in: .doubleBlindRunning) }
    }
}

extension Record {
    /// The kind of fact this record gives, for the rule.
    public var fact: SessionFact {
        switch self {
        case .layoutToLoad: .layout
        case .visit, .indication, .manualClick, .errorMark: .searchEvent
        case .trialEnded, .exerciseEnded: .outcome
        case .sensorFault, .sensorRecovered: .faultStation
        case .searchStarted, .interTrialOver, .exerciseStarted, .ignored: .progress
        }
    }
}
