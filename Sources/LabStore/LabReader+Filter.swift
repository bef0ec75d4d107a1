import PostgresNIO
import ReadingRows

extension LogFilter {
    /// The values of the store's filter parameters `$1`…`$9`, in the order the station log's
    /// queries bind `?1`…`?9`: dog, session, since, until, then `sessionCondition`'s mode,
    /// program, phase, step and handler. Always bound, never written into the SQL.
    public var labBindings: PostgresBindings {
        var binds = PostgresBindings(capacity: 9)
        binds.append(dogId)
        binds.append(sessionId)
        binds.append(since)
        binds.append(until)
        binds.append(mode?.rawValue)
        binds.append(program)
        binds.append(phase)
        binds.append(step)
        binds.append(handler)
        return binds
    }

    /// `sessionCondition` on the store: the same choices of mode, program, phase, step and
    /// handler on the session alias `s`, over `$5`…`$9` of `labBindings`. The casts type the
    /// parameters a NULL leaves untyped.
    public func labSessionCondition(_ s: String = "s") -> String {
        """
        ($5::text IS NULL OR \(s).mode = $5::text)
            AND ($6::text IS NULL OR \(s).program_id IN (SELECT id FROM store.program WHERE name = $6::text))
            AND ($7::text IS NULL OR \(s).phase = $7::text) AND ($8::text IS NULL OR \(s).step = $8::text)
            AND ($9::text IS NULL OR \(s).handler_id IN (SELECT id FROM store.handler WHERE code = $9::text))
        """
    }

    /// The trials `LogFilter.trialCondition` selects (Sources/Readings), on the store's trial alias `t`
    /// and session alias `s`: the dog and session, the trial's own wall time (`since`
    /// inclusive, `until` exclusive) and the session's choices.
    public var labTrialCondition: String {
        """
        ($1::text IS NULL OR s.dog_id = $1::text) AND ($2::text IS NULL OR s.id = $2::text)
            AND ($3::bigint IS NULL OR t.wall_ns >= $3::bigint) AND ($4::bigint IS NULL OR t.wall_ns < $4::bigint)
            AND \(labSessionCondition())
        """
    }
}
