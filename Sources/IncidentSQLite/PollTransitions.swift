import IncidentCore

/// A poll's entries of the transition log (``TransitionKind``; migration 0011), collected in
/// `temp.poll_transitions` while ``PollWriter`` writes the poll and appended to
/// `incident_transitions` by ``append(poll:runID:lastIDBefore:db:)`` at its end, in the change
/// feed's order (the PostgreSQL store's `PollTransitionLog` writes the same entries in the same
/// order):
/// 1. records set aside, in response order;
/// 2. revisions, ends and reopenings, in response order;
/// 3. appearances (and, for a replay or a stale document, reopenings in the past), by incident id;
/// 4. clears, by incident id.
///
/// A live poll's appearances are its new incidents. A replayed file or a stale document is
/// history at its own time: an incident it lists whose log says it was not active then (no
/// appearance at or before that time, or cleared then and listed again later) gets an
/// `appeared` or `reopened` entry at that time; the present is not rewritten.
enum PollTransitions {
    /// Empties the poll's collection (a temporary table, created on first use).
    static func prepare(db: Database) throws {
        try db.execute("""
            CREATE TEMP TABLE IF NOT EXISTS poll_transitions (
                phase INTEGER NOT NULL, ord INTEGER NOT NULL, incident_id INTEGER, external_id TEXT,
                kind TEXT NOT NULL, fields TEXT, at TEXT NOT NULL)
            """)
        try db.run("DELETE FROM temp.poll_transitions")
    }

    /// For a poll that is history (``PollContext/isHistory``, ``appendHistory(poll:runID:unlogged:db:)``),
    /// empties `temp.poll_listed` and returns the statement that adds one external id to it
    /// (`:external_id`). Its history then starts from the ids it lists, found through the
    /// source's unique key (a CROSS JOIN, which SQLite keeps in its order: the temporary table
    /// has no statistics, and the planner preferred reading the source's incidents), not from
    /// every incident of the source (which grew with the history: 356 ms of CPU at 1,000,000
    /// incidents, issue 23). Nil for a poll of the present, which needs none, and when
    /// `unlogged` (``append(poll:runID:lastIDBefore:unlogged:db:)``): then what the poll lists
    /// are the incidents it stored.
    static func prepareListed(for poll: PollContext, unlogged: Bool, db: Database) throws -> Statement? {
        guard poll.isHistory, !unlogged else { return nil }
        try db.execute("CREATE TEMP TABLE IF NOT EXISTS poll_listed (external_id TEXT PRIMARY KEY) WITHOUT ROWID")
        try db.run("DELETE FROM temp.poll_listed")
        return try db.cachedStatement("INSERT OR IGNORE INTO temp.poll_listed (external_id) VALUES (:external_id)")
    }

    /// Logs the change just written to incident `id` (a revision, an end or a reopening): its
    /// row against the revision archived before it. `position` is the record's place in the
    /// response.
    static func changed(_ id: Int64, position: Int, at instant: UTCInstant, fields: [IncidentField], db: Database) throws {
        let statement = try db.cachedStatement("""
            INSERT INTO temp.poll_transitions (phase, ord, incident_id, external_id, kind, fields, at)
            SELECT 2, :ord, n.id, n.external_id,
                   CASE WHEN o.cleared_at IS NOT NULL THEN 'reopened'
                        WHEN o.ended_at IS NULL AND n.ended_at IS NOT NULL THEN 'ended' ELSE 'revised' END,
                   nullif(\(IncidentField.changedFieldsSQL(fields, new: "n.", old: "o.", distinct: "IS NOT")), ''), :at
            FROM incidents n JOIN incident_revisions o ON o.incident_id = n.id AND o.revision = n.revision - 1
            WHERE n.id = :id
            """)
        try statement.bind(["ord": .integer(Int64(position)), "id": .integer(id), "at": .text(instant.rfc3339)])
        try statement.run()
    }

    /// Logs a record set aside; its incident is looked up when the poll ends (a record set aside
    /// may come before the first readable record of a new incident).
    static func quarantined(_ externalID: String?, position: Int, at instant: UTCInstant, db: Database) throws {
        try db.run("""
            INSERT INTO temp.poll_transitions (phase, ord, external_id, kind, at) VALUES (1, :ord, :external_id, 'quarantined', :at)
            """, ["ord": .integer(Int64(position)), "external_id": .optional(externalID), "at": .text(instant.rfc3339)])
    }

