import StationConfig
import Synchronization
import TOMLKit
import TrainingEngine

// Reads a program from TOML and checks it thoroughly: a trainer's typo must give a clear
// message naming the file and the key, never a silently different program. Here, outside the
// engine, so the pure TrainingEngine links no parser; the checks are made key by key as the
// file is read, so each message names the key it is about. Reads no file itself: the caller
// hands in the text (the built-in programs are compiled into this module).

extension Program {
    /// Parses and validates a program file's text. `source` names it in messages.
    ///
    /// Each text is parsed once per process and its answer kept (`ParsedPrograms`): TOMLKit
    /// 0.6 never frees what it parses (its C++ tables and the strings and keys read from them,
    /// LebJe/TOMLKit#26), about 30 KB per parse of `study`, so a lineupd that parsed its program
    /// at every session start grew in a straight line (issue 24: 3.2 → 43 MB over 1,200 sessions).
    public static func parse(toml text: String, source: String) throws(ProgramError) -> Program {
        try ParsedPrograms.shared.answer(text: text, source: source) { () throws(ProgramError) in
            try parseOnce(toml: text, source: source)
        }
    }

    static func parseOnce(toml text: String, source: String) throws(ProgramError) -> Program {
        if let found = TOMLPrecheck.first(in: text) {
            throw ProgramError(file: source, keyPath: "", problem: found.problem(in: "a program file"))
        }
        let root: TOMLTable
        do {
            root = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ProgramError(
                file: source, keyPath: "",
                problem:
                    "line \(error.source.begin.line), column \(error.source.begin.column): \(error.description)"
            )
        } catch {
            throw ProgramError(file: source, keyPath: "", problem: "not a TOML file: \(error)")
        }
        var program = try ProgramReader(file: source).program(root)
        program.text = text
        return program
    }

    /// The programs that ship inside the binary.
    public static var builtinNames: [String] { ["study", "research-5-station", "olfactometer-rig", "threshold"] }

    /// A shipped program by name (`study`, `research-5-station`, `olfactometer-rig`, `threshold`), or nil if there is none.
    public static func builtin(named name: String) throws(ProgramError) -> Program? {
        let bytes: [UInt8]
        switch name {
        case "study": bytes = PackageResources.study_toml
        case "research-5-station": bytes = PackageResources.research_5_station_toml
        case "olfactometer-rig": bytes = PackageResources.olfactometer_rig_toml
        case "threshold": bytes = PackageResources.threshold_toml
        default: return nil
        }
        return try parse(toml: String(decoding: bytes, as: UTF8.self), source: "built-in:\(name).toml")
    }

    /// All shipped programs.
    public static func builtins() throws(ProgramError) -> [Program] {
        var result: [Program] = []
        for name in builtinNames {
            if let p = try builtin(named: name) { result.append(p) }
        }
        return result
    }
}

/// The answers of `Program.parse`, by text and source, so a text is parsed (and TOMLKit's leak
/// paid) once. Bounded: past `capacity` distinct texts a new one is parsed and not kept, so
/// memory grows only by what TOMLKit loses on it; no lineup sees that many distinct programs
/// (the loader's fuzz test does, and pays it). The capacity is the project's.
final class ParsedPrograms: Sendable {
    static let shared = ParsedPrograms(capacity: 256)

    struct Key: Hashable {
        var text: String
        var source: String
    }

    let capacity: Int
    private let answers = Mutex<[Key: Result<Program, ProgramError>]>([:])

    init(capacity: Int) { self.capacity = capacity }

    /// How many answers are kept (for tests).
    var count: Int { answers.withLock { $0.count } }

    func answer(
        text: String, source: String, parse: () throws(ProgramError) -> Program
    ) throws(ProgramError) -> Program {
        let key = Key(text: text, source: source)
        if let kept = answers.withLock({ $0[key] }) { return try kept.get() }
        let result: Result<Program, ProgramError>
        do { result = .success(try parse()) } catch { result = .failure(error) }
        answers.withLock { if $0.count < capacity { $0[key] = result } }
        return try result.get()
    }
}

