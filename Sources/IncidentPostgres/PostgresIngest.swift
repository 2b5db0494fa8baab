import IncidentCore

extension PostgresStore: IngestStore {
    /// Stores one poll as one transaction (see ``IngestStore/ingest(_:_:)``).
    ///
    /// The records stream into a temporary table with `COPY` as the feed is read; when the
    /// response ends, a few set-based statements apply them (``PollStaging``). Polls of one
    /// source are serialized across hosts by a transaction-level advisory lock.
    public func ingest(_ poll: PollContext, _ produce: (any PollSink) throws -> ResponseVerdict) throws -> IngestRun {
        try withConnection(source: poll.source) { connection in
            try connection.begin(context: "starting the poll of \(poll.source)")
            do {
                try connection.query("SELECT pg_advisory_xact_lock(:key)", named: ["key": .integer(Self.pollLockKey(poll.source))],
                                     context: "waiting for another poll of \(poll.source) to finish")
                var run = IngestRun(source: poll.source, startedAt: poll.startedAt, finishedAt: poll.startedAt,
                                    status: .succeeded, origin: poll.origin, observedAt: poll.observedAt, host: poll.host)
                let runID = try RunRows.insert(run, running: true, connection: connection)
                let staging = try PollStaging(connection: connection, columns: columns, poll: poll, runID: runID)
                let verdict = try staging.receive(produce)
                let publication = try Publication(stated: verdict.publishedAt, poll: poll,
                                                  newestApplied: try Self.newestPublication(of: poll.source, connection: connection))
                let outcome = try staging.apply()
                run.counts = outcome.counts
                var ending = PollOutcome(verdict: verdict, counts: outcome.counts, rejectedWithoutID: outcome.rejectedWithoutID,
                                         older: outcome.older, poll: poll, publication: publication)
                run.counts.cleared = try ending.clear(staging, poll: poll)
                try PollTransitionLog.collect(poll: poll, runID: runID, fields: columns.fields, connection: connection)
                try staging.applyCountChanges()
                if let newest = publication.newestApplied(after: poll) {
                    try connection.query("""
                        INSERT INTO source_state (source, published_at, updated_at) VALUES (:source, :published_at, :updated_at)
                        ON CONFLICT (source) DO UPDATE SET published_at = greatest(source_state.published_at, excluded.published_at),
                            updated_at = excluded.updated_at
                        """, named: ["source": .text(poll.source), "published_at": .instant(newest), "updated_at": .instant(poll.startedAt)],
                        context: "recording the publication time of \(poll.source)")
                }
                run.id = runID
                run.status = ending.status
                run.warnings = ending.runWarnings
                run.publishedAt = verdict.publishedAt
                run.finishedAt = clock.now()
                try RunRows.finish(run, connection: connection)
                if let holder = poll.leaseHolder, !poll.dryRun { try Self.checkLease(of: poll.source, holder: holder, connection: connection) }
                try PollTransitionLog.append(poll: poll, runID: runID, connection: connection)
                try connection.execute(poll.dryRun ? "ROLLBACK" : "COMMIT", context: "committing the poll of \(poll.source)")
                if poll.dryRun { run.id = nil }
                return run
            } catch {
                connection.rollbackQuietly()
                throw error
            }
        }
    }

    public func recordRun(_ run: IngestRun) throws {
        try withConnection(source: run.source) { connection in
            try connection.transaction(context: "recording a run of \(run.source)") {
                _ = try RunRows.insert(run, running: false, connection: connection)
                if let resumesAt = run.resumesAt {
                    try connection.query("""
                        INSERT INTO source_state (source, exhausted_until, exhausted_reason, updated_at)
                        VALUES (:source, :exhausted_until, :exhausted_reason, :updated_at)
                        ON CONFLICT (source) DO UPDATE SET exhausted_until = excluded.exhausted_until,
                            exhausted_reason = excluded.exhausted_reason, updated_at = excluded.updated_at
                        """, named: ["source": .text(run.source), "exhausted_until": .instant(resumesAt),
                                     "exhausted_reason": .optional(run.error), "updated_at": .instant(run.finishedAt)],
                        context: "recording the quota pause of \(run.source)")
                }
            }
        }
    }

