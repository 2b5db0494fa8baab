import IncidentCore
import IncidentPostgresMigrations

/// A poll's entries of the transition log (migration 0008), the same entries in the same order
/// as the SQLite store's `PollTransitions` (which documents them): collected in the temporary
/// table `poll_transitions` from the staged records once they are applied, then appended with
/// their cursors at the very end of the poll's transaction (``append(poll:runID:connection:)``).
enum PollTransitionLog {
    /// Creates the poll's collection (dropped at commit).
    static func prepare(connection: Connection) throws {
        try connection.execute("""
            CREATE TEMP TABLE poll_transitions (
                phase integer NOT NULL, ord bigint NOT NULL, incident_id bigint, external_id text COLLATE "C",
                kind text NOT NULL, fields text, at timestamptz NOT NULL, fresh boolean NOT NULL DEFAULT false) ON COMMIT DROP
            """, context: "preparing the transitions of a poll")
    }

    /// The statement that logs the appearances of the incidents a poll inserted: `rows` (a table
    /// or a CTE with the columns `id, external_id`), at `at`. Marked `fresh`: an incident this
    /// poll inserted has no other entries in the log, so its listed interval needs no end from
    /// it (``indexIntervals(after:history:connection:)``).
    static func appearances(of rows: String, at: String) -> String {
        "INSERT INTO poll_transitions (phase, ord, incident_id, external_id, kind, at, fresh) "
            + "SELECT 3, id, id, external_id, 'appeared', \(at), true FROM \(rows)"
    }

    /// Logs the clears `PollStaging.clearUnlisted(at:)` is about to make: the same rows, read
    /// before its update.
    static func clearing(at instant: UTCInstant, source: String, runID: Int64, connection: Connection) throws {
        try connection.query("""
            INSERT INTO poll_transitions (phase, ord, incident_id, external_id, kind, at)
            SELECT 4, id, id, external_id, 'cleared', :at FROM incidents
            WHERE source = :source AND cleared_at IS NULL AND last_seen_run_id <> :run_id AND last_seen_at < :at
            """, named: ["at": .instant(instant), "source": .text(source), "run_id": .integer(runID)], context: "logging the incidents \(source) no longer lists")
    }

