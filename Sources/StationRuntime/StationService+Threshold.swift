import Foundation
import SessionLog
import StationControl
import Thresholds
import TrainingEngine

// A threshold step's session (issue 38; docs/programs.md, "Threshold steps"): its ladder is the
// session's target samples, each a dilution; its layouts are laid out ahead as any step's
// (the target's station balanced and never too long in one place, controls and blanks rotated,
// positions committed with a double-blind session), the catch trials decided ahead from the
// seed, and each target's dilution left for the procedure to choose as the dog answers.

/// A threshold session's ladder and layouts, made before anything is written.
struct ThresholdPlan {
    var procedure: ThresholdProcedure
    /// Weakest first: ids, labels, concentrations.
    var ladder: [String]
    var labels: [String]
    var concentrations: [Double]
    var layouts: [TrialLayout]
    var trials: Int
}

extension StationService {
    /// The ladder from the session's target samples: as many as the procedure's `ladder_rungs`,
    /// each a dilution with a concentration (all in one unit) or a dilution factor (all of one
    /// stock), ordered weakest first. Then the block's layouts with the catch trials in place.
    func thresholdPlan(
        procedure: ThresholdProcedure, setup: LineupSetup, samples: [Sample], exerciseTrials: Int, seed: UInt64,
        step: String
    ) throws(ControlRefusal) -> ThresholdPlan {
        let targets = samples.filter { $0.kind == .target }
        let known: [String: SampleSummary]
        do {
            known = Dictionary(
                (try log.reader.samples()).map { ($0.id.lowercased(), $0) }, uniquingKeysWith: { a, _ in a })
        } catch {
            throw ControlRefusal(.failed, "cannot read the samples: \(error)")
        }
        let wanted = procedure.ladderRungs
        guard targets.count == wanted else {
            throw ControlRefusal(
                .badRequest,
                "step \(step) runs its procedure over a ladder of \(wanted) dilutions: give \(wanted) target samples "
                    + "with --sample (one per dilution; lineupctl samples add-ladder makes them), not \(targets.count)")
        }
        let dilutions = targets.map { known[$0.id.lowercased()] }
        var strength: [Double] = []
        if dilutions.allSatisfy({ $0?.dilution?.concentration != nil }) {
            let units = Set(dilutions.map { $0?.dilution?.concentrationUnit ?? "" })
            guard units.count == 1 else {
                throw ControlRefusal(
                    .badRequest,
                    "the ladder's dilutions give their concentrations in different units (\(units.sorted().joined(separator: ", "))): "
                        + "one unit for the whole ladder")
            }
            strength = dilutions.map { $0!.dilution!.concentration! }
        } else if dilutions.allSatisfy({ $0?.dilution?.factor != nil }) {
            let stocks = Set(dilutions.map { $0?.dilution?.stock ?? "" })
            guard stocks.count == 1 else {
                throw ControlRefusal(
                    .badRequest,
                    "the ladder's dilutions are of different stocks (\(stocks.sorted().joined(separator: ", "))): "
                        + "a ladder is one stock's dilutions")
            }
            strength = dilutions.map { 1 / $0!.dilution!.factor! }
        } else {
            let plain = zip(targets, dilutions).filter { $0.1?.dilution == nil }.map { $0.0.label ?? $0.0.id }
            throw ControlRefusal(
                .badRequest,
                plain.isEmpty
                    ? "the ladder's dilutions must all give a concentration (one unit) or all a dilution factor"
                    : "\(plain.joined(separator: ", ")) \(plain.count == 1 ? "is" : "are") not a dilution: a threshold "
                        + "step's targets are a ladder of dilutions (lineupctl samples add-ladder)")
        }
        let order = strength.indices.sorted { strength[$0] < strength[$1] }
        for k in 1..<order.count where strength[order[k]] == strength[order[k - 1]] {
            throw ControlRefusal(
                .badRequest,
                "\(targets[order[k - 1]].label ?? "") and \(targets[order[k]].label ?? "") are equally strong: "
                    + "each rung of a ladder is a different dilution")
        }
        let trials = procedure.trials(exerciseTrials: exerciseTrials)
        let run: ThresholdRun
        do {
            run = try ThresholdRun(procedure: procedure, trials: trials, seed: seed)
        } catch {
            throw ControlRefusal(.badRequest, "step \(step): \(error)")
        }
        // The positions: the target's station balanced over the trials with a target, none on
        // a catch trial; the targets' samples are left for the procedure (none in the pool).
        var generator = LayoutGenerator(setup: setup, samples: samples.filter { $0.kind != .target }, seed: seed)
        var layouts: [TrialLayout] = []
        do {
            let withTarget = run.plan.filter { $0 != .catchTrial }.count
            var stations = try generator.targetStations(count: withTarget).makeIterator()
            for (i, next) in run.plan.enumerated() {
                layouts.append(
                    try generator.layout(
                        trialIndex: i, targetStation: next == .catchTrial ? nil : stations.next() ?? nil))
            }
        } catch {
            throw ControlRefusal(.badRequest, "cannot lay out \(trials) trials: \(error)")
        }
        return ThresholdPlan(
            procedure: procedure, ladder: order.map { targets[$0].id },
            labels: order.map { targets[$0].label ?? targets[$0].id },
            concentrations: order.map { strength[$0] }, layouts: layouts, trials: trials)
    }

    /// The session's settings for its procedure, as the log keeps them: what the re-scorer and
    /// a researcher need to redo it (the rules, the ladder by label, weakest first).
    static func thresholdSettings(_ plan: ThresholdPlan) -> [String: String] {
        var out = [
            "procedure": plan.procedure.name, "procedure_ladder_rungs": "\(plan.procedure.ladderRungs)",
            "ladder": plan.labels.joined(separator: ","),
            "ladder_concentrations": plan.concentrations.map { "\($0)" }.joined(separator: ","),
        ]
        switch plan.procedure.method {
        case .staircase(let r):
            out["procedure_down"] = "\(r.down)"
            out["procedure_step"] = "\(r.step)"
            out["procedure_start_rung"] = "\(r.startRung)"
            out["procedure_stop_after_reversals"] = r.stopAfterReversals.map { "\($0)" } ?? ""
            out["procedure_stop_after_trials"] = r.stopAfterTrials.map { "\($0)" } ?? ""
            out["procedure_catch_trial_rate"] = "\(r.catchTrialRate)"
        case .constantStimuli(let rungs, let blocks, let c):
            out["procedure_rungs"] = rungs.map(String.init).joined(separator: ",")
            out["procedure_blocks"] = "\(blocks)"
            out["procedure_catch_trials_per_block"] = "\(c)"
        }
        return out
    }
}
