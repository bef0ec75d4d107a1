import Figures
import Foundation
import GRDB
import TrainingEngine

// MARK: - What the reader returns

/// A station as the board names it (`B`) and as the log numbers it (2).
public struct StationName: Sendable, Hashable, Codable {
    public var name: String
    public var number: Int
}

public struct DogSummary: Sendable, Hashable, Codable {
    public var id: String
    public var name: String
    public var born: String?
    public var notes: String?
    public var added: String
    public var sessions: Int
    public var trials: Int
    public var lastSession: String?
}

public struct SampleSummary: Sendable, Hashable, Codable {
    public var id: String
    public var label: String
    public var kind: SampleKind
    /// Its research facts, encoded flat beside the rest (SampleFacts+Log.swift).
    public var facts: SampleFacts
    public var added: String
    /// How many trials the sample stood in.
    public var uses: Int
    public var notes: Int
    /// Its usage limits as registered (nil: none of its own).
    public var maxUses: Int? = nil
    public var maxUsesPerDog: Int? = nil
    /// What it was diluted from and how (nil: not a dilution).
    public var dilution: DilutionSummary? = nil
}

/// A dilution as listed: its stock by label and id, and how it was made.
public struct DilutionSummary: Sendable, Hashable, Codable {
    public var stock: String
    public var stockId: String
    /// 1000 for 1:1000, from the stock.
    public var factor: Double?
    public var concentration: Double?
    public var concentrationUnit: String?
    public var diluent: String?
    public var madeOn: String?
    public var madeBy: String?
}

public struct NoteLine: Sendable, Hashable, Codable {
    public var time: String
    public var text: String
}

public struct SampleUse: Sendable, Hashable, Codable {
    public var dog: String
    public var uses: Int
    public var lastUsed: String
}

public struct SampleDetails: Sendable, Hashable, Codable {
    public var sample: SampleSummary
    public var notes: [NoteLine]
    public var usedBy: [SampleUse]
    /// Its uses on the lab's other stations as last pulled (nil: never pulled; LabUses.swift).
    public var lab: SampleLabUses? = nil
}

extension OutcomeCounts {
    init(_ row: Row) {
        self.init()
        trials = row["trials"]
        hits = row["hits"]
        misses = row["misses"]
        falseAlerts = row["false_alerts"]
        correctRejections = row["correct_rejections"]
        aborted = row["aborted"]
    }
}

public struct SessionSummary: Sendable, Hashable, Codable {
    public var id: String
    public var dogId: String
    public var dog: String
    public var started: String
    /// The program's name, as the log keeps it (nil: none logged, e.g. a simulated block).
    public var program: String?
    public var phase: String?
    public var step: String?
    public var exercise: String?
    public var mode: TrainingMode
    /// The station (board) it ran on, as that station names itself.
    public var station: String?
    /// Run without sample ids (`session start --unlabelled`, or trainer-led with no --sample):
    /// no figure by sample can rest on it.
    public var unlabelled: Bool = false
    public var results: OutcomeCounts
    /// How it ended (see `SessionEnd.How`); nil while it runs.
    public var endedHow: String?
}

public struct SessionSample: Sendable, Hashable, Codable {
    /// Nil for a blank container without a sample id.
    public var label: String?
    public var kind: SampleKind
    /// Scored trials in which it stood.
    public var presented: Int
    /// Of those, trials in which the dog indicated it.
    public var indicated: Int
    /// Its figures in this session (station level, as `stats --by sample`).
    public var figures: Figures
}

public struct LayoutSlot: Sendable, Hashable, Codable {
    public var station: Int
    /// The station's name (`StationNames`: its board's as the session logged it, else the default).
    public var name: String? = nil
    public var sample: String?
    public var kind: SampleKind
    /// What the station saw (nil for trials logged before schema v3).
    public var visited: Bool?
    public var indicated: Bool?
    public var firstIndicationMs: Double?
    public var sniffs: Int?
    public var dwellMs: Double?
    /// Whether the dog had never met the sample before the trial (nil: no sample, or not recorded).
    public var novel: Bool? = nil
}