    /// Logs what the applied records did (`poll_rows`, `poll_plan`): records set aside,
    /// revisions, ends and reopenings, and for a document that is not a live poll the
    /// appearances and reopenings of incidents it did not insert (the inserted ones' appearances
    /// were logged by their insert, ``appearances(of:at:)``).
    static func collect(poll: PollContext, runID: Int64, fields: [IncidentField], connection: Connection) throws {
        let context = "logging the transitions of \(poll.source)"
        let values: [String: PostgresValue] = ["source": .text(poll.source), "run_id": .integer(runID), "at": .instant(poll.observedAt)]
        try connection.query("""
            INSERT INTO poll_transitions (phase, ord, incident_id, external_id, kind, at)
            SELECT 1, r.ord, e.id, r.external_id, 'quarantined', :at FROM poll_rows r
            LEFT JOIN incidents e ON e.source = :source AND e.external_id = r.external_id
            WHERE r.rejected
            """, named: values, context: context)
        try connection.query("""
            INSERT INTO poll_transitions (phase, ord, incident_id, external_id, kind, fields, at)
            SELECT 2, p.ord, n.id, n.external_id,
                   CASE WHEN o.cleared_at IS NOT NULL THEN 'reopened'
                        WHEN o.ended_at IS NULL AND n.ended_at IS NOT NULL THEN 'ended' ELSE 'revised' END,
                   nullif(\(IncidentField.changedFieldsSQL(fields, new: "n.", old: "o.", distinct: "IS DISTINCT FROM")), ''), :at
            FROM poll_plan p JOIN incidents n ON n.id = p.id
            JOIN incident_revisions o ON o.incident_id = n.id AND o.revision = n.revision - 1
            WHERE p.action IN ('update', 'reopen')
            """, named: values, context: context)
        // A live poll's appearances are its inserts, logged already.
        if poll.isHistory {
            // History at its own time (see PollTransitions): the log's state of each listed
            // incident at the poll's time, and the clears of the source's first complete live
            // poll after it. The listed incidents it did not insert are found from the poll's
            // own rows, not among every incident of the source (which grew with the history:
            // 1.16 s of a poll at 3,000,000, issue 23): the stored ids of its plan, and the
            // records set aside through the source's unique key; each incident by one lookup
            // (LATERAL, kept by its LIMIT from being flattened into a join: the key is unique
            // anyway), since the staged tables have no statistics and a join let the planner
            // rescan their rows for each incident (28 s for a 30,000-record file).
            let clearing = try connection.query("""
                SELECT min(observed_at) FROM ingest_runs
                WHERE source = :source AND status = 'succeeded' AND origin = 'live' AND id <> :run_id AND observed_at > :at
                """, named: values, context: context).instant(0, 0)
            let history = values.merging(["clearing": .optional(clearing)]) { $1 }
            try connection.query("""
                INSERT INTO poll_transitions (phase, ord, incident_id, external_id, kind, at)
                SELECT 3, id, id, external_id, CASE WHEN state IS NULL THEN 'appeared' ELSE 'reopened' END, :at FROM (
                    SELECT i.id, i.external_id,
                           (SELECT t.kind FROM incident_transitions t WHERE t.incident_id = i.id
                               AND t.kind IN ('appeared', 'reopened', 'cleared') AND t.at <= :at
                            ORDER BY t.at DESC, t.cursor DESC LIMIT 1) AS state,
                           EXISTS (SELECT 1 FROM incident_transitions t WHERE t.incident_id = i.id
                               AND t.kind IN ('appeared', 'reopened') AND t.at > :at) AS later
                    FROM (SELECT id FROM poll_plan WHERE id IS NOT NULL
                          UNION
                          SELECT k.id FROM (SELECT DISTINCT external_id FROM poll_rows WHERE rejected AND external_id IS NOT NULL) r
                          CROSS JOIN LATERAL (SELECT id FROM incidents WHERE source = :source AND external_id = r.external_id LIMIT 1) k) l
                    CROSS JOIN LATERAL (SELECT id, external_id, first_seen_run_id, last_seen_run_id FROM incidents WHERE id = l.id LIMIT 1) i
                    WHERE i.last_seen_run_id = :run_id AND i.first_seen_run_id <> :run_id
                      AND i.id NOT IN (SELECT incident_id FROM poll_transitions WHERE phase = 2)) listed
                WHERE state IS NULL OR (state = 'cleared' AND (later OR CAST(:clearing AS timestamptz) IS NOT NULL))
                """, named: history, context: context)
            guard clearing != nil else { return }
            try connection.query("""
                INSERT INTO poll_transitions (phase, ord, incident_id, external_id, kind, at)
                SELECT 4, p.incident_id, p.incident_id, p.external_id, 'cleared', CAST(:clearing AS timestamptz) FROM poll_transitions p
                WHERE p.phase = 3 AND NOT EXISTS (SELECT 1 FROM incident_transitions t WHERE t.incident_id = p.incident_id
                    AND t.kind IN ('appeared', 'reopened') AND t.at > :at AND t.at <= :clearing)
                """, named: history, context: context)
            let clearedByHistory = """
                id IN (SELECT incident_id FROM poll_transitions WHERE phase = 3)
                  AND NOT EXISTS (SELECT 1 FROM incident_transitions t WHERE t.incident_id = incidents.id
                      AND t.kind IN ('appeared', 'reopened') AND t.at > :at)
                """
            // Their `listed` keys, staged with the poll's other count changes (PostgresCounts).
            try connection.query("""
                INSERT INTO poll_count_changes
                SELECT * FROM (\(PostgresCounts.keys(of: "(SELECT * FROM incidents WHERE cleared_at IS NULL AND \(clearedByHistory)) x", sign: -1))) k
                WHERE dimension = 'listed'
                """, named: history, context: context)
            try connection.query("UPDATE incidents SET cleared_at = CAST(:clearing AS timestamptz) WHERE \(clearedByHistory)",
                                 named: history, context: context)
        }
    }

    /// Appends the poll's entries to the log with the next cursors, in order. The cursors come
    /// from the one row of `change_feed`, whose lock the transaction holds until it commits: the
    /// next poll to log anything waits for this one's commit, so cursors follow commit order
    /// and a reader that sees a cursor already sees every smaller one. Run last, just before the
    /// commit, to hold that lock briefly; a poll that logs nothing takes no lock.
    static func append(poll: PollContext, runID: Int64, connection: Connection) throws {
        let context = "logging the transitions of \(poll.source)"
        let count = try connection.query("SELECT count(*) FROM poll_transitions", context: context).int64(0, 0) ?? 0
        guard count > 0 else { return }
        let base = try connection.query("UPDATE change_feed SET last_cursor = last_cursor + :count RETURNING last_cursor - :count",
                                        named: ["count": .integer(count)], context: context).int64(0, 0) ?? 0
        try connection.query("""
            INSERT INTO incident_transitions (cursor, incident_id, source, external_id, run_id, kind, fields, at)
            SELECT :base + row_number() OVER (ORDER BY phase, ord), incident_id, :source, external_id, :run_id, kind, fields, at
            FROM poll_transitions
            """, named: ["base": .integer(base), "source": .text(poll.source), "run_id": .integer(runID)], context: context)
        try indexIntervals(after: base, history: poll.isHistory, connection: connection)
    }

