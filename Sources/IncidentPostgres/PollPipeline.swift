import IncidentCore

/// The other bulk path, measured against ``PollStaging``: one prepared guarded upsert per record
/// (SQLite's statement: insert, or touch an unchanged incident), sent in libpq's pipeline mode
/// so that no record waits for the one before; every `window` records the pipeline is synced
/// and the records the guard refused take the slow path one by one, as in SQLite's PollWriter.
final class PollPipeline: PollSink {
    private let connection: Connection
    private let columns: PostgresColumns
    private let poll: PollContext
    private let runID: Int64
    private var pending: [Incident] = []
    private let window = 1000
    private(set) var counts = IngestCounts()
    private(set) var rejectedWithoutID = 0
    private(set) var older = 0
    private let context: String

    init(connection: Connection, columns: PostgresColumns, poll: PollContext, runID: Int64) throws {
        self.connection = connection
        self.columns = columns
        self.poll = poll
        self.runID = runID
        context = "storing the records of \(poll.source)"
        let parameters = (0..<columns.names.count).map { "$\($0 + 6)" }.joined(separator: ", ")
        try connection.prepareOnce("incident_upsert", """
            INSERT INTO incidents AS i (source, external_id, content_hash, first_seen_at, last_seen_at, first_seen_run_id, last_seen_run_id,
                                        revision, \(columns.list()))
            VALUES ($1, $2, $3, $4, $4, $5, $5, 1, \(parameters))
            ON CONFLICT (source, external_id) DO UPDATE
                SET last_seen_at = greatest(i.last_seen_at, excluded.last_seen_at), first_seen_at = least(i.first_seen_at, excluded.first_seen_at),
                    last_seen_run_id = excluded.last_seen_run_id
                WHERE i.content_hash = excluded.content_hash AND i.cleared_at IS NULL AND i.last_seen_run_id <> excluded.last_seen_run_id
            RETURNING (xmax = 0) AS inserted
            """, context: context)
        try connection.enterPipeline(context: context)
    }

    func upsert(_ incident: Incident) throws {
        counts.fetched += 1
        let (values, hash) = columns.values(of: incident)
        let parameters: [PostgresValue] = [.text(poll.source), .text(incident.externalID), .integer(hash), .instant(poll.observedAt),
                                           .integer(runID)] + columns.parameters(values)
        try connection.sendPrepared("incident_upsert", parameters, context: context)
        pending.append(incident)
        if pending.count >= window { try flush() }
    }

    /// Syncs the pipeline, counts what the upserts did, and runs the slow path for the refused.
    func flush() throws {
        guard !pending.isEmpty else { return }
        try connection.pipelineSync(context: context)
        var refused: [Incident] = []
        for incident in pending {
            guard let result = try connection.nextPipelineResult(context: context) else { break }
            if result.rowCount == 1 {
                if result.bool(0, 0) == true { counts.inserted += 1 } else { counts.unchanged += 1 }
            } else {
                refused.append(incident)
            }
        }
        _ = try connection.nextPipelineResult(context: context)  // the sync point
        pending.removeAll(keepingCapacity: true)
        guard !refused.isEmpty else { return }
        try connection.exitPipeline(context: context)
        for incident in refused { try slowPath(incident) }
        try connection.enterPipeline(context: context)
    }

    func finish() throws {
        try flush()
        try connection.exitPipeline(context: context)
    }

    private func slowPath(_ incident: Incident) throws {
        let row = try connection.query("""
            SELECT id, cleared_at IS NOT NULL, last_seen_run_id, $3::timestamptz < greatest(last_seen_at, cleared_at)
            FROM incidents WHERE source = $1 AND external_id = $2
            """, [.text(poll.source), .text(incident.externalID), .instant(poll.observedAt)], context: context)
        guard let id = row.int64(0, 0) else { throw PostgresError(message: "incident \(incident.externalID) vanished", context: context) }
        if row.int64(0, 2) == runID {
            counts.duplicates += 1
            return
        }
        if row.bool(0, 3) == true {
            older += 1
            try connection.query("UPDATE incidents SET first_seen_at = least(first_seen_at, $1), last_seen_run_id = $2 WHERE id = $3",
                                 [.instant(poll.observedAt), .integer(runID), .integer(id)], context: context)
            return
        }
        try connection.query("""
            INSERT INTO incident_revisions (incident_id, revision, \(columns.list()), content_hash, cleared_at, superseded_at)
            SELECT id, revision, \(columns.list()), content_hash, cleared_at, $1 FROM incidents WHERE id = $2
            """, [.instant(poll.observedAt), .integer(id)], context: context)
        let (values, hash) = columns.values(of: incident)
        let parameters: [PostgresValue] = [.integer(hash), .instant(poll.observedAt), .integer(runID), .integer(id)] + columns.parameters(values)
        let assignments = columns.names.enumerated().map { "\($1) = $\($0 + 5)" }.joined(separator: ", ")
        try connection.query("""
            UPDATE incidents SET \(assignments), content_hash = $1, revision = revision + 1, last_seen_at = greatest(last_seen_at, $2),
                first_seen_at = least(first_seen_at, $2), last_seen_run_id = $3, cleared_at = NULL WHERE id = $4
            """, parameters, context: context)
        if row.bool(0, 1) == true { counts.reopened += 1 } else { counts.updated += 1 }
    }

    func reject(_ record: RejectedRecord) throws {
        try flush()
        try connection.exitPipeline(context: context)
        counts.fetched += 1
        counts.rejected += 1
        if record.externalID == nil { rejectedWithoutID += 1 }
        try connection.query("""
            INSERT INTO rejected_records (run_id, source, external_id, position, reason, excerpt, rejected_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
            """, [.integer(runID), .text(poll.source), .optional(record.externalID), .text(record.position), .text(record.reason),
                  .optional(record.excerpt), .instant(poll.observedAt)], context: context)
        if let externalID = record.externalID {
            try connection.query("UPDATE incidents SET last_seen_run_id = $1 WHERE source = $2 AND external_id = $3",
                                 [.integer(runID), .text(poll.source), .text(externalID)], context: context)
        }
        try connection.enterPipeline(context: context)
    }
}
