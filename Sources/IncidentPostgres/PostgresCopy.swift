import IncidentCore

/// Why a copy into PostgreSQL was refused or undone. Nothing of a failed copy remains.
public enum StoreCopyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The target already holds incidents or runs.
    case targetNotEmpty(StoreCounts)
    /// The rows in PostgreSQL after the copy do not match the source's counts (the source
    /// changed during the copy, or rows were lost).
    case countMismatch(source: StoreCounts, copied: StoreCounts)

    public var description: String {
        switch self {
        case .targetNotEmpty(let counts):
            "the PostgreSQL database is not empty (\(counts)); copy into a new, empty database"
        case let .countMismatch(source, copied):
            "the copy was undone: the source has \(source) but PostgreSQL received \(copied); "
                + "stop every scheduler writing to the source and copy again"
        }
    }
}

extension PostgresStore {
    /// Copies every incident, revision, run, quarantined record and quota state of `source`
    /// (an SQLite store, usually) into this store, which must be empty, in one transaction
    /// with `COPY`, keeping every row id; then sets the id sequences past the copied ids and
    /// verifies the counts of every table against the source's. Memory does not depend on the
    /// number of rows.
    /// - Returns: the counts copied.
    /// - Throws: ``StoreCopyError`` (the transaction is rolled back), the stores' errors.
    public func copy(from source: any StoreExport) throws -> StoreCounts {
        try withConnection { connection in
            // No time limits: one COPY may take longer than any limit on a large database, and
            // nothing else waits for this one (the target is new and empty).
            try connection.transaction(context: "copying into \(location)", timeouts: PostgresTimeouts.none) {
                let before = try Self.counts(connection)
                guard before == StoreCounts() else { throw StoreCopyError.targetNotEmpty(before) }
                var streamed = StoreCounts()
                try connection.copyIn("COPY ingest_runs (id, \(RunRows.valueColumns)) FROM STDIN", context: "copying the run log") { writer in
                    try source.exportRuns { run in
                        writer.integer(run.id ?? 0)
                        for (_, value) in RunRows.values(run) { try writer.value(value, row: "run \(run.id ?? 0)") }
                        try writer.endRow()
                        streamed.runs += 1
                    }
                }
                try Self.withIndexesBuiltAfter(["incidents", "incident_revisions"], connection) {
                    try connection.copyIn("""
                        COPY incidents (\(StoredIncidentDecoder.lifecycleColumns), \(columns.list()), content_hash, first_seen_run_id, last_seen_run_id)
                        FROM STDIN
                        """, context: "copying the incidents") { writer in
                        try source.exportIncidents { record in
                            let stored = record.stored
                            writer.integer(stored.id)
                            let row = "incident \(stored.id)"
                            try writer.value(.text(stored.incident.source), row: row)
                            try writer.value(.text(stored.incident.externalID), row: row)
                            writer.integer(Int64(stored.revision))
                            writer.instant(stored.firstSeenAt)
                            writer.instant(stored.lastSeenAt)
                            writer.optionalInstant(stored.clearedAt)
                            try writer.check(columns.copy(columns.values(of: stored.incident).values, to: writer), row: row)
                            writer.integer(record.contentHash)
                            writer.integer(record.firstSeenRunID)
                            writer.integer(record.lastSeenRunID)
                            try writer.endRow()
                            streamed.incidents += 1
                        }
                    }
                    try connection.copyIn("""
                        COPY incident_revisions (incident_id, revision, \(columns.list()), content_hash, cleared_at, superseded_at) FROM STDIN
                        """, context: "copying the revisions") { writer in
                        try source.exportRevisions { record in
                            writer.integer(record.incidentID)
                            writer.integer(Int64(record.revision.revision))
                            try writer.check(columns.copy(columns.values(of: record.revision.incident).values, to: writer),
                                             row: "revision \(record.revision.revision) of incident \(record.incidentID)")
                            writer.integer(record.contentHash)
                            writer.optionalInstant(record.revision.clearedAt)
                            writer.instant(record.revision.supersededAt)
                            try writer.endRow()
                            streamed.revisions += 1
                        }
                    }
                }
                try connection.copyIn("""
                    COPY rejected_records (id, run_id, source, external_id, position, reason, excerpt, rejected_at) FROM STDIN
                    """, context: "copying the records set aside") { writer in
                    try source.exportRejections { record in
                        let rejection = record.rejection
                        writer.integer(record.id)
                        writer.integer(rejection.runID)
                        let row = "rejected record \(record.id)"
                        for text in [rejection.source, rejection.record.externalID, rejection.record.position, rejection.record.reason,
                                     rejection.record.excerpt] {
                            try writer.value(.optional(text), row: row)
                        }
                        writer.instant(rejection.rejectedAt)
                        try writer.endRow()
                        streamed.rejectedRecords += 1
                    }
                }
                for state in try source.exportQuotaStates() {
                    try connection.query("""
                        INSERT INTO source_state (source, exhausted_until, exhausted_reason, updated_at, published_at)
                        VALUES (:source, :exhausted_until, :exhausted_reason, :updated_at, :published_at)
                        """, named: ["source": .text(state.source), "exhausted_until": .optional(state.exhaustedUntil),
                                     "exhausted_reason": .optional(state.reason), "updated_at": .instant(state.updatedAt),
                                     "published_at": .optional(state.publishedAt)],
                        context: "copying the quota state of \(state.source)")
                    streamed.quotaStates += 1
                }
                try connection.execute("""
                    SELECT setval(pg_get_serial_sequence('ingest_runs', 'id'), coalesce((SELECT max(id) FROM ingest_runs), 0) + 1, false);
                    SELECT setval(pg_get_serial_sequence('incidents', 'id'), coalesce((SELECT max(id) FROM incidents), 0) + 1, false);
                    SELECT setval(pg_get_serial_sequence('rejected_records', 'id'), coalesce((SELECT max(id) FROM rejected_records), 0) + 1, false);
                    """, context: "moving the id sequences past the copied ids")
                try PollTransitionLog.rebuild(connection: connection)
                try PostgresCounts.recount(connection: connection)
                let expected = try source.exportCounts()
                let copied = try Self.counts(connection)
                guard copied == expected, streamed == expected else { throw StoreCopyError.countMismatch(source: expected, copied: copied) }
                return copied
            }
        }
    }