    /// The first clear of the incident of log entry `o` (an alias) after it, in the log's order
    /// (time, then cursor): the end of the interval `o` opens (NULL: open), as migration 0011
    /// computes it.
    static func intervalEnd(_ o: String) -> String {
        """
        (SELECT min(c.at) FROM incident_transitions c WHERE c.incident_id = \(o).incident_id AND c.kind = 'cleared' \
        AND c.at >= \(o).at AND (c.at, c.cursor) > (\(o).at, \(o).cursor))
        """
    }

    /// Indexes the log entries after `cursor` (a poll's) in `incident_listed_intervals`
    /// (migration 0011), as SQLite's `PollTransitions.indexIntervals(after:history:db:)`: each
    /// appearance or reopening opens a range; then the ranges of each incident the poll cleared
    /// or listed again (with `history`, of each it listed but did not insert: an inserted
    /// incident has no other entries) get their ends anew from the log. Those incidents are the
    /// poll's own entries (`poll_transitions`, the same rows as the log's after `cursor`), and
    /// each one's ranges are found by their own lookup: as a join, the planner (which expected 502
    /// of 1,000 entries) read every range and entry of the log, 1.4 s at 100,000 incidents.
    static func indexIntervals(after cursor: Int64, history: Bool, connection: Connection) throws {
        let context = "indexing the intervals of the transition log"
        let arguments: [String: PostgresValue] = ["after": .integer(cursor), "history": .text(history ? "true" : "false")]
        try connection.query("""
            INSERT INTO incident_listed_intervals (opening, incident_id, listed)
            SELECT cursor, incident_id, tstzrange(at, NULL, '[)') FROM incident_transitions
            WHERE cursor > :after AND kind IN ('appeared', 'reopened') AND incident_id IS NOT NULL
            """, named: arguments, context: context)
        try connection.query("""
            UPDATE incident_listed_intervals l SET listed = n.listed
            FROM (SELECT DISTINCT incident_id FROM poll_transitions WHERE incident_id IS NOT NULL
                      AND (kind IN ('cleared', 'reopened') OR (:history::boolean AND kind = 'appeared' AND NOT fresh))) c
            CROSS JOIN LATERAL (SELECT o.cursor, tstzrange(o.at, \(intervalEnd("o")), '[)') AS listed FROM incident_transitions o
                                WHERE o.incident_id = c.incident_id AND o.kind IN ('appeared', 'reopened') OFFSET 0) n
            WHERE l.opening = n.cursor AND l.listed IS DISTINCT FROM n.listed
            """, named: ["history": .text(history ? "true" : "false")], context: context)
    }
}

extension PollTransitionLog {
    /// Rebuilds the log from the incidents, revisions, runs and records set aside, as the
    /// migration that made it does for an existing database (its `-- rebuild:` part, the one
    /// text of that rebuild): for a copy into an empty database, whose log the copy does not
    /// carry.
    static func rebuild(connection: Connection) throws {
        // The log (0008), then the index of its intervals (0011); deleting the log empties the index.
        let parts = ["_transition_log.sql", "_listed_intervals.sql"].compactMap { suffix in
            BundledPostgresMigrations.all.first { $0.fileName.hasSuffix(suffix) }.flatMap { migration in
                migration.sql.range(of: "-- rebuild:").map { String(migration.sql[$0.lowerBound...]) }
            }
        }
        guard parts.count == 2 else {
            throw PostgresError(message: "the transition log's migrations have no rebuild part", context: "rebuilding the transition log")
        }
        try connection.execute("DELETE FROM incident_transitions; DELETE FROM change_feed;\n" + parts.joined(separator: "\n"),
                               context: "rebuilding the transition log")
    }
}

extension PollTransitionLog {
    /// The condition that an incident was listed as active at `instant` (a parameter), as
    /// SQLite's `Selection` states it (``IncidentQuery/listedAt``): seen by then, not ended by
    /// the provider by then, and one of its listed ranges (migration 0011) containing it: an
    /// ended one through the GiST index, an open one through the index of their starts.
    static func listed(at instant: String) -> String {
        "first_seen_at <= \(instant) AND (ended_at IS NULL OR ended_at > \(instant)) AND id IN ("
            + "SELECT incident_id FROM incident_listed_intervals WHERE NOT upper_inf(listed) AND listed @> \(instant)::timestamptz "
            + "UNION ALL SELECT incident_id FROM incident_listed_intervals WHERE upper_inf(listed) AND lower(listed) <= \(instant))"
    }
}
