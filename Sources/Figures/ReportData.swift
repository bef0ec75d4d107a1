import Foundation
import TrainingEngine

// What `lineupctl report` shows, gathered in one read transaction. Every figure is a `Tally`'s
// (Figures/Figures.swift), filled by the same `scanTrials` pass `stats` uses: a session's
// figures equal `stats --by session`, a dog's stations `stats --by station --dog`, a sample's
// `stats --by sample`. The Report module only draws them.

/// Everything the report draws.
public struct ReportData: Sendable {
    /// Sessions in scope, oldest first.
    public var sessions: [ReportSession]
    /// Dogs with sessions in scope, by name.
    public var dogs: [ReportDog]
    /// Every sample that stood in a scored or aborted trial in scope (pooled over dogs: a
    /// contaminated control is the sample's fault, whichever dog found it), by kind and label.
    public var samples: [ReportSample]
    /// Fault events by what failed (`log-events-dropped`, `click-failed`, ...).
    public var faults: [String: Int]
    /// Fault events logged outside any session (only counted when no dog or session is chosen).
    public var faultsOutsideSessions: Int
    /// Trials in scope (after corrections), aborted included.
    public var trials: Int
    /// When the report was made (ISO 8601, the station's offset).
    public var generated: String
    /// Each dog's familiar and novel figures and its figures by sample detail, by dog id
    /// (ReportData+Samples.swift).
    public var familiarNovel: [String: FamiliarNovelRow] = [:]
    public var confound: [String: [ConfoundRow]] = [:]
    /// Each session's threshold figures with its track, for the sessions whose targets are
    /// dilutions (docs/figures.md, "How little the dog can smell"); none when no target is one.
    public var thresholds: [ThresholdRow] = []
}

public struct ReportSession: Sendable {
    public var id: String
    public var dogId: String
    public var dog: String
    public var started: String
    public var startedWallNs: Int64
    public var program: String?
    public var phase: String?
    public var step: String?
    public var exercise: String?
    public var mode: TrainingMode
    /// The station (board) it ran on, as it names itself; and, in a lab log, that station's
    /// identity (nil for the log's own sessions).
    public var station: String?
    public var stationId: String?
    /// `ended`, `stopped`, `interrupted`, `unknown`; nil while running.
    public var endedHow: String?
    public var endDetail: String?
    public var suggestions: [String]
    /// The trainer's comments on the session (its notes besides the improvement suggestions).
    public var comments: [String] = []
    /// The session's trials in scope, counted by `Tally`.
    public var tally: Tally
    public var figures: Figures { tally.figures }
    /// The step's graduation criterion, when the session's program names the step and the
    /// session ran in the step's own mode (only those sessions count toward it).
    public var criterion: GraduationCriterion?
    /// Why there is no criterion, when there is none.
    public var criterionNote: String?
    /// The share correct over the last `rollingWindow` scored trials of the dog on this step
    /// (the run the criterion looks at), at the session's end; nil without a criterion.
    public var rollingAccuracy: Double? = nil
    public var rollingWindow: Int? = nil
    /// For a count criterion ("c correct within at least m trials"): the dog's correct and
    /// scored trials on the step so far, at the session's end, and how far along the
    /// criterion that is (0...1, 1 = met; the engine's `progress`). Not an accuracy: 40
    /// correct of 100 trials meets "40 of ≥ 100", and so do 40 of 300.
    public var countCorrect: Int? = nil
    public var countTrials: Int? = nil
    public var countProgress: Double? = nil
    /// The verdict of each of the step's criteria (one, or each of a list, in its order) on the
    /// dog's scored trials on the step up to the session's end (`GraduationTracker.verdict`:
    /// once met, met): what the report says is met or not.
    public var criterionVerdicts: [CriterionVerdict] = []

    /// What the learning curve draws as one line: the program, the step and the mode.
    public var curveGroup: String {
        let where_ = [phase, step].compactMap { $0 }.joined(separator: "/")
        return "\(program ?? "no program") · \(where_.isEmpty ? "no step" : where_) · \(mode.rawValue)"
    }
    /// Click onset latencies (nanoseconds) of the session's clicks in scope.
    public var clickOnsetNs: [Int64]
    public var faults: Int
}