    /// Logs the clears ``PollWriter/clearUnlisted(at:)`` is about to make: the same rows, read
    /// before its update, through the same index of the source's active set (0015).
    static func clearing(at instant: UTCInstant, source: String, runID: Int64, db: Database) throws {
        try db.run("""
            INSERT INTO temp.poll_transitions (phase, ord, incident_id, external_id, kind, at)
            SELECT 4, id, id, external_id, 'cleared', :observed FROM incidents INDEXED BY incidents_active_by_source
            WHERE cleared_at IS NULL AND source = :source AND last_seen_run_id <> :run AND last_seen_at < :observed
            ORDER BY id
            """, ["observed": .text(instant.rfc3339), "source": .text(source), "run": .integer(runID)])
    }

    /// Adds the poll's appearances, then appends its entries to the log in order, and indexes
    /// the intervals they open or end (``indexIntervals(after:history:db:)``).
    /// `lastIDBefore`: the largest incident id before the poll (its new incidents are above it).
    /// `unlogged`: the database held no incident before the poll and the log no entry of an
    /// incident (``isUnlogged(lastIDBefore:db:)``), so that every incident is the poll's and has no history: a
    /// replay's or a stale document's appearances are then every incident it stored, read from
    /// `incidents` directly, not looked up one by one in `temp.poll_listed` and the log (a first
    /// ingest of a 300,000-record file spent 1.8 s on those lookups, issue 23), and its
    /// intervals end only by the clears it logs, as a live poll's.
    static func append(poll: PollContext, runID: Int64, lastIDBefore: Int64, unlogged: Bool, db: Database) throws {
        let lastEntryBefore = try db.scalarInt("SELECT coalesce(max(id), 0) FROM incident_transitions") ?? 0
        try appendEntries(poll: poll, runID: runID, lastIDBefore: lastIDBefore, unlogged: unlogged, db: db)
        try indexIntervals(after: lastEntryBefore, history: poll.isHistory && !unlogged, db: db)
        try takeOutHours(after: lastEntryBefore, db: db)
    }

    /// Whether no log entry names an incident, in a database with no incident (`lastIDBefore`
    /// 0): a poll into it stores incidents with no history (``append(poll:runID:lastIDBefore:unlogged:db:)``).
    /// A record set aside with no incident leaves an entry with none, which is no history.
    static func isUnlogged(lastIDBefore: Int64, db: Database) throws -> Bool {
        guard lastIDBefore == 0 else { return false }
        return try db.scalarInt("SELECT NOT EXISTS (SELECT 1 FROM incident_transitions WHERE incident_id IS NOT NULL)") == 1
    }

    private static func appendEntries(poll: PollContext, runID: Int64, lastIDBefore: Int64, unlogged: Bool, db: Database) throws {
        let at = SQLiteValue.text(poll.observedAt.rfc3339)
        try db.run("""
            UPDATE temp.poll_transitions SET incident_id = (SELECT id FROM incidents i
                WHERE i.source = :source AND i.external_id = temp.poll_transitions.external_id)
            WHERE phase = 1 AND external_id IS NOT NULL
            """, ["source": .text(poll.source)])
        let arguments: [String: SQLiteValue] = ["source": .text(poll.source), "run": .integer(runID)]
        let append = """
            INSERT INTO incident_transitions (incident_id, source, external_id, run_id, kind, fields, at)
            SELECT incident_id, :source, external_id, :run, kind, fields, at FROM temp.poll_transitions
            """
        var appearances = "id > :last_id_before"
        if poll.isHistory {
            if let direct = try appendHistory(poll: poll, runID: runID, unlogged: unlogged, db: db) {
                appearances = direct
            } else {
                try db.run(append + " ORDER BY phase, ord", arguments)
                return try db.run("DELETE FROM temp.poll_transitions")
            }
        }
        // A live poll's appearances are its new incidents, logged from their rows directly (not
        // copied through the collection: a first poll is all appearances); so are an unlogged
        // replay's when nothing clears them (``appendHistory(poll:runID:unlogged:db:)``).
        try db.run(append + " WHERE phase < 3 ORDER BY phase, ord", arguments)
        try db.run("""
            INSERT INTO incident_transitions (incident_id, source, external_id, run_id, kind, at)
            SELECT id, :source, external_id, :run, 'appeared', :at FROM incidents WHERE \(appearances) ORDER BY id
            """, arguments.merging(["at": at, "last_id_before": .integer(lastIDBefore)]) { $1 })
        try db.run(append + " WHERE phase > 3 ORDER BY phase, ord", arguments)
        try db.run("DELETE FROM temp.poll_transitions")
    }

