extension LabSchema {
    /// What `stats --lab` measured slow at a million trials (docs/lab.md, the benchmark). The
    /// v2 view's anti-join hashed the corrections once, but PostgreSQL took the partial index
    /// `trial_by_corrects` to yield every trial (a million rows expected, none there), so it
    /// split the hash into 16 batches and wrote every trial to temporary files: the trials'
    /// query took 1.2 to 1.6 s on the server. Saying `c.corrects IS NOT NULL` lets it estimate
    /// the corrections from the column's statistics (few): one batch, 0.3 s, the same rows.
    static let speed: [String] = [
        """
        CREATE OR REPLACE VIEW store.trial_current AS
            SELECT * FROM store.trial t
            WHERE NOT EXISTS (SELECT 1 FROM store.trial c WHERE c.corrects = t.id AND c.corrects IS NOT NULL)
        """
    ]
}
