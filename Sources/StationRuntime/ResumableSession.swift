import Foundation
import Glibc
import Thresholds
import TrainingEngine

/// What a running session needs to go on after lineupd was cut short (a crash, a kill, a power
/// cut, a restart): its block as laid out (every trial's layout and id), its rules, and, for a
/// double-blind session, the salts of the commitments already in the log, so the trials still
/// to run open the commitments made before the first one (docs/figures.md, "Committed
/// layouts"). The log cannot keep these: the layouts and salts are what the handler must not
/// learn, and the log is readable by the station's group.
///
/// Kept beside the log in `<log>.resume`, readable by lineupd's user alone (mode 0600), written
/// (and synced) before the session's first trial and removed when the session ends.
struct ResumableSession: Codable, Sendable {
    /// 2 when the file holds a threshold session (an older lineupd, which cannot go on with
    /// its procedure, refuses the file rather than run the block without it); 1 otherwise.
    static let version = 1
    static let thresholdVersion = 2

    var version = Self.version
    var session: UUID
    var dog: String
    var dogId: UUID
    var mode: TrainingMode
    /// `phase/step`, or `simulation`.
    var step: String
    /// The program's name, for graduation at the end (nil: a simulated block).
    var program: String?
    /// The engine's configuration as the session started it (before `running`).
    var configuration: LineupMachine.Configuration
    var layouts: [TrialLayout]
    /// Each trial's id, as its events and its row carry it.
    var trialIds: [UUID]
    /// Double-blind: each trial's commitment (salt and digest); empty otherwise.
    var salts: [String]
    var digests: [String]
    var seed: UInt64
    var usedStations: [Int]
    var labels: [String: String]
    var outputMode: StationOutputs
    var autoStart: Bool
    /// The wall clock (ns) the session started at.
    var startedWallNs: Int64
    /// Set when lineupd stopped in order (SIGTERM: a restart, a shutdown) with the session
    /// running: when, in wall-clock ns. Nil: it was cut short without a word (a crash, a kill, a
    /// power cut).
    var stoppedWallNs: Int64? = nil
    /// A `lineupd --simulate` block (true): resumed by `lineupd --simulate --resume`, its trial
    /// lines printed in full as the block's are (no handler watches a simulated block).
    var simulatedBlock: Bool? = nil
    /// The boot lineupd last ran the session in (set as it is saved): another boot at the next
    /// start means the station itself went down (a power cut, a reboot), not only lineupd.
    var bootId: String? = nil
    /// A threshold session's procedure (issue 38): its rules, ladder and dilution-commitment
    /// salts. Its state is not kept here: a resume recomputes it from the trials logged.
    var threshold: ResumableThreshold? = nil

    var commitments: [TrialCommitment] {
        zip(salts, digests).map { TrialCommitment(salt: $0, digest: $1) }
    }

    /// The file beside the log at `databasePath`.
    static func path(forLog databasePath: String) -> String { databasePath + ".resume" }

    /// Writes it whole or not at all: to a temporary file (0600), synced, renamed over the old
    /// one, the directory synced, so a power cut leaves the old file or the new, never half.
    func save(forLog databasePath: String) throws {
        let path = Self.path(forLog: databasePath)
        let temporary = path + ".new"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var saved = self
        saved.version = threshold == nil ? Self.version : Self.thresholdVersion
        let data = try encoder.encode(saved)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ResumeFileError(path: temporary, errno: errno) }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd)
        close(fd)
        guard written == data.count, synced == 0 else {
            let failure = errno
            unlink(temporary)
            throw ResumeFileError(path: temporary, errno: failure)
        }
        guard rename(temporary, path) == 0 else {
            let failure = errno
            unlink(temporary)
            throw ResumeFileError(path: path, errno: failure)
        }
        let directory = open(logDirectory(of: databasePath), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
    }

    /// The file beside the log, or nil when there is none; a file that cannot be read is
    /// reported (and left for a person to look at).
    static func load(forLog databasePath: String) throws -> ResumableSession? {
        let path = Self.path(forLog: databasePath)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ResumeFileError(path: path, errno: EACCES)
        }
        do {
            let saved = try JSONDecoder().decode(ResumableSession.self, from: data)
            guard saved.version == (saved.threshold == nil ? Self.version : Self.thresholdVersion),
                saved.trialIds.count == saved.layouts.count,
                saved.salts.count == saved.digests.count
            else { throw ResumeFileError(path: path, errno: EINVAL) }
            return saved
        } catch let error as ResumeFileError {
            throw error
        } catch {
            throw ResumeFileError(path: path, errno: EINVAL)
        }
    }

    static func remove(forLog databasePath: String) {
        unlink(path(forLog: databasePath))
    }
}

/// The resume file could not be written or read.
struct ResumeFileError: Error, CustomStringConvertible {
    var path: String
    var errno: Int32
    var description: String {
        errno == EINVAL
            ? "\(path) is not a session lineupd can resume (damaged, or from another version)"
            : "\(path): \(String(cString: strerror(errno)))"
    }
}

/// A threshold session's procedure as a resume needs it: the rules (`ThresholdProcedure`), the
/// ladder weakest first (ids, labels, concentrations), the block's length, and each trial's
/// dilution-commitment salt (double-blind; secret until its trial is logged, as the layouts'
/// salts are, so here and not in the log).
struct ResumableThreshold: Codable, Sendable, Equatable {
    var procedure: String
    var ladderRungs: Int
    var down: Int?
    var step: Int?
    var startRung: Int?
    var stopAfterReversals: Int?
    var stopAfterTrials: Int?
    var catchTrialRate: Double?
    var rungs: [Int]?
    var blocks: Int?
    var catchTrialsPerBlock: Int?
    var ladder: [String]
    var labels: [String]
    var concentrations: [Double]
    var trials: Int
    var salts: [String]

    init(_ plan: ThresholdPlan, salts: [String]) {
        procedure = plan.procedure.name
        ladderRungs = plan.procedure.ladderRungs
        switch plan.procedure.method {
        case .staircase(let r):
            down = r.down
            step = r.step
            startRung = r.startRung
            stopAfterReversals = r.stopAfterReversals
            stopAfterTrials = r.stopAfterTrials
            catchTrialRate = r.catchTrialRate
        case .constantStimuli(let r, let b, let c):
            rungs = r
            blocks = b
            catchTrialsPerBlock = c
        }
        ladder = plan.ladder
        labels = plan.labels
        concentrations = plan.concentrations
        trials = plan.trials
        self.salts = salts
    }

    /// The rules as the session started with them; nil for a file that does not hold them whole.
    var rules: ThresholdProcedure? {
        switch procedure {
        case "staircase":
            guard let down, let step, let startRung else { return nil }
            return ThresholdProcedure(
                method: .staircase(
                    StaircaseRules(
                        down: down, step: step, startRung: startRung, stopAfterReversals: stopAfterReversals,
                        stopAfterTrials: stopAfterTrials, catchTrialRate: catchTrialRate ?? 0)),
                ladderRungs: ladderRungs)
        case "constant-stimuli":
            guard let rungs, let blocks else { return nil }
            return ThresholdProcedure(
                method: .constantStimuli(rungs: rungs, blocks: blocks, catchTrialsPerBlock: catchTrialsPerBlock ?? 0),
                ladderRungs: ladderRungs)
        default:
            return nil
        }
    }
}
