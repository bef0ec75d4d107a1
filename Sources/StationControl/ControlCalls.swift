import Foundation
import TrainingEngine

// Every control request, declared once: its Codable type (the fields that sit beside `v`,
// `id` and `request` on the wire), its name, its reply, and the station call that answers it.
// `ControlCalls.all` is the table the server decodes by name; the client sends the same type.
// Adding a request: a type here, its entry in `all`, its `StationControlling` requirement
// (below), the service's implementation in lineupd, and the lineupctl command that sends it.
// A new request does not bump `ControlProtocol.version`: an older lineupd answers it with
// `unknown-request`, which the client can read; a changed field of an old request would.

/// A request as it crosses the socket.
public protocol ControlCall: Codable, Sendable, Hashable {
    /// What a successful reply carries in `result`.
    associatedtype Reply: Codable & Sendable
    /// The name on the wire (`"request":"session-start"`).
    static var name: String { get }
}

/// A request the station answers with one reply. (`watch` is the one that is not: after its
/// reply the connection streams, which is the server's business.)
public protocol StationCall: ControlCall {
    func perform(on station: any StationControlling) throws(ControlRefusal) -> Reply
}

/// The table of requests, in the order `unknown-request` lists them.
public enum ControlCalls {
    public static let all: [any ControlCall.Type] = [
        StatusRequest.self, SessionRequest.self, LayoutRequest.self, ReadyRequest.self, AbortRequest.self,
        SessionEndRequest.self, WatchRequest.self, DogEntry.self, SampleEntry.self, SampleNoteEntry.self,
        TrialCorrectionEntry.self, SessionNoteEntry.self, SimulatedInput.self, AboutRequest.self,
        VersionRequest.self, ButtonPress.self, DogNoteEntry.self, GuessEntry.self, SyncReportEntry.self,
        RegistryAddition.self, RegistryUses.self, SessionResumeRequest.self, DilutionEntry.self,
    ]

    static let byName: [String: any ControlCall.Type] = Dictionary(
        all.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })

    public static var names: [String] { all.map { $0.name } }
}

/// What lineupd offers the socket. Each call returns quickly; none runs on the hot thread.
/// Calls come from the socket's thread, one at a time.
public protocol StationControlling: AnyObject, Sendable {
    func status() -> StationStatus
    /// Returns the new session's id, and a warning if it started with one (little free space).
    func startSession(_ request: SessionRequest) throws(ControlRefusal) -> SessionStarted
    /// Refused to the handler's view in double-blind mode.
    func layout(view: ClientView) throws(ControlRefusal) -> [LayoutEntry]
    /// The containers are loaded: start the next trial. The reply is the engine's answer;
    /// a press that starts nothing is refused, saying why.
    func ready() throws(ControlRefusal) -> ReadyReply
    /// Stops the current trial (recorded as aborted) and the session's block.
    func abort() throws(ControlRefusal)
    /// Ends the session with the trainer's improvement suggestions.
    func endSession(suggestions: String?) throws(ControlRefusal)
    /// Goes on with the session cut short by a crash, a kill, a power cut or a restart.
    func resumeSession() throws(ControlRefusal) -> SessionStarted
    /// Registers a watcher (`send` gets a JSON line per event until it returns false): a token for `unwatch`.
    func watch(_ send: @escaping @Sendable (String) -> Bool) -> Int
    func unwatch(_ token: Int)
    /// The researcher's additions; each returns the new row's id once it is committed.
    func addDog(_ entry: DogEntry) throws(ControlRefusal) -> String
    func addSample(_ entry: SampleEntry) throws(ControlRefusal) -> String
    func addDilutions(_ entry: DilutionEntry) throws(ControlRefusal) -> DilutionsAdded
    func noteSample(_ entry: SampleNoteEntry) throws(ControlRefusal) -> String
    /// A dog's notes from now on (a new dated row; the earlier notes are kept).
    func noteDog(_ entry: DogNoteEntry) throws(ControlRefusal) -> String
    /// A correction of a trial's outcome (a new row; the original is kept).
    func correctTrial(_ entry: TrialCorrectionEntry) throws(ControlRefusal) -> String
    /// A comment on a session after it (appended); returns the note's id.
    func noteSession(_ entry: SessionNoteEntry) throws(ControlRefusal) -> String
    /// Moves an input of the simulated lineup; refused when the lineup is real.
    func simulate(_ input: SimulatedInput) throws(ControlRefusal)
    /// Its log and the programs it would accept.
    func about() -> StationAbout
    /// The libraries the running lineupd was built with.
    func version() -> StationVersion
    /// A press of the clicker or error button from the station's page, handed to the hot
    /// thread as that button's edges.
    func press(_ press: ButtonPress) throws(ControlRefusal)
    /// The handler's guess of the target's station for the trial in progress (double-blind only).
    func guess(_ entry: GuessEntry) throws(ControlRefusal) -> GuessRecorded
    /// lineup-sync's latest run, kept in memory for `status` (lineupd itself has no network).
    func reportSync(_ entry: SyncReportEntry) throws(ControlRefusal)

