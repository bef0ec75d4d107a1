import Foundation
import ProgramFiles
import StationControl
import TrainingEngine

// A session's program and layouts: the program by name, the check that every station holds a
// sample, and the layout the loading assistant is shown.
extension StationService {
    /// A built-in program, or `NAME.toml` from the programs directory, checked against the board.
    func loadProgram(named name: String) throws(ControlRefusal) -> Program {
        if let builtin = try? Program.builtin(named: name) { return builtin }
        let names = Program.builtinNames.joined(separator: ", ")
        guard let directory = options.programsDirectory, !name.contains("/"), !name.hasPrefix(".") else {
            throw ControlRefusal(.unknown, "no program named \"\(name)\" (built in: \(names))")
        }
        let path = "\(directory)/\(name).toml"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ControlRefusal(.unknown, "no program named \"\(name)\" (built in: \(names); none at \(path))")
        }
        do {
            let program = try Program.parse(toml: text, source: path)
            try program.validate(stationCount: inputs.stationCount)
            return program
        } catch {
            throw ControlRefusal(.badRequest, "\(error)")
        }
    }

    /// Every target, control and distractor station of the block must hold a sample the log
    /// knows: the log records which sample sat where, and every figure by sample rests on it.
    /// Checked on the layouts themselves, so the rule is the generator's: each station of a
    /// kind holds a different sample of that kind.
    func checkEveryStationLabelled(_ layouts: [TrialLayout], step: String) throws(ControlRefusal) {
        var missing: [SampleKind: Int] = [:]
        for layout in layouts {
            for kind in [SampleKind.target, .control, .distractor] {
                let bare = layout.stations.filter { $0.kind == kind && $0.sampleID == nil }.count
                if bare > 0 { missing[kind] = max(missing[kind] ?? 0, bare) }
            }
        }
        guard !missing.isEmpty else { return }
        let kinds = [SampleKind.target, .control, .distractor].compactMap { kind in
            missing[kind].map { "\($0) \(kind.rawValue) sample(s)" }
        }
        throw ControlRefusal(
            .badRequest,
            "step \(step) lays out stations with no sample: give at least \(kinds.joined(separator: " and ")) "
                + "with --sample LABEL (lineupctl samples lists them), or start with --unlabelled to run with the "
                + "stations labelled by kind only (the log and every listing say so)")
    }

    public func layout(view: ClientView) throws(ControlRefusal) -> [LayoutEntry] {
        switching.lock()
        defer { switching.unlock() }
        guard let current, let segment else { throw ControlRefusal(.noSession, "no session is running") }
        guard Visibility.shows(.layout, to: view == .handler ? .handler : .assistant, runningIn: current.mode) else {
            // What is refused, not how to get round it: this reaches the handler's page too.
            throw ControlRefusal(.blind, "double-blind session: the layout is not shown to the handler")
        }
        // Trials and trainer-led rounds alike: the one running, or the next to load.
        let done = segment.feeder.committed.load(ordering: .acquiring)
        guard done < min(segment.layouts.count, segment.threshold?.limit.trials.load(ordering: .acquiring) ?? .max)
        else {
            throw ControlRefusal(
                .notReady,
                current.mode == .trainerLed ? "every repetition of the exercise is done" : "the block is complete")
        }
        let names = segment.usedStations.map { $0 < stationNames.count ? stationNames[$0] : "\($0 + 1)" }
        return segment.layout(done).stations.enumerated().map { i, content in
            LayoutEntry(
                station: i < names.count ? names[i] : "\(i + 1)", kind: content.kind,
                sample: content.sampleID.map { current.labels[$0] ?? $0 })
        }
    }
}
