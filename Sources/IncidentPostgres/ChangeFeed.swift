import IncidentCore

extension PostgresStore: ChangeFeedReader {
    /// Reads in one snapshot. Cursors are handed out in commit order (``PollTransitionLog``), so
    /// `cursor > after` misses nothing that commits later.
    public func changes(after cursor: Int64, limit: Int) throws -> [IncidentChange] {
        try withConnection { connection in
            try connection.transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", context: "reading the change feed") {
                let context = "reading the change feed"
                let result = try connection.query("""
                    SELECT cursor, kind, source, external_id, incident_id, fields, at, run_id FROM incident_transitions
                    WHERE cursor > :after ORDER BY cursor LIMIT :limit
                    """, named: ["after": .integer(cursor), "limit": .integer(Int64(max(0, limit)))], context: context)
                let transitions = (0..<result.rowCount).compactMap { row in
                    IncidentTransition(cursor: result.int64(row, 0) ?? 0, kind: result.string(row, 1) ?? "",
                                       source: result.string(row, 2) ?? "", externalID: result.string(row, 3),
                                       incidentID: result.int64(row, 4), fields: result.string(row, 5),
                                       at: result.instant(row, 6), runID: result.int64(row, 7))
                }
                let rows = try connection.query("""
                    SELECT \(StoredIncidentDecoder.lifecycleColumns), \(columns.list()) FROM incidents
                    WHERE id IN (\(IncidentTransition.sqlList(Set(transitions.compactMap(\.incidentID)))))
                    """, context: context)
                let decode = try StoredIncidentDecoder(rows, columns: columns)
                let incidents = Dictionary((0..<rows.rowCount).map { decode.stored(rows, $0) }.map { ($0.id, $0) },
                                           uniquingKeysWith: { first, _ in first })
                let runRows = try connection.query("""
                    SELECT \(RunRows.columns) FROM ingest_runs WHERE id IN (\(IncidentTransition.sqlList(Set(transitions.compactMap(\.runID)))))
                    """, context: context)
                var runs: [Int64: IngestRun] = [:]
                for row in 0..<runRows.rowCount {
                    let run = try RunRows.decode(runRows, row)
                    if let id = run.id { runs[id] = run }
                }
                return IncidentChange.assemble(transitions, incidents: incidents, runs: runs)
            }
        }
    }

    public func sourcesAsOf(_ instant: UTCInstant) throws -> [SourceAsOf] {
        try withConnection { connection in
            let result = try connection.query("""
                WITH sources AS (SELECT DISTINCT source FROM ingest_runs)
                SELECT \(RunRows.columns) FROM ingest_runs WHERE id IN (\(SourceAsOf.lastRunIDs(at: ":at")))
                """, named: ["at": .instant(instant)], context: "reading the runs of each source before \(instant.rfc3339)")
            return SourceAsOf.grouping(try (0..<result.rowCount).map { try RunRows.decode(result, $0) }, at: instant)
        }
    }

    public func lastCursor() throws -> Int64 {
        try withConnection { connection in
            try connection.query("SELECT last_cursor FROM change_feed", context: "reading the change feed's cursor").int64(0, 0) ?? 0
        }
    }
}

extension PostgresStore {
    public func forEachLifecycleEntry(through instant: UTCInstant,
                                      _ entry: (Int64, TransitionKind, UTCInstant) throws -> Void) throws {
        try withConnection { connection in
            try connection.forEachRow("""
                SELECT incident_id, kind, at FROM incident_transitions
                WHERE incident_id IS NOT NULL AND kind IN ('appeared', 'reopened', 'cleared') AND at <= :through
                ORDER BY incident_id, at, cursor
                """, named: ["through": .instant(instant)], context: "reading the transition log") { result, row in
                if let id = result.int64(row, 0), let kind = result.string(row, 1).flatMap(TransitionKind.init),
                   let at = result.instant(row, 2) {
                    try entry(id, kind, at)
                }
            }
        }
    }
}
