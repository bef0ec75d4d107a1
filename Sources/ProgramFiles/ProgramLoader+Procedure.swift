import TOMLKit
import Thresholds
import TrainingEngine

// A threshold step's `procedure` table (issue 38): a staircase or the method of constant
// stimuli, each key checked as it is read so a mistake names its key; the rules' own checks
// (Thresholds') run last, against a ladder of the declared length.

extension ProgramReader {
    func procedure(_ value: TOMLValueConvertible, step: Step, exerciseTables: [TOMLTable], _ stepPath: String)
        throws(ProgramError) -> ThresholdProcedure
    {
        let path = join(stepPath, "procedure")
        guard let t = value.table else {
            throw fail(path, "must be a table like { kind = \"staircase\", ladder_rungs = 8, down = 2, ... }")
        }
        // What a threshold step's trials must be, before its own keys.
        guard step.mode != .trainerLed else {
            throw fail(path, "a threshold procedure runs automated or double-blind trials, not a trainer-led step")
        }
        guard step.lineup.targets == 1 else {
            throw fail(join(stepPath, "lineup.targets"), "a threshold step presents a target dilution: targets = 1")
        }
        guard step.lineup.noTargetShare == 0 else {
            throw fail(
                join(stepPath, "lineup.no_target_share"),
                "a threshold step's trials without a target are its procedure's catch trials "
                    + "(catch_trial_rate, catch_trials_per_block): leave no_target_share out")
        }
        guard step.lineup.novelTargetShare == 0, !step.lineup.novelOnly else {
            throw fail(
                join(stepPath, "lineup"),
                "a threshold step's targets are its ladder's dilutions, chosen by the procedure: "
                    + "novel_target_share and novel_only do not apply")
        }
        let kind = try string(t, "kind", path)
        let rungs = try int(t, "ladder_rungs", path, in: ProgramLimits.ladderRungs)
        let method: ThresholdProcedure.Method
        switch kind {
        case "staircase":
            try checkKeys(
                t, path,
                allowed: [
                    "kind", "ladder_rungs", "down", "step", "start_rung", "stop_after_reversals", "stop_after_trials",
                    "catch_trial_rate",
                ])
            let down = try int(t, "down", path, in: ProgramLimits.staircaseDown)
            let stepSize = try int(t, "step", path, default: 1, in: 1...(rungs - 1))
            let start = try int(t, "start_rung", path, in: 0...(rungs - 1))
            let reversals = try optionalInt(t, "stop_after_reversals", path, in: ProgramLimits.reversals)
            let trials = try optionalInt(t, "stop_after_trials", path, in: ProgramLimits.trials)
            guard reversals != nil || trials != nil else {
                throw fail(
                    path,
                    "a staircase needs a stop rule: stop_after_reversals, stop_after_trials, or both "
                        + "(the exercise's trials cap the block either way)")
            }
            let rate = try double(t, "catch_trial_rate", path, default: 0) ?? 0
            guard rate >= 0, rate < 1 else {
                throw fail(join(path, "catch_trial_rate"), "must be at least 0 and below 1, not \(rate)")
            }
            method = .staircase(
                StaircaseRules(
                    down: down, step: stepSize, startRung: start, stopAfterReversals: reversals,
                    stopAfterTrials: trials, catchTrialRate: rate))
        case "constant-stimuli":
            try checkKeys(t, path, allowed: ["kind", "ladder_rungs", "rungs", "blocks", "catch_trials_per_block"])
            guard let list = t["rungs"]?.array else {
                throw fail(
                    join(path, "rungs"),
                    t["rungs"] == nil ? "missing (a list of rungs, e.g. [1, 3, 5])" : "must be a list")
            }
            var chosen: [Int] = []
            for (i, item) in list.enumerated() {
                guard let r = item.int, (0..<rungs).contains(r) else {
                    throw fail(
                        "\(join(path, "rungs"))[\(i)]",
                        "must be a rung from 0 to \(rungs - 1) (ladder_rungs is \(rungs))")
                }
                guard !chosen.contains(r) else {
                    throw fail("\(join(path, "rungs"))[\(i)]", "rung \(r) is named twice")
                }
                chosen.append(r)
            }
            guard chosen.count >= 2 else {
                throw fail(join(path, "rungs"), "needs at least 2 rungs, has \(chosen.count)")
            }
            let blocks = try int(t, "blocks", path, in: ProgramLimits.blocks)
            let c = try int(t, "catch_trials_per_block", path, default: 0, in: ProgramLimits.catchTrialsPerBlock)
            // The method fixes the block's length: an exercise's own count would contradict it.
            for (i, e) in exerciseTables.enumerated() where e["trials"] != nil {
                throw fail(
                    "\(stepPath).exercises[\(i)].trials",
                    "the method of constant stimuli fixes the block (blocks × (rungs + catch trials) = "
                        + "\(blocks * (chosen.count + c)) trials): leave trials out")
            }
            method = .constantStimuli(rungs: chosen, blocks: blocks, catchTrialsPerBlock: c)
        default:
            throw fail(join(path, "kind"), "unknown procedure \"\(kind)\" (expected staircase or constant-stimuli)")
        }
        let procedure = ThresholdProcedure(method: method, ladderRungs: rungs)
        do {
            try procedure.validate()
        } catch {
            throw fail(path, "\(error)")
        }
        return procedure
    }
}