    /// A replay's or a stale document's appearances and reopenings at its own time (see the type),
    /// and the clears that end them: an incident it lists that the log does not show active then
    /// was listed from that time until the source's first complete live poll after it
    /// (``firstClearingPoll(after:)``), unless a listing at or before that poll continues it. An
    /// incident only this document lists is cleared as of that poll (the present it has is that
    /// poll's); one cleared before and listed again later keeps its present.
    /// `unlogged`: every incident is this poll's, with no log before it (no state, no later listing).
    /// Returns the condition on `incidents` of the appearances it left to the caller to log
    /// straight from their rows, as a live poll's (an unlogged replay that no later live poll
    /// clears: a first ingest of a file, whose 300,000 appearances went through the collection
    /// and a sort of it, issue 23); nil when it collected every entry.
    private static func appendHistory(poll: PollContext, runID: Int64, unlogged: Bool, db: Database) throws -> String? {
        let at = SQLiteValue.text(poll.observedAt.rfc3339)
        let arguments: [String: SQLiteValue] = ["at": at, "source": .text(poll.source), "run": .integer(runID)]
        var clearing: SQLiteValue = .null
        try db.query(firstClearingPoll(after: ":at"), arguments) { row in clearing = row.string(at: 0).map(SQLiteValue.text) ?? .null }
        if unlogged, case .null = clearing {
            return "id > :last_id_before AND last_seen_run_id = :run AND id NOT IN (SELECT incident_id FROM temp.poll_transitions WHERE phase = 2)"
        }
        if unlogged {
            try db.run("""
                INSERT INTO temp.poll_transitions (phase, ord, incident_id, external_id, kind, at)
                SELECT 3, id, id, external_id, 'appeared', :at FROM incidents
                WHERE last_seen_run_id = :run AND id NOT IN (SELECT incident_id FROM temp.poll_transitions WHERE phase = 2)
                ORDER BY id
                """, ["at": at, "run": .integer(runID)])
        } else {
            try db.run("""
                INSERT INTO temp.poll_transitions (phase, ord, incident_id, external_id, kind, at)
                SELECT 3, id, id, external_id, CASE WHEN state IS NULL THEN 'appeared' ELSE 'reopened' END, :at FROM (
                    SELECT i.id, i.external_id, \(stateAt(":at")) AS state, \(listedAfter(":at")) AS later
                    FROM temp.poll_listed listed_ids CROSS JOIN incidents i ON i.source = :source AND i.external_id = listed_ids.external_id
                    WHERE i.last_seen_run_id = :run
                      AND i.id NOT IN (SELECT incident_id FROM temp.poll_transitions WHERE phase = 2))
                WHERE state IS NULL OR (state = 'cleared' AND (later OR :clearing IS NOT NULL))
                ORDER BY id
                """, arguments.merging(["clearing": clearing]) { $1 })
        }
        guard case .text = clearing else { return nil }
        try db.run("""
            INSERT INTO temp.poll_transitions (phase, ord, incident_id, external_id, kind, at)
            SELECT 4, listed_then.incident_id, listed_then.incident_id, listed_then.external_id, 'cleared', :clearing
            FROM temp.poll_transitions listed_then
            WHERE listed_then.phase = 3 AND NOT EXISTS (SELECT 1 FROM incident_transitions t WHERE t.incident_id = listed_then.incident_id
                AND t.kind IN ('appeared', 'reopened') AND t.at > :at AND t.at <= :clearing)
            ORDER BY listed_then.incident_id
            """, ["at": at, "clearing": clearing])
        try db.run("""
            UPDATE incidents SET cleared_at = :clearing
            WHERE id IN (SELECT incident_id FROM temp.poll_transitions WHERE phase = 3)
              AND NOT EXISTS (SELECT 1 FROM incident_transitions t WHERE t.incident_id = incidents.id
                  AND t.kind IN ('appeared', 'reopened') AND t.at > :at)
            """, ["at": at, "clearing": clearing])
        return nil
    }

