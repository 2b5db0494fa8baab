/// SQL of a prune's dry run, shared by the stores. Each store states what its prune deletes in
/// its own form (SQLite names the index to seek, PostgreSQL needs a row comparison to seek:
/// PostgresPlanTests), and its prune and its dry run use that same text, so the dry run counts
/// exactly the rows the prune would delete (StoreConformanceTests' prune tests compare them).
public enum PruneSQL {
    /// One statement (one snapshot) giving one row: the incidents, revisions, transitions, runs
    /// and rejected records a prune would delete. `incidents` and `runs` are each a `SELECT id …`
    /// of the incidents, and of the runs, the store's prune deletes.
    public static func counts(incidents: String, runs: String) -> String {
        """
        WITH pruned_incidents AS (\(incidents)), pruned_runs AS (\(runs))
        SELECT (SELECT count(*) FROM pruned_incidents),
               (SELECT count(*) FROM incident_revisions WHERE incident_id IN (SELECT id FROM pruned_incidents)),
               (SELECT count(*) FROM incident_transitions WHERE incident_id IN (SELECT id FROM pruned_incidents)),
               (SELECT count(*) FROM pruned_runs),
               (SELECT count(*) FROM rejected_records WHERE run_id IN (SELECT id FROM pruned_runs))
        """
    }
}