/// Walks the TOML tree, keeping the key path for messages.
struct ProgramReader {
    let file: String

    func fail(_ path: String, _ problem: String) -> ProgramError {
        ProgramError(file: file, keyPath: path, problem: problem)
    }

    func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func checkKeys(_ table: TOMLTable, _ path: String, allowed: Set<String>) throws(ProgramError) {
        for key in table.keys.sorted() where !allowed.contains(key) {
            let list = allowed.sorted().joined(separator: ", ")
            throw fail(join(path, key), "unknown key (expected one of: \(list))")
        }
    }

    func string(_ t: TOMLTable, _ key: String, _ path: String, default value: String? = nil)
        throws(ProgramError)
        -> String
    {
        guard let v = t[key] else {
            if let value { return value }
            throw fail(join(path, key), "missing (a text is required)")
        }
        guard let s = v.string else { throw fail(join(path, key), "must be a text in quotes") }
        return s
    }

    /// A whole number within `range` (the project's, ProgramLimits); a default is not checked.
    func int(_ t: TOMLTable, _ key: String, _ path: String, default value: Int? = nil, in range: ClosedRange<Int>)
        throws(ProgramError)
        -> Int
    {
        guard let v = t[key] else {
            if let value { return value }
            throw fail(join(path, key), "missing (a whole number is required)")
        }
        guard let i = v.int else { throw fail(join(path, key), "must be a whole number") }
        guard range.contains(i) else {
            throw fail(
                join(path, key), "must be \(range.lowerBound) to \(range.upperBound) (the project's range), not \(i)")
        }
        return i
    }

    /// A number of seconds or a share: integers are accepted where a decimal is expected.
    func double(_ t: TOMLTable, _ key: String, _ path: String, default value: Double? = nil)
        throws(ProgramError)
        -> Double?
    {
        guard let v = t[key] else { return value }
        if let d = v.double, d.isFinite { return d }
        if let i = v.int { return Double(i) }
        throw fail(join(path, key), "must be a number")
    }

    /// Seconds above zero and within `range` (the project's, ProgramLimits).
    func seconds(
        _ t: TOMLTable, _ key: String, _ path: String, default value: Double?, in range: ClosedRange<Double>
    )
        throws(ProgramError)
        -> Double?
    {
        guard let d = try double(t, key, path, default: value) else { return nil }
        guard d > 0 else { throw fail(join(path, key), "must be greater than zero, not \(d)") }
        guard range.contains(d) else {
            throw fail(
                join(path, key),
                "must be above 0 and at most \(seconds(range.upperBound)) seconds (the project's range), not \(d)")
        }
        return d
    }

    func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    func tables(_ t: TOMLTable, _ key: String, _ path: String) throws(ProgramError) -> [TOMLTable] {
        guard let v = t[key] else { throw fail(join(path, key), "missing (at least one is required)") }
        guard let array = v.array else {
            throw fail(join(path, key), "must be a list of tables ([[\(key)]])")
        }
        var result: [TOMLTable] = []
        for (i, item) in array.enumerated() {
            guard let table = item.table else {
                throw fail("\(join(path, key))[\(i)]", "must be a table")
            }
            result.append(table)
        }
        guard !result.isEmpty else { throw fail(join(path, key), "must not be empty") }
        return result
    }