    /// When the source's first complete live poll after `instant` (a parameter) was fetched, the
    /// poll `:run` aside: the first that would have cleared what a document of that time listed
    /// and it did not. NULL when none came after it (such history is left open only when the
    /// incident is listed later; a stale document never reopens the present).
    static func firstClearingPoll(after instant: String) -> String {
        """
        SELECT min(observed_at) FROM ingest_runs
        WHERE source = :source AND status = 'succeeded' AND origin = 'live' AND id <> :run AND observed_at > \(instant)
        """
    }

    /// The last lifecycle entry (appeared, reopened, cleared) of incident `i` at or before
    /// `instant` (a parameter name); NULL when there is none.
    static func stateAt(_ instant: String) -> String {
        """
        (SELECT t.kind FROM incident_transitions t WHERE t.incident_id = i.id
            AND t.kind IN ('appeared', 'reopened', 'cleared') AND t.at <= \(instant) ORDER BY t.at DESC, t.id DESC LIMIT 1)
        """
    }

    /// Whether incident `i` was listed again (appeared or reopened) after `instant`.
    static func listedAfter(_ instant: String) -> String {
        """
        EXISTS (SELECT 1 FROM incident_transitions t WHERE t.incident_id = i.id
            AND t.kind IN ('appeared', 'reopened') AND t.at > \(instant))
        """
    }
}

extension PollTransitions {
    /// The end of the interval that log entry `o` (an alias) opens: the first clear of its
    /// incident after it, in the log's order (time, then id), in ``intervalSeconds(_:)``; NULL
    /// while none followed. As migration 0013 computes it.
    static func intervalEnd(_ o: String) -> String {
        """
        unixepoch((SELECT min(c.at) FROM incident_transitions c WHERE c.incident_id = \(o).incident_id AND c.kind = 'cleared' \
        AND c.at >= \(o).at AND (c.at > \(o).at OR c.id > \(o).id))) - \(intervalEpoch)
        """
    }

    /// The intervals' time origin, 2020-01-01T00:00:00Z in seconds since 1970: their 32-bit
    /// seconds reach from 1951 to 2088.
    static let intervalEpoch: Int64 = 1_577_836_800

    /// `instant` as the intervals count time: seconds since ``intervalEpoch``, kept within 32 bits
    /// (an instant past 2088 is later than every ended interval, as it should be).
    static func intervalSeconds(_ instant: UTCInstant) -> Int64 {
        min(max(instant.secondsSince1970 - intervalEpoch, -2_147_483_647), 2_147_483_646)
    }

    /// Indexes the log entries after `id` (a poll's) in the listed intervals (migration 0013):
    /// each appearance or reopening opens one (in `incident_listed_open`); then the intervals of
    /// each incident the poll cleared or listed again, and with `history` (a replay or a stale
    /// document, which log in the past) of each incident it listed, get their ends anew from the
    /// log: an open one a clear follows moves to the R*Tree `incident_listed_intervals`, an ended
    /// one a clear logged in the past ends earlier. A live poll's appearances are new
    /// incidents, with nothing after them: they only open intervals. Statements over the poll's
    /// entries, as ``DerivedIndexes`` does for the incidents' structures.
    static func indexIntervals(after id: Int64, history: Bool, db: Database) throws {
        let after: [String: SQLiteValue] = ["after": .integer(id)]
        try db.run("""
            INSERT INTO incident_listed_open (id, incident_id, listed_from, started_at)
            SELECT t.id, t.incident_id, unixepoch(t.at) - \(intervalEpoch), (SELECT started_at FROM incidents i WHERE i.id = t.incident_id)
            FROM incident_transitions t
            WHERE t.id > :after AND t.kind IN ('appeared', 'reopened') AND t.incident_id IS NOT NULL
            """, after)
        try db.execute("""
            CREATE TEMP TABLE IF NOT EXISTS interval_ends (id INTEGER PRIMARY KEY, incident_id INTEGER, listed_from INTEGER, listed_until INTEGER);
            DELETE FROM temp.interval_ends;
            """)
        try db.run("""
            INSERT INTO temp.interval_ends (id, incident_id, listed_from, listed_until)
            SELECT o.id, o.incident_id, unixepoch(o.at) - \(intervalEpoch), \(intervalEnd("o")) FROM incident_transitions o
            WHERE o.kind IN ('appeared', 'reopened') AND o.incident_id IN (SELECT incident_id FROM incident_transitions
                WHERE id > :after AND (kind IN ('cleared', 'reopened') OR (:history AND kind = 'appeared')))
            """, after.merging(["history": .integer(history ? 1 : 0)]) { $1 })
        try db.run("""
            INSERT INTO incident_listed_intervals (id, listed_from, listed_until, incident_id)
            SELECT id, listed_from, listed_until, incident_id FROM temp.interval_ends
            WHERE listed_until IS NOT NULL AND EXISTS (SELECT 1 FROM incident_listed_open p WHERE p.id = temp.interval_ends.id)
            """)
        try db.run("""
            DELETE FROM incident_listed_open WHERE id IN (SELECT id FROM temp.interval_ends WHERE listed_until IS NOT NULL)
            """)
        try db.run("""
            UPDATE incident_listed_intervals SET listed_until = (SELECT listed_until FROM temp.interval_ends e WHERE e.id = incident_listed_intervals.id)
            WHERE id IN (SELECT id FROM temp.interval_ends WHERE listed_until IS NOT NULL)
              AND listed_until <> (SELECT listed_until FROM temp.interval_ends e WHERE e.id = incident_listed_intervals.id)
            """)
    }