    /// The newest publication time a current document of `source` stated (`source_state`).
    static func newestPublication(of source: String, connection: Connection) throws -> UTCInstant? {
        try connection.query("SELECT published_at FROM source_state WHERE source = :source", named: ["source": .text(source)],
                             context: "reading the publication time of \(source)").instant(0, 0)
    }

    public func quotaResumesAt(source: String) throws -> UTCInstant? {
        try withConnection { connection in
            try connection.query("SELECT exhausted_until FROM source_state WHERE source = :source", named: ["source": .text(source)],
                                 context: "reading the quota state of \(source)").instant(0, 0)
        }
    }

    /// The advisory lock key of the polls of `source`.
    static func pollLockKey(_ source: String) -> Int64 {
        var h = FNV1a64()
        h.combine(field: "trafficincidents poll")
        h.combine(field: source)
        return h.signed
    }
}

/// One poll's records in a temporary table (`poll_rows`, dropped at commit), then applied to
/// `incidents` by set-based statements with the same outcome, record for record, as the SQLite
/// store's per-record upsert:
/// - the first record of each id is kept; a later one is a duplicate (so is a record of a
///   known incident after a record of it that was set aside: that one already listed it), or,
///   with another content hash than the first readable one, a twin set aside before planning
///   (``setTwinsAside()``);
/// - a known incident with the same content hash, not cleared, is *unchanged*: `last_seen_at`
///   and `first_seen_at` become the latest and earliest observations;
/// - otherwise, a stale document, or a response older than the incident's stored state (a
///   replayed file), is
///   *older*: only `first_seen_at` may move earlier;
/// - otherwise the content changed (*updated*) or the incident had been cleared (*reopened*):
///   the previous values go to `incident_revisions`, the row is overwritten, `revision` + 1
///   (unless only fields that migrations added are new: then it is filled in place, no revision);
/// - an id not stored yet is *inserted*, in response order (ids ascend as SQLite's would).
///
/// Why staging rather than a statement per record: measured against pipelined prepared upserts
/// (libpq pipeline mode, SQLite's guarded upsert per record and its slow path for the refused
/// ones; commit "Measure the other bulk path"), 300,000 GITS records on loopback, three
/// interleaved rounds on a loaded 2-core machine, median wall time of the whole command:
/// fresh 30.0 s (COPY) vs 40.3 s (pipeline), unchanged re-ingest 14.1 s vs 22.1 s; COPY was
/// faster in every round.
final class PollStaging: PollSink, UnlistedIncidents {
    private let connection: Connection
    private let columns: PostgresColumns
    private let poll: PollContext
    private let runID: Int64
    private var writer: CopyWriter?
    private var order: Int64 = 0

    struct Outcome {
        var counts: IngestCounts
        var rejectedWithoutID: Int
        var older: Int
    }

    init(connection: Connection, columns: PostgresColumns, poll: PollContext, runID: Int64) throws {
        self.connection = connection
        self.columns = columns
        self.poll = poll
        self.runID = runID
        // No JIT compilation for the poll's statements: planned over staged tables without
        // statistics, their estimates pass `jit_above_cost` (11 million rows for the 1.2 million
        // count keys of a fresh 300,000-record poll), and compiling took 0.4 s of that
        // statement's 2.6 s; a history lookup spent 317 of its 1,162 ms compiling (issue 23).
        try connection.execute("""
            SET LOCAL jit = off;
            CREATE TEMP TABLE poll_rows (
                ord bigint NOT NULL, rejected boolean NOT NULL, external_id text COLLATE "C", \(columns.definitions),
                content_hash bigint, base_hash bigint, position text, reason text, excerpt text) ON COMMIT DROP;
            CREATE TEMP TABLE poll_plan (ord bigint NOT NULL, id bigint, action text NOT NULL) ON COMMIT DROP;
            CREATE TEMP TABLE poll_count_changes (source text COLLATE "C", dimension text COLLATE "C", key text COLLATE "C",
                                                  incidents bigint) ON COMMIT DROP;
            """, context: "preparing the poll of \(poll.source)")
        try PollTransitionLog.prepare(connection: connection)
    }