    /// Dogs and samples of the lab's registry, written with their lab ids (lineup-sync
    /// --pull-registry): one already in the log is left as it is.
    func addFromRegistry(_ addition: RegistryAddition) throws(ControlRefusal) -> RegistryAdded

    /// The lab's counts of samples' uses on other stations (lineup-sync --pull-registry),
    /// logged where they differ from the latest the log holds.
    func logLabUses(_ uses: RegistryUses) throws(ControlRefusal) -> RegistryUsesLogged
}

extension StationControlling {
    /// A station that has no page buttons (the tests' stand-ins) refuses the press.
    public func press(_ press: ButtonPress) throws(ControlRefusal) {
        throw ControlRefusal(.failed, "this station takes no button presses over its socket")
    }

    /// A station that runs no double-blind sessions (the tests' stand-ins) records no guess.
    public func guess(_ entry: GuessEntry) throws(ControlRefusal) -> GuessRecorded {
        throw ControlRefusal(.failed, "this station records no handler's guesses")
    }

    /// A station that keeps no sync report (the tests' stand-ins) refuses it.
    public func reportSync(_ entry: SyncReportEntry) throws(ControlRefusal) {
        throw ControlRefusal(.failed, "this station keeps no lab sync report")
    }

    /// A station without a log of its own (the tests' stand-ins) takes nothing from the registry.
    public func addFromRegistry(_ addition: RegistryAddition) throws(ControlRefusal) -> RegistryAdded {
        throw ControlRefusal(.failed, "this station takes nothing from the lab's registry")
    }
}

// MARK: - The requests

/// `status`: the station now.
public struct StatusRequest: StationCall {
    public static let name = "status"
    public typealias Reply = StationStatus
    public init() {}
    public func perform(on station: any StationControlling) -> StationStatus { station.status() }
}

/// `session-start`: `samples` may be left out on the wire (see `SessionRequest.init(from:)`).
extension SessionRequest: StationCall {
    public static let name = "session-start"
    public typealias Reply = SessionStarted
    public func perform(on station: any StationControlling) throws(ControlRefusal) -> SessionStarted {
        try station.startSession(self)
    }
}

/// `layout`: the current layout as `view` may see it; a bare request is the handler's view.
public struct LayoutRequest: StationCall {
    public static let name = "layout"
    public typealias Reply = LayoutReply
    public var view: ClientView

    public init(view: ClientView) { self.view = view }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        view = try c.decodeIfPresent(ClientView.self, forKey: .view) ?? .handler
    }

    public func perform(on station: any StationControlling) throws(ControlRefusal) -> LayoutReply {
        LayoutReply(view: view, stations: try station.layout(view: view))
    }
}

/// `ready`: the containers are loaded.
public struct ReadyRequest: StationCall {
    public static let name = "ready"
    public typealias Reply = ReadyReply
    public init() {}
    public func perform(on station: any StationControlling) throws(ControlRefusal) -> ReadyReply {
        try station.ready()
    }
}

/// `abort`: stop the trial and the block.
public struct AbortRequest: StationCall {
    public static let name = "abort"
    public typealias Reply = Done
    public init() {}
    public func perform(on station: any StationControlling) throws(ControlRefusal) -> Done {
        try station.abort()
        return Done()
    }
}

/// `session-end`, with the trainer's suggestions.
public struct SessionEndRequest: StationCall {
    public static let name = "session-end"
    public typealias Reply = Done
    public var suggestions: String?
    public init(suggestions: String?) { self.suggestions = suggestions }
    public func perform(on station: any StationControlling) throws(ControlRefusal) -> Done {
        try station.endSession(suggestions: suggestions)
        return Done()
    }
}

/// `watch`: after its `Done` reply the connection streams events; the server registers it.
public struct WatchRequest: ControlCall {
    public typealias Reply = Done
    public static let name = "watch"
    public init() {}
}

extension DogEntry: StationCall {
    public static let name = "dog-add"
    public typealias Reply = Added
    public func perform(on station: any StationControlling) throws(ControlRefusal) -> Added {
        Added(id: try station.addDog(self))
    }
}

