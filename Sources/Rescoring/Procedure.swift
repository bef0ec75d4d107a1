// A threshold session's procedure checked again (issue 38): from the re-scorer's own outcomes
// and the procedure's rules as the session's settings logged them, which rung each trial
// should have presented, how many reversals each left, and where the procedure stopped,
// against what the log's `trial_procedure` rows say. Written from the rules in docs/figures.md
// ("How little the dog can smell") and docs/programs.md ("Threshold steps"), not from the
// engine's or Thresholds' code: an n-down-1-up walk of its own.

/// A threshold session's rules, as the settings logged them.
public enum ProcedureRules: Sendable, Hashable {
    case staircase(
        down: Int, step: Int, startRung: Int, ladderRungs: Int, stopAfterReversals: Int?, stopAfterTrials: Int?)
    case constantStimuli(rungs: [Int], blocks: Int, catchTrialsPerBlock: Int)
}

/// One trial's procedure row as logged: the rung presented (nil: a catch trial), the
/// reversals so far and whether the procedure stopped after it.
public struct ProcedureRow: Sendable, Hashable {
    public var number: Int
    public var rung: Int?
    public var reversals: Int
    public var stopped: Bool

    public init(number: Int, rung: Int?, reversals: Int, stopped: Bool) {
        self.number = number
        self.rung = rung
        self.reversals = reversals
        self.stopped = stopped
    }
}

/// A threshold session's procedure as the log holds it.
public struct LoggedProcedure: Sendable, Hashable {
    public var rules: ProcedureRules
    /// The block's length (the session's `trials`).
    public var trials: Int
    public var rows: [ProcedureRow]

    public init(rules: ProcedureRules, trials: Int, rows: [ProcedureRow]) {
        self.rules = rules
        self.trials = trials
        self.rows = rows
    }
}

extension Rescorer {
    /// Where the log's procedure rows disagree with the procedure's rules applied to the
    /// re-scored outcomes (`outcomes`, by trial number; nil: aborted or not re-scored).
    static func checkProcedure(
        _ procedure: LoggedProcedure, session: String, outcomes: [Int: Verdict?], targets: [Int: Int?]
    ) -> [Disagreement] {
        var out: [Disagreement] = []
        func say(_ trial: Int, _ what: String, _ log: String, _ ours: String) {
            out.append(Disagreement(session: session, trial: trial, what: what, logSays: log, rescorerSays: ours))
        }
        func rung(_ r: Int?) -> String { r.map { "rung \($0)" } ?? "a catch trial" }
        let rows = procedure.rows.sorted { $0.number < $1.number }
        // A catch trial is one whose layout has no target, and only that.
        for row in rows {
            if let target = targets[row.number], (target == nil) != (row.rung == nil) {
                say(
                    row.number, "catch trial", rung(row.rung),
                    target == nil ? "no target laid out" : "a target laid out")
            }
        }
        switch procedure.rules {
        case .staircase(let down, let step, let start, let ladder, let stopReversals, let stopTrials):
            var at = start
            var finds = 0
            var last = 0  // the last step: -1 weaker, +1 stronger, 0 none yet
            var reversals = 0
            var answered = 0
            var stopped = false
            for (index, row) in rows.enumerated() {
                if stopped {
                    say(row.number, "procedure", "a trial after the stop", "stopped before this trial")
                    break
                }
                if let r = row.rung, r != at { say(row.number, "dilution", rung(r), rung(at)) }
                // Aborted (or not re-scored): no answer; the staircase stays.
                if let verdict = outcomes[row.number] ?? nil, verdict != .aborted {
                    answered += 1
                    if row.rung != nil {
                        var move = 0
                        if verdict == .hit {
                            finds += 1
                            if finds == down { move = -1 }
                        } else {
                            move = 1
                        }
                        if move != 0 {
                            finds = 0
                            if last != 0 && move != last { reversals += 1 }
                            last = move
                            at = min(ladder - 1, max(0, at + move * step))
                        }
                    }
                }
                if row.reversals != reversals { say(row.number, "reversals", "\(row.reversals)", "\(reversals)") }
                let blockEnds = index + 1 >= min(procedure.trials, stopTrials ?? procedure.trials)
                stopped =
                    (stopReversals.map { reversals >= $0 } ?? false) || (stopTrials.map { answered >= $0 } ?? false)
                    || blockEnds
                if row.stopped != stopped {
                    say(row.number, "stopped", row.stopped ? "stopped" : "goes on", stopped ? "stopped" : "goes on")
                }
            }
        case .constantStimuli(let rungs, let blocks, let catches):
            // Each block of (rungs + catch trials) presents every rung once and its catch trials.
            let size = rungs.count + catches
            for b in 0..<blocks {
                let block = rows.filter { ($0.number - 1) / size == b }
                guard block.count == size else { continue }  // a block cut short by the session's end
                let presented = block.compactMap(\.rung).sorted()
                let catchCount = block.filter { $0.rung == nil }.count
                if presented != rungs.sorted() || catchCount != catches {
                    say(
                        block[0].number, "block \(b + 1)",
                        "rungs \(presented.map(String.init).joined(separator: ",")) and \(catchCount) catch trial(s)",
                        "rungs \(rungs.sorted().map(String.init).joined(separator: ",")) and \(catches) catch trial(s)")
                }
            }
        }
        return out
    }
}