    /// Copies the records `produce` passes to the sink into `poll_rows`, as they come.
    func receive(_ produce: (any PollSink) throws -> ResponseVerdict) throws -> ResponseVerdict {
        try connection.copyIn("COPY poll_rows (ord, rejected, external_id, \(columns.list()), content_hash, base_hash, position, reason, excerpt) FROM STDIN",
                              context: "storing the records of \(poll.source)") { writer in
            self.writer = writer
            defer { self.writer = nil }
            return try produce(self)
        }
    }

    func upsert(_ incident: Incident) throws {
        guard let writer else { throw Self.sinkClosed }
        let (values, hash, baseHash) = columns.valuesAndBaseHash(of: incident)
        let start = writer.rowStart
        order += 1
        writer.integer(order)
        writer.text("f")
        guard writer.text(incident.externalID), columns.copy(values, to: writer) else {
            // PostgreSQL text cannot hold U+0000: set the record aside rather than lose the poll.
            writer.discardRow(from: start)
            order -= 1
            return try reject(RejectedRecord(
                externalID: incident.externalID.contains("\0") ? nil : incident.externalID,
                position: "record \(order + 1) of the response",
                reason: "a text value holds the character U+0000, which PostgreSQL cannot store"))
        }
        writer.integer(hash)
        writer.integer(baseHash)
        writer.null()
        writer.null()
        writer.null()
        try writer.endRow()
    }

    func reject(_ record: RejectedRecord) throws {
        guard let writer else { throw Self.sinkClosed }
        order += 1
        writer.integer(order)
        writer.text("t")
        _ = writer.optionalText(record.externalID.map(Self.withoutNUL))
        for _ in columns.names { writer.null() }
        writer.null()  // content_hash
        writer.null()  // base_hash
        writer.text(Self.withoutNUL(record.position))
        writer.text(Self.withoutNUL(record.reason))
        _ = writer.optionalText(record.excerpt.map(Self.withoutNUL))
        try writer.endRow()
    }

    private static func withoutNUL(_ text: String) -> String {
        text.contains("\0") ? text.replacingOccurrences(of: "\0", with: "\u{FFFD}") : text
    }

    private static let sinkClosed = PostgresError(message: "a record arrived after the response ended", context: "storing a poll")