extension SampleEntry: StationCall {
    public static let name = "sample-add"
    public typealias Reply = Added
    public func perform(on station: any StationControlling) throws(ControlRefusal) -> Added {
        Added(id: try station.addSample(self))
    }
}

extension SampleNoteEntry: StationCall {
    public static let name = "sample-note"
    public typealias Reply = Added
    public func perform(on station: any StationControlling) throws(ControlRefusal) -> Added {
        Added(id: try station.noteSample(self))
    }
}

extension DogNoteEntry: StationCall {
    public static let name = "dog-note"
    public typealias Reply = Added
    public func perform(on station: any StationControlling) throws(ControlRefusal) -> Added {
        Added(id: try station.noteDog(self))
    }
}

extension TrialCorrectionEntry: StationCall {
    public static let name = "trial-correct"
    public typealias Reply = Added
    public func perform(on station: any StationControlling) throws(ControlRefusal) -> Added {
        Added(id: try station.correctTrial(self))
    }
}

extension SessionNoteEntry: StationCall {
    public static let name = "session-note"
    public typealias Reply = Added
    public func perform(on station: any StationControlling) throws(ControlRefusal) -> Added {
        Added(id: try station.noteSession(self))
    }
}

extension SimulatedInput: StationCall {
    public static let name = "simulate"
    public typealias Reply = Done
    public func perform(on station: any StationControlling) throws(ControlRefusal) -> Done {
        try station.simulate(self)
        return Done()
    }
}

/// `about`: the station's log and the programs it would accept.
public struct AboutRequest: StationCall {
    public static let name = "about"
    public typealias Reply = StationAbout
    public init() {}
    public func perform(on station: any StationControlling) -> StationAbout { station.about() }
}

/// `version`: what the running lineupd was built with, which need not be what the lineupctl
/// asking was built with (the two are installed apart, and a board may hold an older daemon).
public struct VersionRequest: StationCall {
    public static let name = "version"
    public typealias Reply = StationVersion
    public init() {}
    public func perform(on station: any StationControlling) -> StationVersion { station.version() }
}

/// `version`'s result.
public struct StationVersion: Sendable, Codable, Hashable {
    /// The control protocol's version lineupd speaks (`ControlProtocol.version`).
    public var protocolVersion: Int
    /// libgpiod's version and the API the build uses, e.g. `2.1.3 (v2 API)`.
    public var libgpiod: String
    /// alsa-lib's version, e.g. `1.2.8`.
    public var alsaLib: String

    public init(protocolVersion: Int, libgpiod: String, alsaLib: String) {
        self.protocolVersion = protocolVersion
        self.libgpiod = libgpiod
        self.alsaLib = alsaLib
    }
}

/// `press`: the clicker or error button pressed on the station's page (lineup-web). It takes
/// the physical button's path: the station writes the button line's edges where the hot loop
/// reads its inputs, so the click and its record are made as for a thumb on the button.
public struct ButtonPress: StationCall {
    public static let name = "press"
    public typealias Reply = Done
    /// `clicker` or `error`.
    public var button: String

    public init(button: String) { self.button = button }

    public func perform(on station: any StationControlling) throws(ControlRefusal) -> Done {
        try station.press(self)
        return Done()
    }
}

/// `guess`: in a double-blind session, the station the handler believes holds the target, said
/// before the dog's indication (issue 21; Lit et al. 2011). One per trial: a second is refused
/// and the first stands. The reply names the trial and echoes the handler's own station, nothing
/// of the layout, so the handler learns nothing from it.
public struct GuessEntry: StationCall {
    public static let name = "guess"
    public typealias Reply = GuessRecorded
    /// The station as the board names it (`C`) or as the log numbers it (`3`).
    public var station: String

    public init(station: String) { self.station = station }

    public func perform(on station: any StationControlling) throws(ControlRefusal) -> GuessRecorded {
        try station.guess(self)
    }
}

/// `guess`'s reply: which trial the guess is for, and the station the handler named.
public struct GuessRecorded: Sendable, Codable, Hashable {
    /// The trial's number in its session, from 1.
    public var trial: Int
    /// The station as the board names it.
    public var station: String

    public init(trial: Int, station: String) {
        self.trial = trial
        self.station = station
    }
}

/// `sync-report`: lineup-sync says, after each run, how far the lab store is behind this
/// station's log. lineupd keeps the latest in memory and shows it in `status` (`lab_sync`).
public struct SyncReportEntry: StationCall {
    public static let name = "sync-report"
    public typealias Reply = Done
    /// Whether everything the log held when the run started is now in the store.
    public var complete: Bool
    /// Rows the store lacks, and the wall time (ns since 1970) of the oldest of them; nil when
    /// the store did not answer, so what it has is unknown.
    public var behindRows: Int?
    public var oldestUnsyncedWallNs: Int64?
    /// Rows sent in this run.
    public var sentRows: Int
    /// Why the run stopped early, when it did.
    public var error: String?
    /// When the run ended (wall time, ns since 1970), by the sync's clock.
    public var endedWallNs: Int64