    func program(_ root: TOMLTable) throws(ProgramError) -> Program {
        try checkKeys(root, "", allowed: ["name", "title", "description", "phases", "max_uses", "max_uses_per_dog"])
        let name = try string(root, "name", "")
        let title = try string(root, "title", "")
        let description = try string(root, "description", "", default: "")
        var phases: [Phase] = []
        var phaseIDs: Set<String> = []
        for (i, table) in try tables(root, "phases", "").enumerated() {
            let phase = try self.phase(table, "phases[\(i)]")
            guard phaseIDs.insert(phase.id).inserted else {
                throw fail("phases[\(i)].id", "\"\(phase.id)\" is used by an earlier phase")
            }
            phases.append(phase)
        }
        // The program's limits stand for every step that sets none of its own.
        let maxUses = try optionalInt(root, "max_uses", "", in: ProgramLimits.maxUses)
        let maxUsesPerDog = try optionalInt(root, "max_uses_per_dog", "", in: ProgramLimits.maxUses)
        for p in phases.indices {
            for s in phases[p].steps.indices {
                phases[p].steps[s].lineup.maxUses = phases[p].steps[s].lineup.maxUses ?? maxUses
                phases[p].steps[s].lineup.maxUsesPerDog = phases[p].steps[s].lineup.maxUsesPerDog ?? maxUsesPerDog
            }
        }
        return Program(name: name, title: title, description: description, phases: phases, source: file)
    }

    func phase(_ t: TOMLTable, _ path: String) throws(ProgramError) -> Phase {
        try checkKeys(t, path, allowed: ["id", "title", "description", "steps"])
        var steps: [Step] = []
        var ids: Set<String> = []
        for (i, table) in try tables(t, "steps", path).enumerated() {
            let step = try self.step(table, "\(path).steps[\(i)]")
            guard ids.insert(step.id).inserted else {
                throw fail(
                    "\(path).steps[\(i)].id", "\"\(step.id)\" is used by an earlier step of this phase")
            }
            steps.append(step)
        }
        return Phase(
            id: try string(t, "id", path), title: try string(t, "title", path),
            description: try string(t, "description", path, default: ""), steps: steps)
    }

    func step(_ t: TOMLTable, _ path: String) throws(ProgramError) -> Step {
        try checkKeys(
            t, path,
            allowed: [
                "id", "title", "description", "mode", "lineup", "hold_s", "inter_trial_s", "criterion",
                "exercises", "ready", "station_outputs", "after_false_alert", "procedure",
            ])
        let modeText = try string(t, "mode", path)
        guard let mode = TrainingMode(rawValue: modeText) else {
            throw fail(
                join(path, "mode"),
                "unknown mode \"\(modeText)\" (expected trainer-led, automated or double-blind)")
        }
        guard let lineupTable = t["lineup"]?.table else {
            throw fail(join(path, "lineup"), t["lineup"] == nil ? "missing" : "must be a table")
        }
        let lineup = try self.lineup(lineupTable, join(path, "lineup"))
        var criterion: GraduationCriterion? = nil
        if let c = t["criterion"] {
            criterion = try self.criterion(c, join(path, "criterion"))
        }
        let readyText = try string(t, "ready", path, default: "press")
        guard let ready = ReadyMode(rawValue: readyText) else {
            throw fail(join(path, "ready"), "unknown ready \"\(readyText)\" (expected press or auto)")
        }
        guard ready == .press || mode != .trainerLed else {
            throw fail(
                join(path, "ready"),
                "a trainer-led step is started by the trainer: ready = \"auto\" is for automated steps")
        }
        let outputsText = try string(t, "station_outputs", path, default: "none")
        guard let stationOutputs = StationOutputs(rawValue: outputsText) else {
            throw fail(
                join(path, "station_outputs"),
                "unknown station_outputs \"\(outputsText)\" (expected none, load or search)")
        }
        let afterText = try string(t, "after_false_alert", path, default: "end")
        guard let afterFalseAlert = AfterFalseAlert(rawValue: afterText) else {
            throw fail(
                join(path, "after_false_alert"),
                "unknown after_false_alert \"\(afterText)\" (expected end or continue)")
        }
        guard t["after_false_alert"] == nil || mode != .trainerLed else {
            throw fail(
                join(path, "after_false_alert"),
                "a trainer-led round is judged by the trainer: after_false_alert is for automated steps")
        }
        var exercises: [Exercise] = []
        var ids: Set<String> = []
        for (i, table) in try tables(t, "exercises", path).enumerated() {
            let exercise = try self.exercise(table, "\(path).exercises[\(i)]")
            guard ids.insert(exercise.id).inserted else {
                throw fail(
                    "\(path).exercises[\(i)].id", "\"\(exercise.id)\" is used by an earlier exercise")
            }
            exercises.append(exercise)
        }
        try checkLaidOut(lineup, mode: mode, exercises: exercises, path)
        var step = Step(
            id: try string(t, "id", path), title: try string(t, "title", path),
            description: try string(t, "description", path, default: ""), mode: mode, lineup: lineup,
            holdSeconds: try seconds(t, "hold_s", path, default: nil, in: ProgramLimits.holdSeconds),
            interTrialSeconds: try seconds(t, "inter_trial_s", path, default: 10, in: ProgramLimits.interTrialSeconds)
                ?? 10,
            criterion: criterion, exercises: exercises)
        step.ready = ready
        step.stationOutputs = stationOutputs
        step.afterFalseAlert = afterFalseAlert
        if let p = t["procedure"] {
            step.procedure = try procedure(p, step: step, exerciseTables: try tables(t, "exercises", path), path)
        }
        return step
    }

