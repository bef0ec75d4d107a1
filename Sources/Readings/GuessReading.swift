import Figures
import ReadingRows

/// `stats --guesses`: the handler's guesses in the trials a filter selects, each with its trial
/// as it stands after corrections (a guess is for its trial and for whatever corrects it: the
/// correction, the correction of that, and so on, down `chain`), counted by `GuessCounter` by
/// handler code or by session, in session order.
public struct GuessReading: Reading {
    public static let name = ReadingName.guesses
    public var grouping: GuessGrouping
    public var filter: LogFilter

    public init(by grouping: GuessGrouping, _ filter: LogFilter = LogFilter()) {
        self.grouping = grouping
        self.filter = filter
    }

    static let query: ReadingSQL = """
        WITH RECURSIVE chain(guessed, id) AS (
            SELECT trial_id, trial_id FROM \(table: "handler_guess")
            UNION SELECT chain.guessed, c.id FROM \(table: "trial") c JOIN chain ON c.corrects = chain.id)
        SELECT g.station, g.mono_ns, t.id, t.outcome, t.layout, t.seen, t.started_mono_ns, t.latency_ns, s.id,
            d.name, h.code
        FROM \(table: "handler_guess") g JOIN chain ON chain.guessed = g.trial_id
            JOIN \(table: "trial_current") t ON t.id = chain.id
            JOIN \(table: "session") s ON s.id = t.session_id JOIN \(table: "dog") d ON d.id = s.dog_id
            LEFT JOIN \(table: "handler") h ON h.id = s.handler_id
        WHERE \(LogFilter.trialCondition)
        ORDER BY s.wall_ns, \(byBytes: "s.id"), t.number
        """

    public func read<Source: RowSource>(from source: Source) throws -> [GuessFigures] {
        try source.readRows { rows in
            // A log older than the handler's guesses has none.
            guard try rows.hasTable("handler_guess") else { return [] }
            var counter = GuessCounter(by: grouping)
            let scanner = rows
            try rows.scan(Self.query, filter.readingBinds) { row in
                let outcome = try row.text(3) ?? ""
                let latency = try row.integer(7)
                // A decoder per guess: guesses are one per trial at most, and few.
                var decoder = TrialRowDecoder(samples: true)
                let decoded = try row.withBytes(4) { layout in
                    try row.withBytes(5) { seen in
                        decoder.trial(outcome: outcome, latencyNs: latency, layout: layout, seen: seen)
                    }
                }
                let trialId = try row.text(2) ?? "(no id)"
                guard let trial = decoded else {
                    return try scanner.badRow(.layout(trial: trialId))
                }
                counter.add(
                    guess: Int(try row.integer(0) ?? 0), guessedAtMonoNs: try row.integer(1) ?? 0, trial: trial,
                    startedMonoNs: try row.integer(6) ?? 0, sessionId: try row.text(8) ?? "",
                    dog: try row.text(9) ?? "",
                    handler: try row.text(10))
            }
            return counter.figures
        }
    }
}

extension RowSource {
    /// `stats --guesses` on this log or store: `GuessReading`.
    public func guessStats(by grouping: GuessGrouping, _ filter: LogFilter = LogFilter()) throws -> [GuessFigures] {
        try GuessReading(by: grouping, filter).read(from: self)
    }
}
