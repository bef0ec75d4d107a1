// What the engine asks its caller to do. Everything here is a plain value with no references,
// so building and returning actions never touches the heap: the click decision stays cheap.

/// A sound the dog and handler hear that is not the reward click.
public enum Cue: String, Sendable, Hashable {
    /// The search begins.
    case trialStart = "trial-start"
    /// The trial is over (indication or time-out).
    case trialEnd = "trial-end"
    /// A trainer-led exercise begins.
    case exerciseStart = "exercise-start"
    /// A trainer-led exercise's time is up.
    case exerciseEnd = "exercise-end"
}

/// Who may see a record while its session runs, as the one rule (`Visibility`) says for the
/// handler and the assistant.
public enum Audience: String, Sendable, Hashable {
    case everyone
    /// The loading assistant only (a double-blind session's layout).
    case assistantOnly = "assistant-only"
    /// Nobody until the session has ended (the log keeps it).
    case nobodyUntilItEnds = "nobody-until-it-ends"

    /// The audience of a fact of a session run in `mode`, while it runs.
    public init(_ fact: SessionFact, in mode: TrainingMode) {
        if Visibility.shows(fact, to: .handler, runningIn: mode) {
            self = .everyone
        } else if Visibility.shows(fact, to: .assistant, runningIn: mode) {
            self = .assistantOnly
        } else {
            self = .nobodyUntilItEnds
        }
    }
}

/// Something to write to the session's record.
public enum Record: Sendable, Hashable {
    /// A layout was handed to the assistant for loading; `audience` says who may see it.
    case layoutToLoad(trial: Int, audience: Audience)
    /// The search began (start cue).
    case searchStarted(trial: Int, at: Nanoseconds)
    /// A nose visit ended. Not `indicated`: a sniff. Times are arrival and departure.
    case visit(station: Int, from: Nanoseconds, to: Nanoseconds, indicated: Bool)
    /// The nose stayed at `station` from `heldFrom` until `at`, long enough to be an indication.
    case indication(station: Int, heldFrom: Nanoseconds, at: Nanoseconds, atTarget: Bool)
    /// The trainer pressed the clicker; `station` is where the dog's nose was, if anywhere.
    case manualClick(station: Int?, at: Nanoseconds)
    /// The trainer pressed the error button ("no reward").
    case errorMark(station: Int?, at: Nanoseconds)
    /// The trial is over.
    case trialEnded(trial: Int, outcome: TrialOutcome, at: Nanoseconds)
    /// The inter-trial interval is over: the next trial may be loaded.
    case interTrialOver(at: Nanoseconds)
    /// A trainer-led exercise repetition began (1-based).
    case exerciseStarted(repetition: Int, at: Nanoseconds)
    /// A trainer-led exercise repetition ended, by time-out or abort.
    case exerciseEnded(repetition: Int, clicks: Int, errors: Int, aborted: Bool, at: Nanoseconds)
    /// An input that had no meaning in the current state (kept for the record, never silent).
    case ignored(Ignored, at: Nanoseconds)
    /// A sensor looks wrong (see `SensorFault`); `station` is 0-based.
    case sensorFault(SensorFault, station: Int, at: Nanoseconds)
    /// A station flagged stuck went inactive again: its sensor is trusted again.
    case sensorRecovered(station: Int, at: Nanoseconds)

    /// Who may see this record while the session runs: the one rule's answer for its fact.
    public func audience(in mode: TrainingMode) -> Audience { Audience(fact, in: mode) }
}

/// What is wrong with a station's sensor. Decided from debounced edges and time alone, with
/// no allocation, on the hot path.
public enum SensorFault: String, Sendable, Hashable {
    /// Active when a trial was to start (a lid, a paw, a shorted cable): the start is refused
    /// until it is clear, so a blocked beam cannot complete a hold nobody made.
    case activeAtStart = "active-at-start"
    /// Active far longer than any indication (`Configuration.stuckAfter`): its holds are no
    /// longer indications (no click) until it goes inactive; the trial is marked.
    case stuck
    /// Never active over `Configuration.silentAfterTrials` trials in which the dog searched:
    /// an unplugged or dead sensor would make the station one the dog "never visits".
    case silent
    /// Debounced edges faster than any nose makes them (`Configuration.chatterEdges` in a row,
    /// each within `chatterGap`): a storm on the line. Its edges are ignored until it has been
    /// quiet for `chatterQuiet`, so it cannot take the visit from the station the dog is at.
    case chatter
}

/// Why an input was ignored.
public enum Ignored: String, Sendable, Hashable {
    case readyWithoutTrial = "ready-without-trial"
    case startInThisState = "start-in-this-state"
    case noMoreRepeats = "no-more-repeats"
    case stationOutOfRange = "station-out-of-range"
    case loadWhileBusy = "load-while-busy"
}

/// One thing for the caller to do.
public enum Action: Sendable, Hashable {
    /// Sound the click now. `station` is the station rewarded (nil: a manual click away from any
    /// station); `triggeredAt` is the timestamp of the edge, button or hold completion that caused it.
    case click(station: Int?, triggeredAt: Nanoseconds, automatic: Bool)
    case cue(Cue, at: Nanoseconds)
    /// Call `timerFired(at:)` at (or soon after) this time; replaces any earlier request.
    case armTimer(at: Nanoseconds)
    /// No timer is needed any more.
    case cancelTimer
    case record(Record)
}

/// A fixed-capacity list of actions held inline, so answering an input never allocates.
public struct Actions: Sendable, Sequence {
    public static let capacity = 8
    private var storage: InlineArray<8, Action> = InlineArray(repeating: .cancelTimer)
    public private(set) var count = 0
    /// True if an action had to be dropped for lack of room (a bug; the engine never needs 8).
    public private(set) var overflowed = false

    public init() {}

    public mutating func append(_ action: Action) {
        guard count < Actions.capacity else {
            overflowed = true
            return
        }
        storage[count] = action
        count += 1
    }

    public subscript(index: Int) -> Action { storage[index] }
    public var isEmpty: Bool { count == 0 }

    public struct Iterator: IteratorProtocol {
        let actions: Actions
        var index = 0
        public mutating func next() -> Action? {
            guard index < actions.count else { return nil }
            defer { index += 1 }
            return actions.storage[index]
        }
    }

    public func makeIterator() -> Iterator { Iterator(actions: self) }

    /// The click in this list, if any.
    public var click: Action? {
        for a in self { if case .click = a { return a } }
        return nil
    }
}
