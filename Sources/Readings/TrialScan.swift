import Figures
import ReadingRows
import TrainingEngine

/// Every trial after corrections that a filter selects, as the figures count it: the one scan
/// beneath `stats` and the readings that count trials. The compact layout and station views
/// (`trial.layout`, `trial.seen`) go from the row's bytes into `TrialRowDecoder`: reading them
/// rather than joining the station rows keeps `stats` over 100,000 trials well under a second.
enum TrialScan {
    static func query(settings: Bool) -> ReadingSQL {
        """
        SELECT t.outcome, t.latency_ns, t.layout, t.seen, s.dog_id, d.name, s.id, s.wall_ns, t.id, \
        \(sql: settings ? "s.settings" : "NULL")
        FROM \(table: "trial_current") t JOIN \(table: "session") s ON s.id = t.session_id
            JOIN \(table: "dog") d ON d.id = s.dog_id
        WHERE \(LogFilter.trialCondition)
        """
    }

    /// Sample ids are decoded only when `samples` is set, each session's settings (read once a
    /// session) only when `settings` is. A trial whose layout is not stations is the source's
    /// to refuse or leave out (`RowScanner.badRow`).
    static func scan<Scanner: RowScanner>(
        _ rows: inout Scanner, _ filter: LogFilter, samples: Bool, settings: Bool = false,
        _ body: (ScoredTrial, TrialContext) throws -> Void
    ) throws {
        var decoder = TrialRowDecoder(samples: samples)
        var settingsOf: [String: String] = [:]
        let scanner = rows
        try rows.scan(query(settings: settings), filter.readingBinds) { row in
            let outcome = try row.text(0) ?? ""
            let latency = try row.integer(1)
            let decoded = try row.withBytes(2) { layout in
                try row.withBytes(3) { seen in
                    decoder.trial(outcome: outcome, latencyNs: latency, layout: layout, seen: seen)
                }
            }
            guard let trial = decoded else {
                let id = try row.text(8) ?? "(no id)"
                try scanner.badRow(.layout(trial: id))
                return
            }
            let session = try row.text(6) ?? ""
            var sessionSettings: String? = nil
            if settings {
                if settingsOf[session] == nil { settingsOf[session] = try row.text(9) ?? "" }
                sessionSettings = settingsOf[session]
            }
            try body(
                trial,
                TrialContext(
                    dogId: try row.text(4) ?? "", dog: try row.text(5) ?? "", sessionId: session,
                    sessionWallNs: try row.integer(7) ?? 0, sessionSettings: sessionSettings))
        }
    }
}

extension BadRow {
    /// A trial whose layout `TrialRowDecoder` refuses, in its words.
    static func layout(trial id: String) -> BadRow {
        BadRow(
            table: "trial", id: id, problem: TrialRowDecoder.layoutProblem, reason: TrialRowDecoder.layoutReason)
    }
}
