import IncidentCore

extension SQLiteIncidentStore {
    /// The most recent run of each source, by source name.
    public func lastRuns() throws -> [String: IngestRun] {
        try withDatabase { db in
            let statement = try db.prepare("""
                SELECT \(RunRow.columns) FROM ingest_runs
                WHERE id IN (SELECT max(id) FROM ingest_runs GROUP BY source)
                """)
            var runs: [String: IngestRun] = [:]
            while try statement.step() {
                let run = RunRow.decode(statement)
                runs[run.source] = run
            }
            return runs
        }
    }
}

enum RunRow {
    static let columns = "id, source, started_at, finished_at, status, fetched, inserted, updated, unchanged, reopened, cleared, error"

    static func decode(_ s: Statement) -> IngestRun {
        let started = s.string(at: 2).flatMap { UTCInstant(rfc3339: $0) } ?? UTCInstant(secondsSince1970: 0)
        return IngestRun(
            id: s.int64(at: 0), source: s.string(at: 1) ?? "", startedAt: started,
            finishedAt: s.string(at: 3).flatMap { UTCInstant(rfc3339: $0) } ?? started,
            status: RunStatus(rawValue: s.string(at: 4) ?? "") ?? .failed,
            counts: IngestCounts(fetched: s.int(at: 5) ?? 0, inserted: s.int(at: 6) ?? 0, updated: s.int(at: 7) ?? 0,
                                 unchanged: s.int(at: 8) ?? 0, reopened: s.int(at: 9) ?? 0, cleared: s.int(at: 10) ?? 0),
            error: s.string(at: 11))
    }
}