    /// Drops the indexes of `tables` that no constraint owns, runs `body` (which loads the
    /// tables), then creates each again from its own definition (`pg_get_indexdef`). Building
    /// an index over the loaded rows at once is much faster than keeping it row by row during
    /// `COPY` (incidents has four trigram GIN indexes and a GiST one). In the caller's
    /// transaction: a copy that fails leaves them as they were.
    static func withIndexesBuiltAfter(_ tables: [String], _ connection: Connection, _ body: () throws -> Void) throws {
        let context = "building the indexes after the copy"
        let indexes = try connection.query("""
            SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid) FROM pg_index i
            WHERE i.indrelid IN (\(tables.map { "'\($0)'::regclass" }.joined(separator: ", ")))
              AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)
            ORDER BY 1
            """, context: context)
        let definitions = (0..<indexes.rowCount).compactMap { row in
            indexes.string(row, 0).flatMap { name in indexes.string(row, 1).map { (name, $0) } }
        }
        if !definitions.isEmpty {
            _ = try connection.execute("DROP INDEX " + definitions.map(\.0).joined(separator: ", "), context: context)
        }
        try body()
        // The GIN and GiST builds take their memory from here (PostgreSQL's default is 64 MB).
        _ = try connection.execute("SET LOCAL maintenance_work_mem = '256MB'", context: context)
        for (_, definition) in definitions { _ = try connection.execute(definition, context: context) }
    }

    static func counts(_ connection: Connection) throws -> StoreCounts {
        let result = try connection.query("""
            SELECT (SELECT count(*) FROM incidents), (SELECT count(*) FROM incident_revisions), (SELECT count(*) FROM ingest_runs),
                   (SELECT count(*) FROM rejected_records), (SELECT count(*) FROM source_state)
            """, context: "counting rows")
        return StoreCounts(incidents: result.int(0, 0) ?? 0, revisions: result.int(0, 1) ?? 0, runs: result.int(0, 2) ?? 0,
                           rejectedRecords: result.int(0, 3) ?? 0, quotaStates: result.int(0, 4) ?? 0)
    }
}