    /// Applies the staged records; returns the counts (`cleared` is filled in by the store).
    func apply() throws -> Outcome {
        let context = "applying the records of \(poll.source)"
        let values: [String: PostgresValue] = ["source": .text(poll.source), "run_id": .integer(runID), "observed_at": .instant(poll.observedAt),
                                               "stale": .text(poll.stale == nil ? "false" : "true")]
        // What each first record of an id does, decided against the state before this poll.
        try connection.query("""
            INSERT INTO poll_plan (ord, id, action)
            SELECT f.ord, e.id,
                   CASE WHEN e.id IS NULL THEN 'insert'
                        WHEN r.first_ord < f.ord THEN 'duplicate'
                        WHEN e.content_hash = f.content_hash AND e.cleared_at IS NULL THEN 'unchanged'
                        WHEN :stale::boolean OR :observed_at::timestamptz < greatest(e.last_seen_at, e.cleared_at) THEN 'older'
                        WHEN e.cleared_at IS NULL AND e.content_hash = f.base_hash THEN 'fill'
                        WHEN e.cleared_at IS NULL THEN 'update'
                        ELSE 'reopen' END
            FROM (SELECT DISTINCT ON (external_id) ord, external_id, content_hash, base_hash FROM poll_rows
                  WHERE NOT rejected ORDER BY external_id, ord) f
            LEFT JOIN incidents e ON e.source = :source AND e.external_id = f.external_id
            LEFT JOIN (SELECT external_id, min(ord) AS first_ord FROM poll_rows WHERE rejected GROUP BY external_id) r
                   ON r.external_id = f.external_id
            """, named: values, context: context)
        // Some id repeats when there are more readable records than planned ids: twins are possible.
        let repeats = try connection.query("""
            SELECT (SELECT count(*) FROM poll_rows WHERE NOT rejected) - (SELECT count(*) FROM poll_plan)
            """, context: context).int(0, 0) ?? 0
        if repeats > 0 { try setTwinsAside() }
        // The counts (PostgresCounts): the keys of what this poll inserts, changes or reopens,
        // as staged, for the keys of the changed ones as stored; applied with the clears.
        try connection.query("""
            INSERT INTO poll_count_changes
            SELECT source, dimension, key, sum(incidents) FROM (
            \(PostgresCounts.keys(of: """
                (SELECT e.source, e.category, e.road, e.started_at, e.ended_at, e.cleared_at FROM incidents e JOIN poll_plan p ON p.id = e.id
                 WHERE p.action IN ('update', 'reopen', 'fill')) x
                """, sign: -1))
            UNION ALL
            \(PostgresCounts.keys(of: """
                (SELECT :source::text AS source, s.category, s.road, s.started_at, s.ended_at, NULL::timestamptz AS cleared_at
                 FROM poll_plan p JOIN poll_rows s ON s.ord = p.ord WHERE p.action IN ('insert', 'update', 'reopen', 'fill')) x
                """))
            ) AS changes GROUP BY 1, 2, 3
            """, named: values, context: context)
        try connection.query("""
            INSERT INTO incident_revisions (incident_id, revision, \(columns.list()), content_hash, cleared_at, superseded_at)
            SELECT e.id, e.revision, \(columns.list("e.")), e.content_hash, e.cleared_at, :observed_at
            FROM incidents e JOIN poll_plan p ON p.id = e.id WHERE p.action IN ('update', 'reopen')
            """, named: values, context: context)
        try connection.query("""
            UPDATE incidents e SET \(columns.assignments(from: "s.")), content_hash = s.content_hash, revision = e.revision + 1,
                last_seen_at = greatest(e.last_seen_at, :observed_at), first_seen_at = least(e.first_seen_at, :observed_at),
                last_seen_run_id = :run_id, cleared_at = NULL
            FROM poll_plan p JOIN poll_rows s ON s.ord = p.ord
            WHERE e.id = p.id AND p.action IN ('update', 'reopen')
            """, named: values, context: context)
        // Stored before migrations added fields, and otherwise the same: filled in place, no
        // revision (``Incident/hashWithoutAddedFields``).
        try connection.query("""
            UPDATE incidents e SET \(columns.assignments(from: "s.")), content_hash = s.content_hash,
                last_seen_at = greatest(e.last_seen_at, :observed_at), first_seen_at = least(e.first_seen_at, :observed_at),
                last_seen_run_id = :run_id
            FROM poll_plan p JOIN poll_rows s ON s.ord = p.ord
            WHERE e.id = p.id AND p.action = 'fill'
            """, named: values, context: context)
        try connection.query("""
            UPDATE incidents e SET first_seen_at = least(e.first_seen_at, :observed_at),
                last_seen_at = CASE WHEN p.action = 'older' THEN e.last_seen_at ELSE greatest(e.last_seen_at, :observed_at) END,
                last_seen_run_id = :run_id
            FROM poll_plan p WHERE e.id = p.id AND p.action IN ('unchanged', 'older')
            """, named: values, context: context)
        // Each new incident appeared with this poll, whatever its origin: its entry of the
        // transition log (PollTransitionLog) comes from the insert itself, not from looking the
        // new ids up again (4.6 s of a fresh 300,000-record file, issue 23).
        try connection.query("""
            WITH inserted AS (
                INSERT INTO incidents (source, external_id, \(columns.list()), content_hash,
                                       revision, first_seen_at, last_seen_at, first_seen_run_id, last_seen_run_id)
                SELECT :source, s.external_id, \(columns.list("s.")), s.content_hash, 1, :observed_at, :observed_at, :run_id, :run_id
                FROM poll_plan p JOIN poll_rows s ON s.ord = p.ord WHERE p.action = 'insert' ORDER BY s.ord
                RETURNING id, external_id)
            \(PollTransitionLog.appearances(of: "inserted", at: ":observed_at"))
            """, named: values, context: context)
        try connection.query("""
            INSERT INTO rejected_records (run_id, source, external_id, position, reason, excerpt, rejected_at)
            SELECT :run_id, :source, external_id, position, reason, excerpt, :observed_at FROM poll_rows WHERE rejected ORDER BY ord
            """, named: values, context: context)
        // Listed, though unreadable: this poll must not clear them.
        try connection.query("""
            UPDATE incidents SET last_seen_run_id = :run_id
            WHERE source = :source AND last_seen_run_id <> :run_id
              AND external_id IN (SELECT external_id FROM poll_rows WHERE rejected AND external_id IS NOT NULL)
            """, named: values, context: context)

        let totals = try connection.query("""
            SELECT count(*) FILTER (WHERE NOT rejected), count(*) FILTER (WHERE rejected),
                   count(*) FILTER (WHERE rejected AND external_id IS NULL)
            FROM poll_rows
            """, context: context)
        let (records, rejected, withoutID) = (totals.int(0, 0) ?? 0, totals.int(0, 1) ?? 0, totals.int(0, 2) ?? 0)
        let actions = try connection.query("SELECT action, count(*) FROM poll_plan GROUP BY action", context: context)
        var byAction: [String: Int] = [:]
        for row in 0..<actions.rowCount { byAction[actions.string(row, 0) ?? ""] = actions.int(row, 1) ?? 0 }
        let firsts = byAction.values.reduce(0, +)
        let counts = IngestCounts(
            fetched: records + rejected, inserted: byAction["insert", default: 0], updated: byAction["update", default: 0],
            unchanged: byAction["unchanged", default: 0] + byAction["fill", default: 0], reopened: byAction["reopen", default: 0],
            rejected: rejected, duplicates: records - firsts + byAction["duplicate", default: 0])
        return Outcome(counts: counts, rejectedWithoutID: withoutID, older: byAction["older", default: 0])
    }