    /// Whether every block of the step can be laid out. With two stations or more the target's
    /// balanced stations can always be ordered within any run limit (each station gets at most
    /// one trial more than another); on one station every trial with a target puts it there, so
    /// the run limit must cover them all, or the layout generator could only give up.
    func checkLaidOut(_ lineup: LineupSetup, mode: TrainingMode, exercises: [Exercise], _ path: String)
        throws(ProgramError)
    {
        guard lineup.stations == 1, lineup.targets == 1 else { return }
        for (i, exercise) in exercises.enumerated() {
            let count = mode == .trainerLed ? exercise.repeats : exercise.trials
            let withTarget = count - Int((Double(count) * lineup.noTargetShare).rounded())
            guard withTarget > lineup.maxSameStationInARow else { continue }
            throw fail(
                join(path, "lineup.max_same_station_in_a_row"),
                "on one station the target is there on each of the \(withTarget) trials with a target of exercises[\(i)], "
                    + "more than \(lineup.maxSameStationInARow) in a row: its blocks cannot always be laid out "
                    + "(leave the key out on one station)")
        }
    }

    func lineup(_ t: TOMLTable, _ path: String) throws(ProgramError) -> LineupSetup {
        try checkKeys(
            t, path,
            allowed: [
                "stations", "targets", "controls", "blanks", "distractors", "no_target_share",
                "max_same_station_in_a_row", "max_uses", "max_uses_per_dog", "novel_target_share", "novel_only",
            ])
        let stations = try int(t, "stations", path, in: ProgramLimits.stations)
        if let v = t["targets"]?.int, v > 1 {
            throw fail(join(path, "targets"), "at most one station may hold the target")
        }
        let targets = try int(t, "targets", path, default: 1, in: 0...1)
        // Each kind at most the stations, so their sum below cannot overflow.
        let controls = try int(t, "controls", path, default: 0, in: 0...stations)
        let distractors = try int(t, "distractors", path, default: 0, in: 0...stations)
        // Blanks fill what is left unless given, so `{ stations = 2, targets = 1 }` is one target and one blank.
        let blanks = try int(
            t, "blanks", path, default: max(0, stations - targets - controls - distractors), in: 0...stations)
        guard targets + controls + blanks + distractors == stations else {
            throw fail(
                path,
                "targets + controls + blanks + distractors is \(targets + controls + blanks + distractors), but stations is \(stations)"
            )
        }
        let share = try double(t, "no_target_share", path, default: 0) ?? 0
        guard (0...1).contains(share) else {
            throw fail(join(path, "no_target_share"), "must be within 0...1")
        }
        guard targets == 1 || share == 0 else {
            throw fail(
                join(path, "no_target_share"), "a lineup without a target cannot have target-free trials")
        }
        let run = try int(
            t, "max_same_station_in_a_row", path, default: stations > 1 ? 2 : 1_000_000,
            in: ProgramLimits.maxSameStationInARow)
        var setup = LineupSetup(
            stations: stations, targets: targets, controls: controls, blanks: blanks,
            distractors: distractors,
            noTargetShare: share, maxSameStationInARow: run)
        setup.maxUses = try optionalInt(t, "max_uses", path, in: ProgramLimits.maxUses)
        setup.maxUsesPerDog = try optionalInt(t, "max_uses_per_dog", path, in: ProgramLimits.maxUses)
        let novelShare = try double(t, "novel_target_share", path, default: 0) ?? 0
        guard (0...1).contains(novelShare) else {
            throw fail(join(path, "novel_target_share"), "must be within 0...1, not \(novelShare)")
        }
        guard targets == 1 || novelShare == 0 else {
            throw fail(join(path, "novel_target_share"), "a lineup without a target has no target to make novel")
        }
        setup.novelTargetShare = novelShare
        if let v = t["novel_only"] {
            guard let b = v.bool else { throw fail(join(path, "novel_only"), "must be true or false") }
            setup.novelOnly = b
        }
        return setup
    }

