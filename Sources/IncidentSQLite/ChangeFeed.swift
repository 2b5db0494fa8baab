import IncidentCore

extension SQLiteStore: ChangeFeedReader {
    /// Reads in one snapshot. One writer commits at a time, in `id` order, so `id > cursor`
    /// misses nothing that commits later.
    public func changes(after cursor: Int64, limit: Int) throws -> [IncidentChange] {
        try withDatabase { db in
            try db.readTransaction {
                var transitions: [IncidentTransition] = []
                try db.query("""
                    SELECT id, kind, source, external_id, incident_id, fields, at, run_id FROM incident_transitions
                    WHERE id > :after ORDER BY id LIMIT :limit
                    """, ["after": .integer(cursor), "limit": .integer(Int64(max(0, limit)))]) { s in
                    if let transition = IncidentTransition(
                        cursor: s.int64(at: 0) ?? 0, kind: s.string(at: 1) ?? "", source: s.string(at: 2) ?? "",
                        externalID: s.string(at: 3), incidentID: s.int64(at: 4), fields: s.string(at: 5), at: s.instant(at: 6),
                        runID: s.int64(at: 7)) { transitions.append(transition) }
                }
                var incidents: [Int64: StoredIncident] = [:]
                let rows = try db.prepare("""
                    SELECT \(Self.lifecycleColumns), \(columns.list) FROM incidents
                    WHERE id IN (\(IncidentTransition.sqlList(Set(transitions.compactMap(\.incidentID)))))
                    """)
                let decode = try StoredRow(rows, columns: columns)
                while try rows.step() {
                    let stored = decode.stored(rows)
                    incidents[stored.id] = stored
                }
                var runs: [Int64: IngestRun] = [:]
                try db.query("""
                    SELECT \(RunRow.columns) FROM ingest_runs WHERE id IN (\(IncidentTransition.sqlList(Set(transitions.compactMap(\.runID)))))
                    """) { s in
                    let run = try RunRow.decode(s)
                    if let id = run.id { runs[id] = run }
                }
                return IncidentChange.assemble(transitions, incidents: incidents, runs: runs)
            }
        }
    }

    public func sourcesAsOf(_ instant: UTCInstant) throws -> [SourceAsOf] {
        try withDatabase { db in
            var runs: [IngestRun] = []
            try db.query("""
                WITH sources AS (SELECT DISTINCT source FROM ingest_runs)
                SELECT \(RunRow.columns) FROM ingest_runs WHERE id IN (\(SourceAsOf.lastRunIDs(at: ":at")))
                """, ["at": .text(instant.rfc3339)]) { runs.append(try RunRow.decode($0)) }
            return SourceAsOf.grouping(runs, at: instant)
        }
    }

    public func lastCursor() throws -> Int64 {
        // AUTOINCREMENT's counter, not max(id): a pruned last transition's cursor was given out too.
        try withDatabase { db in
            try db.scalarInt("SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'incident_transitions'), 0)") ?? 0
        }
    }
}

extension SQLiteStore {
    public func forEachLifecycleEntry(through instant: UTCInstant,
                                      _ entry: (Int64, TransitionKind, UTCInstant) throws -> Void) throws {
        try withDatabase { db in
            try db.readTransaction {
                try db.query("""
                    SELECT incident_id, kind, at FROM incident_transitions
                    WHERE incident_id IS NOT NULL AND kind IN ('appeared', 'reopened', 'cleared') AND at <= :at
                    ORDER BY incident_id, at, id
                    """, ["at": .text(instant.rfc3339)]) { s in
                    if let id = s.int64(at: 0), let kind = s.string(at: 1).flatMap(TransitionKind.init), let at = s.instant(at: 2) {
                        try entry(id, kind, at)
                    }
                }
            }
        }
    }
}
