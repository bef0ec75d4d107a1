extension LabSchema {
    /// What the researcher's reading needs: the trials as they stand after corrections,
    /// defined as the station log's `trial_current` view is (Sources/SessionLog/Schema.swift:
    /// a trial that a later trial `corrects` is replaced by it), so `stats` on the store counts
    /// the trials it counts on the merged logs.
    static let reading: [String] = [
        """
        CREATE VIEW store.trial_current AS
            SELECT * FROM store.trial t WHERE NOT EXISTS (SELECT 1 FROM store.trial c WHERE c.corrects = t.id)
        """,
        // The few corrections are looked up by the trial they correct.
        "CREATE INDEX trial_by_corrects ON store.trial(corrects) WHERE corrects IS NOT NULL",
        "GRANT SELECT ON store.trial_current TO \(researcherRole)",
        // The same for R, pandas and DuckDB, beside `public.trials` (every row, corrections too).
        """
        CREATE VIEW public.trials_current AS
            SELECT t.*, to_timestamp(t.wall_ns / 1e9) AS wall_time FROM store.trial_current t
        """,
        "GRANT SELECT ON public.trials_current TO \(researcherRole)",
    ]
}