    public init(
        complete: Bool, behindRows: Int?, oldestUnsyncedWallNs: Int64?, sentRows: Int, error: String?,
        endedWallNs: Int64
    ) {
        self.complete = complete
        self.behindRows = behindRows
        self.oldestUnsyncedWallNs = oldestUnsyncedWallNs
        self.sentRows = sentRows
        self.error = error
        self.endedWallNs = endedWallNs
    }

    public func perform(on station: any StationControlling) throws(ControlRefusal) -> Done {
        guard behindRows.map({ $0 >= 0 }) ?? true, sentRows >= 0 else {
            throw ControlRefusal(.badRequest, "sync-report: behind_rows and sent_rows cannot be negative")
        }
        try station.reportSync(self)
        return Done()
    }
}

/// `status`'s `labSync`: the latest sync report lineupd holds, or `reporting: false` when no
/// lineup-sync has reported since lineupd started.
public struct LabSyncStatus: Sendable, Codable, Hashable {
    public var reporting: Bool
    /// The latest report's rows behind (nil: the store did not answer) and the oldest
    /// unsynced row's wall time, ISO 8601.
    public var behindRows: Int?
    public var oldestUnsynced: String?
    /// When the latest report came, and when a run last sent everything (ISO 8601); nil
    /// when none has since lineupd started.
    public var reportedAt: String?
    public var lastSuccess: String?
    /// The latest run's error, when it failed.
    public var lastError: String?

    public init(
        reporting: Bool, behindRows: Int? = nil, oldestUnsynced: String? = nil, reportedAt: String? = nil,
        lastSuccess: String? = nil, lastError: String? = nil
    ) {
        self.reporting = reporting
        self.behindRows = behindRows
        self.oldestUnsynced = oldestUnsynced
        self.reportedAt = reportedAt
        self.lastSuccess = lastSuccess
        self.lastError = lastError
    }
}

/// `registry-add`: dogs and samples made on other stations, from the lab store's registry,
/// each with the id it was made with (lab-wide), so the trainer can start a session for a lab
/// dog here and its sessions sync back under that id. Sent a few at a time: a request is one
/// line of at most `ControlProtocol.maxLineBytes`.
public struct RegistryAddition: StationCall {
    public static let name = "registry-add"
    public typealias Reply = RegistryAdded
    public var dogs: [RegistryDog]
    public var samples: [RegistrySample]
    /// True from a lineup-sync that sends `registry-uses` after: lineupd refuses a registry-add
    /// without it, so an older lineup-sync (limits on this log only) is told, not obeyed.
    public var labUsesFollow: Bool?

    public init(dogs: [RegistryDog] = [], samples: [RegistrySample] = [], labUsesFollow: Bool? = nil) {
        self.dogs = dogs
        self.samples = samples
        self.labUsesFollow = labUsesFollow
    }

    public func perform(on station: any StationControlling) throws(ControlRefusal) -> RegistryAdded {
        try station.addFromRegistry(self)
    }
}

/// A dog of the lab's registry: its lab id and what it was made with.
public struct RegistryDog: Sendable, Codable, Hashable {
    public var id: String
    public var name: String
    public var born: String?

    public init(id: String, name: String, born: String? = nil) {
        self.id = id
        self.name = name
        self.born = born
    }
}

/// `registry-add`'s reply: the ids written now, those the log had already, and those left out
/// with why (a name or label this station already gives another dog or sample).
public struct RegistryAdded: Sendable, Codable, Hashable {
    public var added: [String]
    public var present: [String]
    public var refused: [RegistryRefusal]

    public init(added: [String] = [], present: [String] = [], refused: [RegistryRefusal] = []) {
        self.added = added
        self.present = present
        self.refused = refused
    }
}

public struct RegistryRefusal: Sendable, Codable, Hashable {
    public var id: String
    public var reason: String

    public init(id: String, reason: String) {
        self.id = id
        self.reason = reason
    }
}

extension StationCall {
    /// The reply line to this request: the station's answer, or its refusal.
    func answer(id: Int?, from station: any StationControlling) -> Data {
        do throws(ControlRefusal) {
            return ControlProtocol.encodeReply(id: id, result: try perform(on: station))
        } catch {
            return ControlProtocol.encodeReply(id: id, error: error)
        }
    }
}
