import IncidentCore

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

/// What the metrics file reports for one source, read from `ingest_runs`.
public struct SourceRunSummary: Equatable, Sendable {
    public var source: String
    /// The most recent run of any status.
    public var lastRun: IngestRun
    /// When the most recent successful run finished; nil when none succeeded.
    public var lastSuccessAt: UTCInstant?
    /// Failed or cancelled runs since the last success (skipped runs do not count).
    public var consecutiveFailures: Int
}

extension SQLiteIncidentStore {
    /// One summary per source that has runs, by source name, read in one snapshot.
    public func runSummaries() throws -> [SourceRunSummary] {
        try withDatabase { db in
            try db.readTransaction {
                let last = try db.prepare("""
                    SELECT \(RunRow.columns) FROM ingest_runs
                    WHERE id IN (SELECT max(id) FROM ingest_runs GROUP BY source) ORDER BY source
                    """)
                var summaries: [SourceRunSummary] = []
                while try last.step() {
                    let run = RunRow.decode(last)
                    summaries.append(SourceRunSummary(source: run.source, lastRun: run, lastSuccessAt: nil, consecutiveFailures: 0))
                }
                let details = try db.prepare("""
                    SELECT (SELECT max(finished_at) FROM ingest_runs WHERE source = ?1 AND status = 'succeeded'),
                           (SELECT count(*) FROM ingest_runs WHERE source = ?1 AND status IN ('failed', 'cancelled')
                              AND id > coalesce((SELECT max(id) FROM ingest_runs WHERE source = ?1 AND status = 'succeeded'), 0))
                    """)
                for index in summaries.indices {
                    details.reset()
                    try details.bind(summaries[index].source, at: 1)
                    _ = try details.step()
                    summaries[index].lastSuccessAt = details.string(at: 0).flatMap { UTCInstant(rfc3339: $0) }
                    summaries[index].consecutiveFailures = details.int(at: 1) ?? 0
                }
                return summaries
            }
        }
    }
}

extension SQLiteIncidentStore {
    /// Each source's quota back-off, by source name (only sources that were ever exhausted).
    public func quotaStates() throws -> [String: UTCInstant] {
        try withDatabase { db in
            let statement = try db.prepare("SELECT source, exhausted_until FROM source_state WHERE exhausted_until IS NOT NULL")
            var states: [String: UTCInstant] = [:]
            while try statement.step() {
                if let source = statement.string(at: 0), let until = statement.string(at: 1).flatMap({ UTCInstant(rfc3339: $0) }) {
                    states[source] = until
                }
            }
            return states
        }
    }

    /// Lets an exhausted source run again at once (the operator knows the quota was raised or
    /// reset). Returns whether the source was exhausted.
    @discardableResult
    public func clearQuota(source: String) throws -> Bool {
        try withDatabase { db in
            try db.writeTransaction {
                let statement = try db.prepare("UPDATE source_state SET exhausted_until = NULL WHERE source = ? AND exhausted_until IS NOT NULL")
                try statement.bind(source, at: 1)
                try statement.run()
                return db.changes == 1
            }
        }
    }
}
