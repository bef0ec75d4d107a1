/// How one trial went, kept as plain values (bit masks, not arrays) so ending a trial on the
/// click path allocates nothing.
public struct TrialSummary: Sendable, Hashable {
    public var trialIndex: Int
    public var stationCount: Int
    /// The target's station, if the trial had one.
    public var targetStation: Int?
    /// Bit i set: station i's sensor was stuck during the trial (its figures are doubtful).
    public var sensorFaultMask: UInt64 = 0
    public var outcome: TrialOutcome
    /// Bit i set: station i was indicated at least once.
    public var indicatedMask: UInt64
    /// Bit i set: the dog's nose visited station i.
    public var visitedMask: UInt64
    public var searchStartedAt: Nanoseconds
    /// When the first indication completed, and where.
    public var firstIndicationAt: Nanoseconds?
    public var firstIndicationStation: Int?
    public var endedAt: Nanoseconds

    public func indicated(_ station: Int) -> Bool {
        station < 64 && indicatedMask & (1 << UInt64(station)) != 0
    }
    public func visited(_ station: Int) -> Bool {
        station < 64 && visitedMask & (1 << UInt64(station)) != 0
    }
    /// From the start cue to the first indication.
    public var latency: Nanoseconds? { firstIndicationAt.map { $0 &- searchStartedAt } }
    /// From the start cue to the end of the trial.
    public var searchTime: Nanoseconds { endedAt &- searchStartedAt }
}