/// One point of a learning curve: a session, or consecutive sessions pooled when a dog has
/// more than the curve's limit.
public struct CurvePoint: Sendable {
    /// Indices into `ReportData.sessions`, all of one curve group (`ReportDog.groups`).
    public var sessions: [Int]
    /// Index into `ReportDog.groups`: the line this point belongs to.
    public var group: Int
    public var tally: Tally
    public var figures: Figures
    /// Click onset latency over the point's clicks, milliseconds.
    public var clicks: ClickSpread?
}

/// Click onset latency of a group of clicks, milliseconds (the engine's `quantile`, type 7).
public struct ClickSpread: Sendable, Hashable {
    public var n: Int
    public var p50: Double
    public var p99: Double
    public var worst: Double

    public init?(onsetNs: [Int64]) {
        guard !onsetNs.isEmpty else { return nil }
        let sorted = onsetNs.map { Double($0) / 1e6 }.sorted()
        n = sorted.count
        p50 = quantile(sorted, 0.5)
        p99 = quantile(sorted, 0.99)
        worst = sorted[sorted.count - 1]
    }
}

public struct ReportMilestone: Sendable, Hashable {
    public var sessionId: String?
    public var phase: String
    /// Nil: the phase was graduated.
    public var step: String?
    public var criterion: String?
    public var time: String
}

public struct ReportDog: Sendable {
    public var id: String
    public var name: String
    /// Indices into `ReportData.sessions`, oldest first.
    public var sessions: [Int]
    /// The learning curve, at most `maxPoints` points (unless the dog has sessions in more
    /// groups than that: then one point per group), in order of their first session.
    public var points: [CurvePoint]
    /// The curve's lines: each (program, step, mode) the dog has sessions in, in order of its
    /// first session (`ReportSession.curveGroup`).
    public var groups: [String]
    /// Sessions pooled per point (1 unless the dog has more sessions than the curve's limit).
    public var sessionsPerPoint: Int
    /// Each station as `stats --by station --dog` counts it, by its name (`StationNames`).
    public var stations: [NamedStation: Tally]
    /// Position bias: station by target position (nil: trials without a target).
    public var byTargetPosition: [PositionKey: Tally]
    public var milestones: [ReportMilestone]
}

public struct PositionKey: Sendable, Hashable {
    /// Where the target stood (nil: no target in the trial).
    public var target: NamedStation?
    public var station: NamedStation

    public init(target: NamedStation?, station: NamedStation) {
        self.target = target
        self.station = station
    }
}

public struct ReportSample: Sendable {
    public var id: String
    public var label: String
    public var kind: SampleKind
    /// Counted as `stats --by sample` counts it.
    public var tally: Tally
    /// Target: hit rate (hits / presentations); control or distractor: false-alert rate
    /// (false alerts / examined); nil for a blank.
    public var rate: Proportion?
    /// The pooled rate of the other samples of its kind (targets; controls and distractors).
    public var restRate: Double? { flag.flatMap(\.others.value) }
    /// `SampleFlag`'s verdict: the sample against the others of its kind; nil for a blank or
    /// a sample with no other of its kind.
    public var flag: SampleFlag.Verdict?
    /// Whether `SampleFlag` flags it.
    public var flagged: Bool { flag?.flagged ?? false }
}

extension GraduationCriterion {
    /// The criteria a list holds, each on its own (a single criterion: itself).
    public var each: [GraduationCriterion] {
        if case .anyOf(let list) = self { return list.flatMap(\.each) }
        return [self]
    }

    /// The count criterion ("c correct within at least m trials") this criterion holds, if any:
    /// the report draws its progress, not an accuracy.
    public var countCriterion: GraduationCriterion? {
        switch self {
        case .correctWithin: return self
        case .anyOf(let list): return list.lazy.compactMap(\.countCriterion).first
        default: return nil
        }
    }
}
