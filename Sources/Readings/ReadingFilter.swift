import ReadingRows

extension LogFilter {
    /// The values of every filtered reading's parameters 1 to 9: the dog, the session, since,
    /// until (the trial's own wall time), then the session's mode, program, phase, step and
    /// handler (`sessionCondition`). Always bound, never written into the SQL.
    public var readingBinds: [SQLValue] {
        [
            .text(dogId), .text(sessionId), .integer(since), .integer(until), .text(mode?.rawValue), .text(program),
            .text(phase), .text(step), .text(handler),
        ]
    }

    /// The session-level choices on the session alias `s` over parameters 5 to 9 of
    /// `readingBinds`: every reading that selects by session uses it, so `stats`, `report` and
    /// `export` select the same trials.
    public static let sessionCondition: ReadingSQL = """
        (\(text: 5) IS NULL OR s.mode = \(text: 5))
            AND (\(text: 6) IS NULL OR s.program_id IN (SELECT id FROM \(table: "program") WHERE name = \(text: 6)))
            AND (\(text: 7) IS NULL OR s.phase = \(text: 7)) AND (\(text: 8) IS NULL OR s.step = \(text: 8))
            AND (\(text: 9) IS NULL OR s.handler_id IN (SELECT id FROM \(table: "handler") WHERE code = \(text: 9)))
        """

    /// The trials a filter selects, on the trial alias `t` and session alias `s`: the dog and
    /// session, the trial's own wall time (`since` inclusive, `until` exclusive) and the
    /// session's choices, over all nine `readingBinds`.
    public static let trialCondition: ReadingSQL = """
        (\(text: 1) IS NULL OR s.dog_id = \(text: 1)) AND (\(text: 2) IS NULL OR s.id = \(text: 2))
            AND (\(integer: 3) IS NULL OR t.wall_ns >= \(integer: 3)) AND (\(integer: 4) IS NULL OR t.wall_ns < \(integer: 4))
            AND \(sessionCondition)
        """
}