/// One trial as the log keeps it (after corrections), for listings and exports. Not the
/// engine's `TrialSummary`, which is the trial as the machine ends it.
public struct LoggedTrial: Sendable, Hashable, Codable {
    public var id: String
    public var sessionId: String
    public var dog: String
    public var number: Int
    public var outcome: TrialOutcome
    public var indicatedStation: Int?
    /// The indicated station's name (`StationNames`); nil with none.
    public var indicatedName: String? = nil
    public var latencyMs: Double?
    public var searchMs: Double?
    public var started: String
    public var ended: String
    public var seed: UInt64?
    public var layout: [LayoutSlot]
    public var corrects: String?
    public var reason: String?
    /// A threshold step's state after this trial (schema v13); nil on any other step.
    public var procedure: LoggedProcedureState? = nil
}

public struct SessionDetails: Sendable, Hashable, Codable {
    public var id: String
    public var dogId: String
    public var dog: String
    public var handler: String?
    public var program: String?
    public var programSha256: String?
    public var phase: String?
    public var phaseSteps: Int?
    public var step: String?
    public var exercise: String?
    public var mode: TrainingMode
    public var station: String?
    public var settings: String
    public var started: String
    public var ended: String?
    /// `ended`, `stopped`, `interrupted` or `unknown` (see `SessionEnd.How`); nil while the
    /// session runs.
    public var endedHow: String?
    public var endDetail: String?
    /// The room it ran in (nil: none given).
    public var conditions: SessionConditions? = nil
    public var results: OutcomeCounts
    /// Hits and correct rejections over scored trials (`figures.trialAccuracy`).
    public var correct: Proportion
    /// The session's figures, as `stats --by session` gives them.
    public var figures: Figures
    public var samples: [SessionSample]
    public var improvementSuggestions: [String]
    public var comments: [String]
    public var trials: [LoggedTrial]
}

public struct EventSummary: Sendable, Hashable, Codable {
    public var seq: Int64
    public var id: String
    public var sessionId: String?
    public var trialId: String?
    public var kind: String
    public var station: Int?
    /// The station's name (`StationNames`); nil for an event at no station.
    public var stationName: String? = nil
    public var time: String
    public var monoNs: Int64
    public var kernelNs: Int64?
    public var value: Int64?
    public var durationNs: Int64?
    public var clickOnsetLatencyNs: Int64?
    public var detail: String?
}

public struct PhaseProgress: Sendable, Hashable, Codable {
    public var phase: String
    public var title: String?
    /// The program it is counted against (nil: not known, milestones only).
    public var program: String?
    /// Each step's progress, when the program is known.
    public var steps: [StepProgress] = []
    public var sessions = 0
    /// Scored trials in the phase.
    public var trials = 0
    public var correct = Proportion(successes: 0, trials: 0)
    public var recentWindow = 0
    public var recentCorrectPercent: Double?
    public var stepsPassed = 0
    public var phaseSteps: Int?
    /// Passed steps over the phase's steps, 100 once graduated; nil if the phase's
    /// size is not known.
    public var progressPercent: Double?
    /// When the phase was graduated, if it was.
    public var graduated: String?
    public var criterion: String?

    public init(phase: String) { self.phase = phase }
}

/// One step of a phase: its share done (`ProgramProgress`), when it was passed, and what passes it.
public struct StepProgress: Sendable, Hashable, Codable {
    public var step: String
    public var title: String
    public var mode: TrainingMode
    public var percent: Int
    /// When its milestone was logged, if it has one.
    public var passed: String?
    /// The criterion its milestone was logged with (and the counts that met it), if it has one.
    public var passedCriterion: String? = nil
    /// The criterion, or the exercises' rule, in words.
    public var rule: String
    /// The criterion's (or the exercise rule's) verdict on the step's trials now, with the
    /// counts it was judged on: what "passed" and "not yet" rest on.
    public var verdict: CriterionVerdict
    /// Scored trials and rounds on the step (in the step's own mode: what its criterion counts).
    public var trials: Int
    /// Scored trials the dog ran on the step in another mode: in the log, not counted toward it.
    public var otherModeTrials: Int = 0
    public var exercises: [ExerciseProgress]
}

/// Finished rounds (or trials) of one exercise, and how many correct in a row a step without
/// criterion needs.
public struct ExerciseProgress: Sendable, Hashable, Codable {
    public var exercise: String
    public var title: String
    /// Rounds (trials) done, every one, whatever the exercise's repeats: two sessions of four
    /// rounds are eight.
    public var done: Int
    /// Correct rounds in a row needed (a step without criterion).
    public var required: Int?
    /// Correct rounds in a row at the end (a step without criterion; `required` once reached).
    public var inARow: Int? = nil
}
