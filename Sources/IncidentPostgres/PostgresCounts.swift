/// `incident_counts` (PostgreSQL 0012): incidents by source and key, which every writer keeps in
/// step with `incidents` in its own transaction, so `stats` reads counts, not incidents. What is
/// counted: ``keys(of:sign:)``; how a writer applies its changes: ``apply(_:connection:context:)``.
///
/// Writers: a poll (``PollStaging``: the keys of the incidents it inserts, the old and new keys
/// of those it changes or reopens, the `listed` keys of those it clears), `prune` (the keys of
/// the incidents it deletes) and `copy` (a recount of what it copied).
enum PostgresCounts {
    /// The count changes `(source, dimension, key, incidents)` that rows of `rows` (a table or a
    /// subquery with an alias, with the columns `source, category, road, started_at,
    /// ended_at, cleared_at`) make, each counted `sign` times: one row per key of each incident (the
    /// dimensions and key expressions of migration 0012's backfill).
    static func keys(of rows: String, sign: Int = 1) -> String {
        """
        SELECT x.source, k.dimension, k.key, \(sign) AS incidents
        FROM \(rows) CROSS JOIN LATERAL (VALUES
            ('category', x.category),
            ('road', coalesce(x.road, '')),
            ('start_minute', coalesce(to_char(x.started_at AT TIME ZONE 'UTC', 'HH24:MI'), '')),
            ('listed', CASE WHEN x.cleared_at IS NOT NULL THEN NULL WHEN x.ended_at IS NULL THEN '' ELSE 'with_end' END))
            AS k (dimension, key)
        WHERE k.key IS NOT NULL
        """
    }

    /// Adds the changes `changes` selects (rows `source, dimension, key, incidents`) to the
    /// counts in one statement, summed per key and in key order (so two writers never lock
    /// keys in opposite orders and deadlock), then deletes the keys that fell to zero.
    static func apply(_ changes: String, _ parameters: [String: PostgresValue] = [:], connection: Connection, context: String) throws {
        try connection.query("""
            INSERT INTO incident_counts (source, dimension, key, incidents)
            SELECT source, dimension, key, sum(incidents) FROM (\(changes)) AS changes
            GROUP BY 1, 2, 3 HAVING sum(incidents) <> 0 ORDER BY 1, 2, 3
            ON CONFLICT (source, dimension, key) DO UPDATE SET incidents = incident_counts.incidents + excluded.incidents
            """, named: parameters, context: context)
        // Through the partial index of keys at zero (0012), not every key.
        try connection.execute("DELETE FROM incident_counts WHERE incidents = 0", context: context)
    }

    /// The counts of every incident, counted anew (after `copy`).
    static func recount(connection: Connection) throws {
        try connection.execute("DELETE FROM incident_counts", context: "counting the incidents")
        try apply(keys(of: "incidents x"), connection: connection, context: "counting the incidents")
    }
}
