/// SQL of the run log as SQLite runs it: what a source's health is counted from. PostgreSQL
/// states the same rule in its own form (`PostgresStore.latestRuns` and its since-last-success
/// query), because its planner needs row comparisons and a LATERAL join there to seek instead
/// of reading every run (PostgresPlanTests); SameAnswersTests keeps the two answers equal.
public enum RunLogSQL {
    /// A CTE `latest (source, last_id, success_id)`: per source of the run log, its last run
    /// (`last_id`) and its last run that stored records (`success_id`, `succeeded` or
    /// `incomplete`; the one that finished last: a source's runs are written in the order they
    /// finish, under the write lock). The sources are found by seeking from one to the next in
    /// `ingest_runs_by_source`, each run from the end of its source's entries, so a status
    /// refresh reads a few entries per source, not every run (`GROUP BY source` read them all).
    public static let latestRuns = """
        WITH RECURSIVE sources (source) AS (
            SELECT min(source) FROM ingest_runs
            UNION ALL SELECT (SELECT min(source) FROM ingest_runs WHERE source > sources.source) FROM sources WHERE source IS NOT NULL),
        latest AS (
            SELECT source, (SELECT max(id) FROM ingest_runs r WHERE r.source = sources.source) AS last_id,
                (SELECT id FROM ingest_runs r WHERE r.source = sources.source AND r.status IN ('succeeded', 'incomplete')
                 ORDER BY r.id DESC LIMIT 1) AS success_id
            FROM sources WHERE source IS NOT NULL)
        """

    /// Per source: `source`, when its last run that stored records finished, how many runs
    /// failed or were cancelled since, when the first of those started, and how many runs
    /// since were stale (documents older than one already applied).
    public static let sinceLastSuccess = """
        \(latestRuns)
        SELECT source, (SELECT finished_at FROM ingest_runs WHERE id = success_id),
            (SELECT count(*) FROM ingest_runs f WHERE f.source = latest.source AND f.id > coalesce(success_id, 0)
                AND f.status IN ('failed', 'cancelled')),
            (SELECT min(started_at) FROM ingest_runs f WHERE f.source = latest.source AND f.id > coalesce(success_id, 0)
                AND f.status IN ('failed', 'cancelled')),
            (SELECT count(*) FROM ingest_runs f WHERE f.source = latest.source AND f.id > coalesce(success_id, 0)
                AND f.status = 'stale')
        FROM latest
        """
}
