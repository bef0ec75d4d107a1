import Synchronization
import TrainingEngine

/// The engine's state as the hot thread last published it: what `status` shows and the
/// `ready` reply reads. Plain atomics under a sequence count (a seqlock): the hot thread
/// never waits, and a reader retries if it read while the hot thread wrote.
final class EngineSnapshot: Sendable {
    struct Values {
        var activity: LineupMachine.Activity
        /// Trials (or trainer-led rounds) begun, loaded ones included.
        var begun: Int
        /// When the activity in progress ends by itself (monotonic ns), or 0.
        var endsAt: UInt64
        /// Loaded during the interval: the next trial starts when it is over.
        var readyPending: Bool
        var noseAtStation: Bool
        /// The engine's station that refused the last start (-1: none).
        var blockedStation: Int
        /// The engine's sensor health, by the engine's station (bit i: station i): what
        /// `status` flags. Each mask is the engine's own, so a flag clears when the engine
        /// clears it (a stuck sensor released, a storm quiet, a silent one active again).
        var stuck: UInt64 = 0
        var silent: UInt64 = 0
        var chatter: UInt64 = 0
        /// The station that refused the last start, while it is still active.
        var activeAtStart: UInt64 = 0
    }

    private let sequence = Atomic<UInt64>(0)
    private let activity = Atomic<UInt8>(0)
    private let begun = Atomic<Int>(0)
    private let endsAt = Atomic<UInt64>(0)
    private let flags = Atomic<UInt8>(0)
    private let blocked = Atomic<Int>(-1)
    private let stuck = Atomic<UInt64>(0)
    private let silent = Atomic<UInt64>(0)
    private let chatter = Atomic<UInt64>(0)
    private let activeAtStart = Atomic<UInt64>(0)
    /// The last ready answer: ticket << 32 | answer << 24 | (station + 1) << 16 | number.
    let answer = Atomic<UInt64>(0)

    private static let activities: [LineupMachine.Activity] = [
        .idle, .loading, .searching, .interTrial, .exercise, .exerciseOver, .ended,
    ]

    /// The activity's index in `activities`, by a switch: `firstIndex(of:)` on the array
    /// allocated on every publish, so on every input the hot thread took (`bench click` counted
    /// one allocation an edge).
    static func code(of activity: LineupMachine.Activity) -> UInt8 {
        switch activity {
        case .idle: return 0
        case .loading: return 1
        case .searching: return 2
        case .interTrial: return 3
        case .exercise: return 4
        case .exerciseOver: return 5
        case .ended: return 6
        }
    }

    /// Hot thread only.
    func publish(_ v: Values) {
        sequence.add(1, ordering: .acquiringAndReleasing)
        activity.store(Self.code(of: v.activity), ordering: .releasing)
        begun.store(v.begun, ordering: .releasing)
        endsAt.store(v.endsAt, ordering: .releasing)
        flags.store((v.readyPending ? 1 : 0) | (v.noseAtStation ? 2 : 0), ordering: .releasing)
        blocked.store(v.blockedStation, ordering: .releasing)
        stuck.store(v.stuck, ordering: .releasing)
        silent.store(v.silent, ordering: .releasing)
        chatter.store(v.chatter, ordering: .releasing)
        activeAtStart.store(v.activeAtStart, ordering: .releasing)
        sequence.add(1, ordering: .acquiringAndReleasing)
    }

    func read() -> Values {
        while true {
            let before = sequence.load(ordering: .acquiring)
            if before & 1 == 1 { continue }
            let a = Int(activity.load(ordering: .acquiring))
            let f = flags.load(ordering: .acquiring)
            let v = Values(
                activity: a < Self.activities.count ? Self.activities[a] : .idle,
                begun: begun.load(ordering: .acquiring), endsAt: endsAt.load(ordering: .acquiring),
                readyPending: f & 1 != 0, noseAtStation: f & 2 != 0, blockedStation: blocked.load(ordering: .acquiring),
                stuck: stuck.load(ordering: .acquiring), silent: silent.load(ordering: .acquiring),
                chatter: chatter.load(ordering: .acquiring), activeAtStart: activeAtStart.load(ordering: .acquiring))
            if sequence.load(ordering: .acquiring) == before { return v }
        }
    }
}