    /// Sets aside the later of two records with the same id and different content ("twins")
    /// in `poll_rows`, once `poll_plan` holds the first readable record of each id: a later one
    /// with another content hash becomes a record set aside with the reason (the same record as
    /// the SQLite store's, from ``RejectedRecord/twin(externalID:position:category:road:location:description:startedAt:endedAt:)``).
    /// Run only when some id repeats: on 300,000 staged records without repeats the query
    /// would cost 1.3 s (a tenth of an unchanged re-ingest).
    private func setTwinsAside() throws {
        let context = "setting aside the twins of \(poll.source)"
        let twins = try connection.query("""
            SELECT t.ord, t.external_id, t.category, t.road, t.location, t.description, t.started_at, t.ended_at
            FROM poll_plan p JOIN poll_rows f ON f.ord = p.ord
            JOIN poll_rows t ON t.external_id = f.external_id AND t.ord > f.ord AND t.content_hash <> f.content_hash
            WHERE NOT t.rejected ORDER BY t.ord
            """, context: context)
        for row in 0..<twins.rowCount {
            guard let ord = twins.int64(row, 0), let id = twins.string(row, 1) else { continue }
            let twin = RejectedRecord.twin(externalID: id, position: Int(ord), category: twins.string(row, 2) ?? "",
                                           road: twins.string(row, 3), location: twins.string(row, 4), description: twins.string(row, 5),
                                           startedAt: twins.instant(row, 6), endedAt: twins.instant(row, 7))
            try connection.query("UPDATE poll_rows SET rejected = true, position = :position, reason = :reason, excerpt = :excerpt WHERE ord = :ord",
                                 named: ["ord": .integer(ord), "position": .text(twin.position), "reason": .text(twin.reason),
                                         "excerpt": .optional(twin.excerpt)], context: context)
        }
    }

