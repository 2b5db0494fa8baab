import IncidentCore

/// The SQLite store read whole for a copy into another store (``StoreExport``), each table in
/// one read transaction, row by row.
extension SQLiteStore: StoreExport {
    public func exportCounts() throws -> StoreCounts {
        try withDatabase { db in
            try db.readTransaction {
                func count(_ table: String) throws -> Int { Int(try db.scalarInt("SELECT count(*) FROM \(table)") ?? 0) }
                return StoreCounts(incidents: try count("incidents"), revisions: try count("incident_revisions"),
                                   runs: try count("ingest_runs"), rejectedRecords: try count("rejected_records"),
                                   quotaStates: try count("source_state"))
            }
        }
    }

    public func exportIncidents(_ row: (IncidentRecord) throws -> Void) throws {
        try withDatabase { db in
            try db.readTransaction {
                let statement = try db.prepare("""
                    SELECT \(Self.lifecycleColumns), \(columns.list), content_hash, first_seen_run_id, last_seen_run_id
                    FROM incidents ORDER BY id
                    """)
                let decode = try StoredRow(statement, columns: columns)
                let (hash, first, last) = (try statement.column("content_hash"), try statement.column("first_seen_run_id"),
                                           try statement.column("last_seen_run_id"))
                while try statement.step() {
                    try row(IncidentRecord(stored: decode.stored(statement), contentHash: statement.int64(at: hash) ?? 0,
                                           firstSeenRunID: statement.int64(at: first) ?? 0, lastSeenRunID: statement.int64(at: last) ?? 0))
                }
            }
        }
    }

    public func exportRevisions(_ row: (RevisionRecord) throws -> Void) throws {
        try withDatabase { db in
            try db.readTransaction {
                let statement = try db.prepare("""
                    SELECT r.incident_id, i.source, i.external_id, r.revision, \(columns.names.map { "r." + $0 }.joined(separator: ", ")),
                           r.content_hash, r.cleared_at, r.superseded_at
                    FROM incident_revisions r JOIN incidents i ON i.id = r.incident_id ORDER BY r.incident_id, r.revision
                    """)
                let decoder = try columns.decoder(for: statement)
                let (id, source, externalID, revision, hash, cleared, superseded) = (
                    try statement.column("incident_id"), try statement.column("source"), try statement.column("external_id"),
                    try statement.column("revision"), try statement.column("content_hash"), try statement.column("cleared_at"),
                    try statement.column("superseded_at"))
                while try statement.step() {
                    let incident = Incident(source: statement.string(at: source) ?? "", externalID: statement.string(at: externalID) ?? "",
                                            values: decoder.values(statement), fields: columns.fields)
                    try row(RevisionRecord(
                        incidentID: statement.int64(at: id) ?? 0,
                        revision: IncidentRevision(revision: statement.int(at: revision) ?? 0, incident: incident,
                                                   clearedAt: statement.instant(at: cleared),
                                                   supersededAt: statement.instant(at: superseded) ?? UTCInstant(secondsSince1970: 0)),
                        contentHash: statement.int64(at: hash) ?? 0))
                }
            }
        }
    }

    public func exportRuns(_ row: (IngestRun) throws -> Void) throws {
        try withDatabase { db in
            try db.readTransaction {
                try db.query("SELECT \(RunRow.columns) FROM ingest_runs ORDER BY id") { try row(try RunRow.decode($0)) }
            }
        }
    }

    public func exportRejections(_ row: (RejectionRecord) throws -> Void) throws {
        try withDatabase { db in
            try db.readTransaction {
                try db.query("SELECT id, \(RejectionRow.columns) FROM rejected_records ORDER BY id") { statement in
                    try row(RejectionRecord(id: statement.int64(at: 0) ?? 0, rejection: try RejectionRow.decode(statement)))
                }
            }
        }
    }

    public func exportQuotaStates() throws -> [QuotaState] {
        try withDatabase { db in
            var states: [QuotaState] = []
            try db.query("SELECT source, exhausted_until, exhausted_reason, updated_at, published_at FROM source_state ORDER BY source") { row in
                states.append(QuotaState(source: row.string(at: 0) ?? "", exhaustedUntil: row.instant(at: 1), reason: row.string(at: 2),
                                         updatedAt: row.instant(at: 3) ?? UTCInstant(secondsSince1970: 0), publishedAt: row.instant(at: 4)))
            }
            return states
        }
    }
}