    /// Removes the intervals of the incidents in `temp.prune_batch` (before they are deleted,
    /// with their log), and the counts of the hours they touched (``countHours(before:db:)``).
    static func removeIntervals(ofPruneBatch db: Database) throws {
        let openings = """
            SELECT id FROM incident_transitions WHERE incident_id IN (SELECT id FROM temp.prune_batch) AND kind IN ('appeared', 'reopened')
            """
        // From the first of their starts to the last of their ends (all hours on if one is open).
        try db.run("""
            DELETE FROM listed_hours WHERE hour >= (SELECT min(listed_from) / 3600 FROM (
                    SELECT listed_from FROM incident_listed_intervals WHERE id IN (\(openings))
                    UNION ALL SELECT listed_from FROM incident_listed_open WHERE id IN (\(openings))))
              AND (hour <= (SELECT max(listed_until) / 3600 FROM incident_listed_intervals WHERE id IN (\(openings)))
                   OR EXISTS (SELECT 1 FROM incident_listed_open WHERE id IN (\(openings))))
            """)
        try db.run("DELETE FROM incident_listed_intervals WHERE id IN (\(openings))")
        try db.run("DELETE FROM incident_listed_open WHERE id IN (\(openings))")
    }

    /// Takes out of `listed_hours` (migration 0016: the counts of past hours a timeline per hour
    /// reads) the hours from the earliest hour of the log entries after `id` (a poll's) on: a
    /// replay's or a stale document's are in the past. In the poll's transaction, so that no
    /// reader ever sees a count the poll changed.
    static func takeOutHours(after id: Int64, db: Database) throws {
        try db.run("""
            DELETE FROM listed_hours WHERE hour >= (SELECT (min(unixepoch(at)) - \(intervalEpoch)) / 3600 FROM incident_transitions WHERE id > :after)
            """, ["after": .integer(id)])
    }

    /// Counts the hours since the last one `listed_hours` holds, at most ``countedHoursBack``
    /// and before the hour of `instant` (a poll's), from the intervals, as migration 0016
    /// counts them, in a transaction of its own: ``SQLiteStore`` runs it after a poll's commit,
    /// not in it, since it reads every interval that touches those hours (the active set and
    /// the latest clears: at 1,000,000 incidents with 50,000 listed, about 0.3 s) and does so
    /// about once an hour, whatever the poll. An hour not counted yet is counted by the
    /// timeline that reads it (``SQLiteStore/timelineSteps(_:field:buckets:db:)``), so a count
    /// that fails or is skipped changes no answer, only its speed.
    /// - Returns: how many hours it counted.
    @discardableResult
    static func countHours(before instant: UTCInstant, db: Database) throws -> Int64 {
        let current = intervalSeconds(instant) / 3600
        guard current > 0 else { return 0 }
        // Seen before the transaction, to skip it in the usual case (every hour held).
        guard try firstUncounted(current: current, db: db) < current else { return 0 }
        return try db.writeTransaction {
            let first = try firstUncounted(current: current, db: db)
            guard first < current else { return 0 }
            try db.run("INSERT INTO listed_hours (hour, listed) WITH hour_window(s0, e0) AS (SELECT :s0, :e0), \(hourCounts)",
                       ["s0": .integer(first * 3600), "e0": .integer(current * 3600)])
            return current - first
        }
    }

