import IncidentCore

/// What a prune removed.
public struct PruneCounts: Equatable, Sendable {
    public var incidents = 0
    public var revisions = 0
    public var runs = 0

    public init(incidents: Int = 0, revisions: Int = 0, runs: Int = 0) {
        self.incidents = incidents
        self.revisions = revisions
        self.runs = runs
    }
}

extension SQLiteIncidentStore {
    /// Deletes what is older than `horizon`: incidents cleared before it (with their revisions)
    /// and runs finished before it, except each source's latest run. Works in batches of
    /// `batchSize` rows, each its own short transaction, so an ingest or a reader never waits
    /// long behind a large prune.
    public func prune(before horizon: UTCInstant, batchSize: Int = 1000) throws -> PruneCounts {
        var counts = PruneCounts()
        let cutoff = horizon.rfc3339
        while true {
            let (incidents, revisions) = try withDatabase { db in
                try db.writeTransaction { () throws -> (Int, Int) in
                    // One batch of ids, then both deletes by exactly those ids (json_each is
                    // built into SQLite since 3.38).
                    let select = try db.prepare(
                        "SELECT json_group_array(id) FROM (SELECT id FROM incidents WHERE cleared_at IS NOT NULL AND cleared_at < ? LIMIT ?)")
                    try select.bind(cutoff, at: 1)
                    try select.bind(batchSize, at: 2)
                    guard try select.step(), let ids = select.string(at: 0), ids != "[]" else { return (0, 0) }
                    let revisions = try db.prepare("DELETE FROM incident_revisions WHERE incident_id IN (SELECT value FROM json_each(?))")
                    try revisions.bind(ids, at: 1)
                    try revisions.run()
                    let removedRevisions = db.changes
                    let incidents = try db.prepare("DELETE FROM incidents WHERE id IN (SELECT value FROM json_each(?))")
                    try incidents.bind(ids, at: 1)
                    try incidents.run()
                    return (db.changes, removedRevisions)
                }
            }
            counts.incidents += incidents
            counts.revisions += revisions
            if incidents < batchSize { break }
        }
        while true {
            let runs = try withDatabase { db in
                try db.writeTransaction { () throws -> Int in
                    let delete = try db.prepare("""
                        DELETE FROM ingest_runs WHERE id IN (
                            SELECT id FROM ingest_runs WHERE finished_at < ?1
                              AND id NOT IN (SELECT max(id) FROM ingest_runs GROUP BY source)
                            LIMIT ?2)
                        """)
                    try delete.bind(cutoff, at: 1)
                    try delete.bind(batchSize, at: 2)
                    try delete.run()
                    return db.changes
                }
            }
            counts.runs += runs
            if runs < batchSize { break }
        }
        return counts
    }
}