extension CopyWriter {
    /// Writes a value as a COPY field.
    /// - Throws: ``PostgresError`` naming `row` when a text holds U+0000.
    func value(_ value: PostgresValue, row: String) throws {
        switch value {
        case .null: null()
        case .text(let text): try check(self.text(text), row: row)
        case .integer(let integer): self.integer(integer)
        case .real(let real): self.real(real)
        case .instant(let instant): self.instant(instant)
        }
    }

    func check(_ written: Bool, row: String) throws {
        guard written else {
            throw PostgresError(message: "\(row) holds the character U+0000 in a text, which PostgreSQL cannot store; "
                                + "remove it from the source database and copy again", context: "copying")
        }
    }
}

// MARK: - StoreExport

extension PostgresStore: StoreExport {
    public func exportCounts() throws -> StoreCounts {
        try withConnection { try Self.counts($0) }
    }

    public func exportIncidents(_ row: (IncidentRecord) throws -> Void) throws {
        try withConnection { connection in
            var decoder: StoredIncidentDecoder?
            try connection.forEachRow("""
                SELECT \(StoredIncidentDecoder.lifecycleColumns), \(columns.list()), content_hash, first_seen_run_id, last_seen_run_id
                FROM incidents ORDER BY id
                """, context: "exporting incidents") { result, index in
                let decode = try decoder ?? StoredIncidentDecoder(result, columns: columns)
                decoder = decode
                // The last three columns, after the lifecycle and content ones.
                let hash = Int32(7 + columns.names.count)
                try row(IncidentRecord(stored: decode.stored(result, index), contentHash: result.int64(index, hash) ?? 0,
                                       firstSeenRunID: result.int64(index, hash + 1) ?? 0, lastSeenRunID: result.int64(index, hash + 2) ?? 0))
            }
        }
    }

    public func exportRevisions(_ row: (RevisionRecord) throws -> Void) throws {
        try withConnection { connection in
            var decoder: PostgresColumns.Decoder?
            try connection.forEachRow("""
                SELECT r.incident_id, i.source, i.external_id, r.revision, \(columns.list("r.")), r.content_hash, r.cleared_at, r.superseded_at
                FROM incident_revisions r JOIN incidents i ON i.id = r.incident_id ORDER BY r.incident_id, r.revision
                """, context: "exporting revisions") { r, index in
                let decode = try decoder ?? columns.decoder(for: r)
                decoder = decode
                // After the content columns: content_hash, cleared_at, superseded_at.
                let hash = Int32(4 + columns.names.count)
                let incident = Incident(source: r.string(index, 1) ?? "", externalID: r.string(index, 2) ?? "", values: decode.values(r, index),
                                        fields: columns.fields)
                try row(RevisionRecord(
                    incidentID: r.int64(index, 0) ?? 0,
                    revision: IncidentRevision(revision: r.int(index, 3) ?? 0, incident: incident, clearedAt: r.instant(index, hash + 1),
                                               supersededAt: r.instant(index, hash + 2) ?? UTCInstant(secondsSince1970: 0)),
                    contentHash: r.int64(index, hash) ?? 0))
            }
        }
    }

    public func exportRuns(_ row: (IngestRun) throws -> Void) throws {
        try withConnection { connection in
            try connection.forEachRow("SELECT \(RunRows.columns) FROM ingest_runs ORDER BY id", context: "exporting runs") {
                try row(try RunRows.decode($0, $1))
            }
        }
    }

    public func exportRejections(_ row: (RejectionRecord) throws -> Void) throws {
        try withConnection { connection in
            try connection.forEachRow("SELECT \(RejectionRows.columns) FROM rejected_records ORDER BY id", context: "exporting rejected records") {
                try row(RejectionRecord(id: $0.int64($1, 0) ?? 0, rejection: try RejectionRows.decode($0, $1)))
            }
        }
    }

    public func exportQuotaStates() throws -> [QuotaState] {
        try withConnection { connection in
            let r = try connection.query("SELECT source, exhausted_until, exhausted_reason, updated_at, published_at FROM source_state ORDER BY source",
                                         context: "exporting quota states")
            return (0..<r.rowCount).map {
                QuotaState(source: r.string($0, 0) ?? "", exhaustedUntil: r.instant($0, 1), reason: r.string($0, 2),
                           updatedAt: r.instant($0, 3) ?? UTCInstant(secondsSince1970: 0), publishedAt: r.instant($0, 4))
            }
        }
    }
}
