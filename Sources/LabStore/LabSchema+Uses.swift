/// Each sample's uses by station and by the dog the lab counts each trial's dog as, so a
/// station can count a sample's limits over the lab's other stations too (lineup-sync
/// --pull-registry hands the counts to lineupd).
extension LabSchema {
    /// Counted as `lab_samples` counts (a correction repeats its trial's layout and is not
    /// counted): `uses`, the sample's places in lineups, as `max_uses` counts them; `trials`,
    /// the trials it stood in, as a dog's exposure (and `max_uses_per_dog`) counts them. By
    /// `dog_identity`'s `counts_as`, so a recorded merge joins two dogs' uses and its undoing
    /// parts them again. A station reads it, hence the grant to its role: counts only, no trial.
    static let sampleUses: [String] = [
        """
        CREATE VIEW public.lab_sample_uses AS
        SELECT ts.sample_id, t.station_id, i.counts_as AS dog_counts_as,
            count(*) AS uses, count(DISTINCT t.id) AS trials
        FROM store.trial_station ts
        JOIN store.trial t ON t.id = ts.trial_id AND t.corrects IS NULL
        JOIN store.session s ON s.id = t.session_id
        JOIN public.dog_identity i ON i.dog_id = s.dog_id
        WHERE ts.sample_id IS NOT NULL
        GROUP BY ts.sample_id, t.station_id, i.counts_as
        """,
        "GRANT SELECT ON public.lab_sample_uses TO \(stationRole), \(researcherRole), \(registrarRole)",
    ]
}
