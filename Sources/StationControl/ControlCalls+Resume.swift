import Foundation
import TrainingEngine

/// A session cut short (a crash, a kill, a power cut, a restart) that can be resumed: what
/// `status` says of it while it waits to be resumed (`session-resume`) or ended (`session-end`).
public struct InterruptedSession: Sendable, Codable, Hashable {
    public var session: String
    public var dog: String
    public var mode: TrainingMode
    public var step: String
    /// When lineupd was stopped or last heard of during it (the station's local time, `HH:mm`
    /// today, else `yyyy-MM-dd HH:mm`).
    public var at: String
    /// How it was cut short, in words: "a restart (lineupd was stopped)"; without a word, as the
    /// boot ids tell it: "a power cut or a reboot of the station" (another boot now), "a crash or a
    /// kill of lineupd" (the same boot), else "a crash, a kill or a power cut"; each followed by
    /// "(lineupd stopped without a word)".
    public var how: String
    /// Trials (or trainer-led rounds) of the block in the log, and the block's size.
    public var trialsLogged: Int
    public var trials: Int
    /// The trial (or round) running when it was cut short, which a resume logs interrupted (not
    /// scored); nil when none was (it stopped between trials).
    public var cutShort: Int?

    public init(
        session: String, dog: String, mode: TrainingMode, step: String, at: String, how: String, trialsLogged: Int,
        trials: Int
    ) {
        self.session = session
        self.dog = dog
        self.mode = mode
        self.step = step
        self.at = at
        self.how = how
        self.trialsLogged = trialsLogged
        self.trials = trials
    }
}

/// `session-resume`: go on with the session cut short, with its block, samples and committed
/// layouts. The reply is the session's, as `session-start`'s.
public struct SessionResumeRequest: StationCall {
    public static let name = "session-resume"
    public typealias Reply = SessionStarted
    public init() {}
    public func perform(on station: any StationControlling) throws(ControlRefusal) -> SessionStarted {
        try station.resumeSession()
    }
}

extension StationControlling {
    /// A station that keeps no sessions of its own (the tests' stand-ins) has none to resume.
    public func resumeSession() throws(ControlRefusal) -> SessionStarted {
        throw ControlRefusal(.noSession, "this station has no interrupted session to resume")
    }
}

extension ControlClient {
    /// Resumes the session cut short; the reply says where the block goes on.
    public func resumeSession() throws(ControlClientError) -> SessionStarted {
        try send(SessionResumeRequest())
    }
}
