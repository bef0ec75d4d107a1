import ArgumentParser
import Figures
import Foundation
import SessionLog

/// `stats --threshold` and how it pools the trials.
struct ThresholdOptions: ParsableArguments {
    @Flag(
        help:
            "Per dog, session and stock: trials and finds per dilution, and the fitted threshold with its 95 % interval."
    )
    var threshold = false

    @Option(
        name: .customLong("threshold-by"),
        help: "With --threshold: one fit per session (default), per dog, or per dog and recorded conditions.")
    var by: ThresholdGrouping = .session

    func validate() throws {
        if !threshold && by != .session { throw ValidationError("--threshold-by goes with --threshold") }
    }
}

extension ThresholdGrouping: ExpressibleByArgument {}

extension Stats {
    func printThresholds(_ rows: [ThresholdRow]) throws {
        if log.json { return try printJSON(rows) }
        say("Thresholds from trials of \(describeSelection(self.rows, selection)) whose target is a dilution")
        guard !rows.isEmpty else {
            return say(
                "none: no trial's target in these trials is a dilution of a stock or a stock with dilutions "
                    + "(lineupctl samples add-ladder)")
        }
        func number(_ value: Double) -> String { String(format: "%.3g", value) }
        for row in rows {
            var title = [row.dog]
            if let session = row.sessionId {
                title.append("session \(session.prefix(8)) \((row.sessionStarted ?? "-").prefix(16))")
            }
            title.append(row.conditions ?? "no conditions recorded")
            title.append("stock \(row.stock), concentrations as \(row.scale)")
            say("\n" + title.joined(separator: " · "))
            printTable(
                ["DILUTION", "CONCENTRATION", "TRIALS", "FOUND", "FOUND %"],
                row.dilutions.map { d in
                    [
                        d.sample, d.concentration.map(number) ?? "-", "\(d.trials)", "\(d.found)",
                        String(format: "%.0f %%", Double(d.found) / Double(max(1, d.trials)) * 100),
                    ]
                })
            if let fit = row.fit {
                let low = (fit.lowerOpen ? "below " : "") + number(fit.lower)
                let high = (fit.upperOpen ? "above " : "") + number(fit.upper)
                say(
                    "threshold \(number(fit.threshold)) (95 % CI \(low) to \(high), profile likelihood); "
                        + "\(fit.form), width \(String(format: "%.2f", fit.width)) log10; guess rate 1/\(row.choices ?? 0) = "
                        + "\(String(format: "%.3f", fit.guessRate)); lapse \(String(format: "%.3f", fit.lapseRate)) "
                        + "(\(fit.lapseRule))")
            } else {
                say("not fitted: \(row.notFitted ?? "-")")
            }
            if let r = row.reversalEstimate {
                let over =
                    r.staircases == 1
                    ? "its staircase's last \(r.last) reversals"
                    : "the last \(r.last) reversals of each of \(r.staircases) staircases"
                let fewer =
                    r.staircasesWithFewer == 0
                    ? "" : "; \(r.staircasesWithFewer) more reversed fewer than \(r.last) times, left out"
                say("reversal estimate \(number(r.estimate)) (geometric mean of \(over)\(fewer))")
            } else {
                say("reversal estimate: \(row.reversalNotComputed ?? "-")")
            }
        }
        say(
            "\nFOUND: trials in which the dog indicated the target; aborted trials and trials without a target are "
                + "not on the curve. An interval end marked below or above is open: the data do not close it. "
                + "The reversal estimate takes each staircase's last \(ThresholdRow.reversalsAveraged) reversals, as "
                + "the station logged them (docs/figures.md, \"How little the dog can smell\")")
    }
}