    func optionalInt(_ t: TOMLTable, _ key: String, _ path: String, in range: ClosedRange<Int>)
        throws(ProgramError) -> Int?
    {
        guard t[key] != nil else { return nil }
        return try int(t, key, path, in: range)
    }

    func criterion(_ value: TOMLValueConvertible, _ path: String) throws(ProgramError)
        -> GraduationCriterion
    {
        if let array = value.array {
            var list: [GraduationCriterion] = []
            for (i, item) in array.enumerated() {
                list.append(try criterion(item, "\(path)[\(i)]"))
            }
            guard !list.isEmpty else { throw fail(path, "an empty list of criteria can never be met") }
            return list.count == 1 ? list[0] : .anyOf(list)
        }
        guard let t = value.table else {
            throw fail(
                path, "must be a table like { kind = \"consecutive-correct\", n = 30 } or a list of them")
        }
        let kind = try string(t, "kind", path)
        switch kind {
        case "consecutive-correct":
            try checkKeys(t, path, allowed: ["kind", "n"])
            return .consecutiveCorrect(n: try int(t, "n", path, in: ProgramLimits.criterionTrials))
        case "correct-within":
            try checkKeys(t, path, allowed: ["kind", "correct", "min_trials"])
            let correct = try int(t, "correct", path, in: ProgramLimits.criterionTrials)
            let minTrials = try int(t, "min_trials", path, in: ProgramLimits.criterionTrials)
            return .correctWithin(correct: correct, minTrials: minTrials)
        case "accuracy-window":
            try checkKeys(t, path, allowed: ["kind", "accuracy", "window"])
            let accuracy = try double(t, "accuracy", path) ?? -1
            guard accuracy > 0 && accuracy <= 1 else {
                throw fail(join(path, "accuracy"), "must be a share above 0 and at most 1 (e.g. 0.95)")
            }
            return .accuracyWindow(
                accuracy: accuracy, window: try int(t, "window", path, in: ProgramLimits.criterionTrials))
        default:
            throw fail(
                join(path, "kind"),
                "unknown criterion \"\(kind)\" (expected consecutive-correct, correct-within or accuracy-window)"
            )
        }
    }

    func exercise(_ t: TOMLTable, _ path: String) throws(ProgramError) -> Exercise {
        try checkKeys(
            t, path, allowed: ["id", "title", "instruction", "duration_s", "repeats", "trials"])
        return Exercise(
            id: try string(t, "id", path), title: try string(t, "title", path),
            instruction: try string(t, "instruction", path),
            durationSeconds: try seconds(t, "duration_s", path, default: 10, in: ProgramLimits.durationSeconds) ?? 10,
            repeats: try int(t, "repeats", path, default: 4, in: ProgramLimits.repeats),
            trials: try int(t, "trials", path, default: 20, in: ProgramLimits.trials))
    }
}
