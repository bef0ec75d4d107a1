import ArgumentParser
import Figures
import Foundation
import SessionLog
import StationControl
import TrainingEngine

/// `lineupctl guess STATION`: the handler's guess of the target's station (issue 21).
struct GuessCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "guess",
        abstract: "Double-blind: record the station you believe holds the target, before the dog indicates.",
        discussion: """
            The guess is for the trial the dog is searching, or, between trials, for the next \
            one to start. One guess per trial: a second is refused and the first stands. It is \
            refused outside a double-blind session and once the dog has indicated in the trial. \
            The reply names the trial and your station, nothing of the layout. `lineupctl stats \
            --guesses` counts the guesses against chance (docs/figures.md, "The handler's guess").

            Example:
              lineupctl guess C
            """)

    @OptionGroup var socket: SocketOptions
    @Flag(help: "Print one JSON object.") var json = false
    @Argument(help: "The station, by the board's name for it (C) or its number (3).") var station: String

    func run() throws {
        try controlCommand {
            let reply = try socket.client.send(GuessEntry(station: station))
            if json { return try printJSON(reply) }
            say("Guess recorded for trial \(reply.trial): station \(reply.station).")
        }
    }
}

/// What `stats --prevalence` and `stats --guesses` add to `stats`.
struct StatsExtraOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Also give PPV and NPV at this prevalence (a share between 0 and 1, e.g. 0.01), from sensitivity and specificity.",
            valueName: "share"))
    var prevalence: Double?

    @Flag(help: "Count the handler's guesses instead: hit rate against chance, and false alerts at the guess.")
    var guesses = false
}

/// A `stats` row with its PPV and NPV at the prevalence asked for, beside its figures in JSON.
struct StatsRowAtPrevalence: Encodable {
    var row: StatsRow
    var atPrevalence: PredictiveValues?

    private enum Keys: String, CodingKey { case atPrevalence }

    func encode(to encoder: any Encoder) throws {
        try row.encode(to: encoder)
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(atPrevalence, forKey: .atPrevalence)
    }
}

/// `12.3 % (4.5-30.1)` or `-`.
func describe(value: Double?, lower: Double?, upper: Double?) -> String {
    guard let value else {
        guard let lower, let upper else { return "-" }
        return String(format: "- (%.1f-%.1f)", lower * 100, upper * 100)
    }
    guard let lower, let upper else { return String(format: "%.1f %%", value * 100) }
    return String(format: "%.1f %% (%.1f-%.1f)", value * 100, lower * 100, upper * 100)
}

/// A p-value as a researcher reads it.
func describePValue(_ p: Double?) -> String {
    guard let p else { return "-" }
    return p < 0.0001 ? String(format: "%.1e", p) : String(format: "%.4f", p)
}

extension Stats {
    /// `stats --guesses`: the handler's guesses by handler code (`--by session`: by session).
    /// How `--guesses` groups: by session with `--by session`, else by handler code.
    var guessGrouping: GuessGrouping { by == .session ? .session : .handler }

    /// The guesses' figures, from a log or the lab store, as a table or `--json`.
    func printGuesses(_ rows: [GuessFigures]) throws {
        let grouping = guessGrouping
        if log.json { return try printJSON(rows) }
        say("The handler's guesses in trials of \(describeSelection(self.rows, selection))")
        guard !rows.isEmpty else {
            return say("none: no handler's guess was logged in these trials (lineupctl guess, double-blind sessions)")
        }
        printTable(
            [
                grouping == .session ? "SESSION" : "HANDLER", "GUESSES", "NO TARGET", "HITS", "HIT RATE", "CHANCE",
                "P (EXACT)", "ABOVE CHANCE", "FA", "FA AT GUESS", "EXPECTED", "P (FA)", "LATE",
            ],
            rows.map { g in
                [
                    grouping == .session ? String(g.group.prefix(max(0, g.group.count - 28))) : g.group,
                    "\(g.guesses)", "\(g.targetAbsentGuesses)", "\(g.hits)", describe(g.hitRate),
                    g.chance.map { String(format: "%.1f %%", $0 * 100) } ?? "-", describePValue(g.pValue),
                    g.aboveChance.map { $0 ? "yes" : "no" } ?? "-", "\(g.falseAlerts)",
                    "\(g.falseAlertsAtGuess)"
                        + (g.falseAlertShareAtGuess.map { String(format: " (%.1f %%)", $0 * 100) } ?? ""),
                    g.falseAlertShareExpected.map { String(format: "%.1f %%", $0 * 100) } ?? "-",
                    describePValue(g.falseAlertPValue), "\(g.lateGuesses)",
                ]
            })
        say(
            "\nCHANCE: uniform guessing among the stations (a trial without a target cannot be hit); "
                + "P: exact one-sided binomial over the guesses in trials with a target; ABOVE CHANCE: P < 0.05 "
                + "(the project's threshold). FA: the dog's indications at stations without the target in trials "
                + "whose guess missed; EXPECTED: their share at the guess if they did not follow it. LATE: guesses "
                + "logged after the dog's first indication, not counted (docs/figures.md, \"The handler's guess\")")
    }

    /// `stats --prevalence`: each row's PPV and NPV at that prevalence.
    func printAtPrevalence(_ stats: [StatsRow], _ prevalence: Double) {
        say("")
        say(
            String(format: "At a prevalence of %g: PPV and NPV from sensitivity and specificity ", prevalence)
                + "(Bayes' theorem; intervals from the corners of Šidák-adjusted Wilson intervals, docs/figures.md)")
        printTable(
            [by.rawValue.uppercased(), "SENSITIVITY", "SPECIFICITY", "PPV", "NPV"],
            stats.map { s in
                let v = s.figures.atPrevalence(prevalence)
                return [
                    by == .session ? String(s.group.prefix(max(0, s.group.count - 28))) : s.station?.name ?? s.group,
                    describe(s.sensitivity), describe(s.specificity),
                    describe(value: v?.ppv, lower: v?.ppvLower, upper: v?.ppvUpper),
                    describe(value: v?.npv, lower: v?.npvLower, upper: v?.npvUpper),
                ]
            })
    }
}
