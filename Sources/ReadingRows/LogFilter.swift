import TrainingEngine

/// Which rows a listing, statistic, reading or export covers, on either store. Ids are full
/// UUIDs (resolve what the researcher typed first: `FilterWords`, SessionLog's `resolveDog`).
public struct LogFilter: Sendable, Hashable {
    public var dogId: String?
    public var sessionId: String?
    public var trialId: String?
    public var eventKind: EventKind?
    /// Wall-clock bounds, nanoseconds since 1970 (UTC): `since` inclusive, `until` exclusive.
    public var since: Int64?
    public var until: Int64?
    /// Listings (`sessions`, `trials`, `events`) newest first, so `limit` keeps the latest
    /// rows. Statistics and exports ignore it: they read oldest first, as time runs.
    public var newestFirst = false
    /// Only sessions run in this mode, so a dog's figures from trainer-led rounds and from
    /// double-blind tests are not pooled unless asked for.
    public var mode: TrainingMode?
    /// Only sessions of this program (its name, as the log keeps it).
    public var program: String?
    /// Only sessions of this phase, and of this step of it when `step` is set.
    public var phase: String?
    public var step: String?
    /// Only sessions run by this handler (the pseudonymous code).
    public var handler: String?

    public init(
        dogId: String? = nil, sessionId: String? = nil, trialId: String? = nil,
        eventKind: EventKind? = nil, since: Int64? = nil, until: Int64? = nil, mode: TrainingMode? = nil,
        program: String? = nil, phase: String? = nil, step: String? = nil, handler: String? = nil
    ) {
        self.dogId = dogId
        self.sessionId = sessionId
        self.trialId = trialId
        self.eventKind = eventKind
        self.since = since
        self.until = until
        self.mode = mode
        self.program = program
        self.phase = phase
        self.step = step
        self.handler = handler
    }

    /// Whether a choice of the session's own (mode, program, step, handler) narrows the rows.
    public var selectsSessions: Bool {
        mode != nil || program != nil || phase != nil || step != nil || handler != nil
    }
}