    /// The first hour ``countHours(before:db:)`` would count before hour `current`.
    private static func firstUncounted(current: Int64, db: Database) throws -> Int64 {
        let last = try db.scalarInt("SELECT max(hour) FROM listed_hours") ?? -1
        return max(last + 1, current - countedHoursBack, 0)
    }

    /// How many hours back a poll counts the hours no count is held for (a new database, a
    /// scheduler that was stopped, hours a change took out): older ones are counted at each read.
    static let countedHoursBack: Int64 = 24

    /// The CTEs and SELECT, after a CTE `hour_window(s0, e0)` of the hours' bounds (interval seconds,
    /// whole hours), of each hour's number of incidents listed at some moment of it and not
    /// ended by their provider by then: as migration 0016's rebuild counts them, and as the
    /// timeline's statement (``SQLiteStore/timelineSteps(_:field:buckets:db:)``) does with UTC
    /// hours as buckets and no filters.
    static let hourCounts = """
        hour_spans(incident, s, e) AS (
            SELECT incident_id, listed_from, listed_until FROM incident_listed_intervals, hour_window WHERE listed_from < e0 AND listed_until > s0
            UNION ALL SELECT incident_id, listed_from, e0 FROM incident_listed_open, hour_window WHERE listed_from < e0),
        hour_cut(id, s, e) AS (
            SELECT hour_spans.incident, max(hour_spans.s, s0), min(hour_spans.e, e0, coalesce(unixepoch(incidents.ended_at) - \(intervalEpoch), e0))
            FROM hour_spans JOIN incidents ON incidents.id = hour_spans.incident, hour_window),
        hour_ranges(id, first, last) AS (SELECT id, s / 3600, (e - 1) / 3600 FROM hour_cut WHERE s < e),
        hour_joined(first, last, before) AS (
            SELECT first, last, max(last) OVER (PARTITION BY id ORDER BY first, last ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
            FROM hour_ranges),
        hour_steps(hour, change) AS (
            SELECT max(first, coalesce(before + 1, first)), 1 FROM hour_joined WHERE coalesce(before, -1) < last
            UNION ALL SELECT last + 1, -1 FROM hour_joined WHERE coalesce(before, -1) < last),
        hour_totals(hour, change) AS (SELECT hour, sum(change) FROM hour_steps GROUP BY hour),
        hours(hour) AS (SELECT s0 / 3600 FROM hour_window WHERE s0 < e0 UNION ALL SELECT hour + 1 FROM hours, hour_window WHERE hour + 1 < e0 / 3600)
        SELECT hours.hour, sum(coalesce(hour_totals.change, 0)) OVER (ORDER BY hours.hour) FROM hours LEFT JOIN hour_totals ON hour_totals.hour = hours.hour
        """

    /// What an incident listed as active at `instant` (a parameter, RFC 3339 text) also is, besides
    /// having an interval that contains it (``listedIntervals(containing:)``): seen by then and
    /// not ended by the provider by then (``IncidentQuery/listedAt``).
    static func seenAndNotEnded(at instant: String) -> String {
        "first_seen_at <= \(instant) AND (ended_at IS NULL OR ended_at > \(instant))"
    }

    /// The incidents one of whose listed intervals contains the instant `seconds` (a parameter,
    /// ``intervalSeconds(_:)``): their last appearance, reopening or clear at or before it is an
    /// appearance or a reopening, which the intervals state exactly. The ended ones from the
    /// R*Tree, the open ones by their start.
    static func listedIntervals(containing seconds: String) -> String {
        "SELECT incident_id FROM incident_listed_intervals WHERE listed_from <= \(seconds) AND listed_until > \(seconds) "
            + "UNION ALL SELECT incident_id FROM incident_listed_open WHERE listed_from <= \(seconds)"
    }
}
