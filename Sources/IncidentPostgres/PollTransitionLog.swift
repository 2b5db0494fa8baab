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
                kind text NOT NULL, fields text, at timestamptz NOT NULL) ON COMMIT DROP
            """, context: "preparing the transitions of a poll")
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
    /// revisions, ends and reopenings, appearances.
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
        if case .live = poll.origin, poll.stale == nil {
            try connection.query("""
                INSERT INTO poll_transitions (phase, ord, incident_id, external_id, kind, at)
                SELECT 3, e.id, e.id, e.external_id, 'appeared', :at
                FROM poll_plan p JOIN poll_rows s ON s.ord = p.ord JOIN incidents e ON e.source = :source AND e.external_id = s.external_id
                WHERE p.action = 'insert'
                """, named: values, context: context)
        } else {
            // History at its own time (see PollTransitions): the log's state of each listed
            // incident at the poll's time.
            try connection.query("""
                INSERT INTO poll_transitions (phase, ord, incident_id, external_id, kind, at)
                SELECT 3, id, id, external_id, CASE WHEN state IS NULL THEN 'appeared' ELSE 'reopened' END, :at FROM (
                    SELECT i.id, i.external_id,
                           (SELECT t.kind FROM incident_transitions t WHERE t.incident_id = i.id
                               AND t.kind IN ('appeared', 'reopened', 'cleared') AND t.at <= :at
                            ORDER BY t.at DESC, t.cursor DESC LIMIT 1) AS state,
                           EXISTS (SELECT 1 FROM incident_transitions t WHERE t.incident_id = i.id
                               AND t.kind IN ('appeared', 'reopened') AND t.at > :at) AS later
                    FROM incidents i
                    WHERE i.source = :source AND i.last_seen_run_id = :run_id
                      AND i.id NOT IN (SELECT incident_id FROM poll_transitions WHERE phase = 2)) listed
                WHERE state IS NULL OR (state = 'cleared' AND later)
                """, named: values, context: context)
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
    }
}

extension PollTransitionLog {
    /// Rebuilds the log from the incidents, revisions, runs and records set aside, as the
    /// migration that made it does for an existing database (its `-- rebuild:` part, the one
    /// text of that rebuild): for a copy into an empty database, whose log the copy does not
    /// carry.
    static func rebuild(connection: Connection) throws {
        guard let migration = BundledPostgresMigrations.all.first(where: { $0.fileName.hasSuffix("_transition_log.sql") }),
              let marker = migration.sql.range(of: "-- rebuild:") else {
            throw PostgresError(message: "the transition log's migration has no rebuild part", context: "rebuilding the transition log")
        }
        try connection.execute("DELETE FROM incident_transitions; DELETE FROM change_feed;\n" + migration.sql[marker.lowerBound...],
                               context: "rebuilding the transition log")
    }
}

extension PollTransitionLog {
    /// As SQLite's `PollTransitions.listed(at:incident:)` (``IncidentQuery/listedAt``).
    static func listed(at instant: String, incident: String) -> String {
        """
        first_seen_at <= \(instant) AND (ended_at IS NULL OR ended_at > \(instant)) \
        AND (SELECT t.kind FROM incident_transitions t WHERE t.incident_id = \(incident) \
        AND t.kind IN ('appeared', 'reopened', 'cleared') AND t.at <= \(instant) ORDER BY t.at DESC, t.cursor DESC LIMIT 1) \
        IN ('appeared', 'reopened')
        """
    }
}