    /// Marks cleared, at `instant` (the observation time, or for an answer of several pages the
    /// previous complete poll's), every active incident of the source that this complete poll
    /// did not list (nor reject) and that no poll saw at or after that time (an older replay
    /// never clears what a newer poll listed).
    func clearUnlisted(at instant: UTCInstant) throws -> Int {
        try PollTransitionLog.clearing(at: instant, source: poll.source, runID: runID, connection: connection)
        // The `listed` keys of the same rows (the poll's lock keeps them the same) (PostgresCounts).
        try connection.query("""
            INSERT INTO poll_count_changes
            SELECT * FROM (\(PostgresCounts.keys(of: "(SELECT * FROM incidents WHERE \(Self.unlisted)) x", sign: -1))) k
            WHERE dimension = 'listed'
            """, named: unlistedArguments(at: instant), context: "counting the incidents \(poll.source) no longer lists")
        return try connection.query("""
            UPDATE incidents SET cleared_at = :at WHERE \(Self.unlisted)
            """, named: unlistedArguments(at: instant),
            context: "clearing the incidents \(poll.source) no longer lists").affectedRows
    }

    /// Applies this poll's changes of `incident_counts` (``PostgresCounts``), once its clears and
    /// its history's clears (``PollTransitionLog``) are staged: in one statement, which locks
    /// only this source's keys.
    func applyCountChanges() throws {
        try PostgresCounts.apply("SELECT * FROM poll_count_changes", connection: connection,
                                 context: "counting the incidents of \(poll.source)")
    }

    /// The active incidents of `:source` that the run `:run_id` did not list and no poll saw at or after `:at`.
    private static let unlisted = "source = :source AND cleared_at IS NULL AND last_seen_run_id <> :run_id AND last_seen_at < :at"

    private func unlistedArguments(at instant: UTCInstant) -> [String: PostgresValue] {
        ["at": .instant(instant), "source": .text(poll.source), "run_id": .integer(runID)]
    }

    /// The active incidents of the source this poll did not list and no poll saw at or after it.
    func unlistedActive() throws -> Int {
        try connection.query("""
            SELECT count(*) FROM incidents WHERE \(Self.unlisted)
            """, named: unlistedArguments(at: poll.observedAt),
            context: "counting the incidents \(poll.source) does not list").int(0, 0) ?? 0
    }

    /// The active incidents of the source this poll did not list that a poll saw at or after
    /// it, and the latest time one was seen: read from the source's active set (0014), as the clears.
    func listedLater() throws -> (count: Int, lastSeen: UTCInstant)? {
        let result = try connection.query("""
            SELECT count(*), max(last_seen_at) FROM incidents
            WHERE source = :source AND cleared_at IS NULL AND last_seen_run_id <> :run_id AND last_seen_at >= :at
            """, named: unlistedArguments(at: poll.observedAt),
            context: "counting the incidents \(poll.source) does not list that a later poll listed")
        guard let count = result.int(0, 0), count > 0, let lastSeen = result.instant(0, 1) else { return nil }
        return (count, lastSeen)
    }

    /// When the source's previous complete poll (`succeeded`) was fetched, before this one.
    func previousCompleteObservation() throws -> UTCInstant? {
        try connection.query("""
            SELECT max(observed_at) FROM ingest_runs WHERE source = :source AND status = 'succeeded' AND id <> :run_id AND observed_at < :observed_at
            """, named: ["source": .text(poll.source), "run_id": .integer(runID), "observed_at": .instant(poll.observedAt)],
            context: "reading the previous complete poll of \(poll.source)").instant(0, 0)
    }
}
