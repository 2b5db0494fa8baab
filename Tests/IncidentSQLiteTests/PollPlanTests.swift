import Foundation
import IncidentCore
@testable import IncidentSQLite
import Testing

/// Every statement a poll, a prune and a status/metrics refresh runs, recorded from real calls
/// (``Database/recordingStatements(_:)``, so a statement added later is checked without being
/// listed here) and run through EXPLAIN QUERY PLAN: none may read a table or an index whole
/// whose size grows with the history (issue 23: the per-poll counts read two covering indexes
/// whole, the zero-count DELETE every count key, prune every incident). SQLite has no
/// statistics here, so these plans are those of a database of millions.
@Suite("Poll, prune and status plans: nothing grows with the history (issue 23)")
struct PollPlanTests {
    /// What may be read whole, and why its size does not grow with the history.
    static let boundedScans: [(prefix: String, why: String)] = [
        ("SCAN CONSTANT ROW", "one row"),
        ("SCAN incidents USING COVERING INDEX incidents_active", "the active set: what the providers list now"),
        ("SCAN incidents USING INDEX incidents_active", "the active set: what the providers list now"),
        ("SCAN prune_batch", "one prune batch, at most its size"),
        ("SCAN temp.prune_batch", "one prune batch, at most its size"),
        ("SCAN temp.changed_incidents", "the incidents this poll changed"),
        ("SCAN was", "the incidents this poll changed (temp.changed_incidents)"),
        ("SCAN temp.poll_transitions", "this poll's entries of the transition log"),
        ("SCAN listed_then", "a replay's appearances in this poll's entries (temp.poll_transitions)"),
        ("SCAN listed_ids", "the ids a replay lists (temp.poll_listed)"),
        ("SCAN interval_ends", "the listed intervals of the incidents this poll cleared or listed again (temp.interval_ends)"),
        ("SCAN temp.interval_ends", "the listed intervals of the incidents this poll cleared or listed again"),
        ("SCAN source_state", "a row per source"),
        ("SCAN source_leases", "a row per source"),
        ("SCAN sources", "the distinct sources of the run log (a CTE), found by seeking"),
        ("SCAN latest", "a row per source of the run log (a CTE)"),
        ("SCAN hour_", "the listed intervals that touch the hours a poll counts, found through their indexes (PollTransitions.hourCounts's CTEs)"),
        ("SCAN hours", "the hours a poll counts, at most a day (a CTE)"),
        ("SCAN (subquery-", "a window function's rows, of the CTE it reads"),
    ]

    /// What a poll may read whole: its own source's active set comes from its index (0015), so
    /// the active incidents of every source are not among them (at 1,000,000 incidents, 50,000
    /// of them active in another source, reading them was 30 % of a 10,000-record poll).
    static let pollBoundedScans = boundedScans.filter { !$0.prefix.contains("incidents_active") }

    /// The plan lines of `statement` that read something whole that grows with the history.
    /// A virtual table's line (the R*Trees, the search index) reads it whole when no constraint
    /// reached it: an R*Tree's `INDEX 2:` or FTS5's `INDEX 0:` with no constraint after it; its
    /// shadow tables' statements are recorded and checked too.
    static func wholeScans(_ statement: String, db: Database, bounded: [(prefix: String, why: String)] = boundedScans) throws -> [String] {
        try db.queryPlan(statement).filter { line in
            line.hasPrefix("SCAN ") && !bounded.contains { line.hasPrefix($0.prefix) }
                && (!line.contains("VIRTUAL TABLE INDEX") || ["VIRTUAL TABLE INDEX 2:", "VIRTUAL TABLE INDEX 0:"].contains { line.hasSuffix($0) })
        }
    }

    /// Records the statements of `body` and returns those whose plans read something whole.
    static func unbounded(_ store: SQLiteStore, bounded: [(prefix: String, why: String)] = boundedScans,
                          _ body: () throws -> Void) throws -> (statements: [String], failures: [String]) {
        // On the connection itself: `body` takes the store's lock.
        let statements = try store.db.recordingStatements(body)
        let failures = try store.withDatabase { db in
            try statements.compactMap { statement -> String? in
                // Statements with no plan (BEGIN, COMMIT, PRAGMA, DDL) are left out by SQLite's EQP.
                let scans = try wholeScans(statement, db: db, bounded: bounded)
                return scans.isEmpty ? nil : "\(scans) in: \(statement)"
            }
        }
        return (statements, failures)
    }

    /// A poll of every kind of record on the 400-incident fixture: unchanged, changed, reopened,
    /// new, repeated, set aside with an id; then an older replay; the complete poll clears.
    static func polls(_ store: SQLiteStore) throws {
        var changed = QueryFixture.incident(5)
        changed.description = "[공사] 바뀐 설명"
        var records = (0..<5).map { FeedRecord.incident(QueryFixture.incident($0)) }
        records += [.incident(changed), .incident(QueryFixture.incident(50)), .incident(QueryFixture.incident(0)),
                    .rejected(RejectedRecord(externalID: "E6", position: "item 9", reason: "bad coordinate"))]
        records += (1000..<1003).map { i in .incident(Incident(source: "its", externalID: "E\(i)", category: .accident, road: "새길\(i)")) }
        let later = QueryFixture.pollC.adding(seconds: 600)
        _ = try store.ingest(PollContext(source: "its", startedAt: later), ListProducer(records: records).callAsFunction)
        var older = QueryFixture.incident(1)
        older.description = "[공사] 예전 설명"
        _ = try store.ingest(PollContext(source: "its", startedAt: QueryFixture.pollA.adding(seconds: -60)),
                             ListProducer(incidents: [older]).callAsFunction)
    }

    @Test("a poll of every kind of record: each statement reads the poll's rows, never the history")
    func poll() throws {
        let store = try QueryFixture.store()
        let holder = LeaseHolder(host: "plan-test", pid: getpid())
        let (statements, failures) = try Self.unbounded(store, bounded: Self.pollBoundedScans) {
            _ = try store.quotaResumesAt(source: "its")
            _ = try store.claim(source: "its", holder: holder, now: QueryFixture.now, leaseSeconds: 60, notStartedAfter: nil)
            try Self.polls(store)
            // Two answers of two pages that list only E0 and E1: the first keeps the 8 others
            // the previous complete poll listed (it looks that poll up) and clears the one it
            // did not; the second clears the 8.
            for (minutes, cleared) in [(20, 1), (30, 8)] {
                let run = try store.ingest(PollContext(source: "its", startedAt: QueryFixture.pollC.adding(seconds: Int64(minutes) * 60)),
                                           ListProducer(incidents: [QueryFixture.incident(0), QueryFixture.incident(1)],
                                                        verdict: ResponseVerdict(pages: 2)).callAsFunction)
                #expect(run.counts.cleared == cleared, "\(run)")
            }
            // The first poll of a later hour counts the hours since the last one held (0016).
            _ = try store.ingest(PollContext(source: "its", startedAt: QueryFixture.pollC.adding(seconds: 2 * 3600)),
                                 ListProducer(incidents: [QueryFixture.incident(0)], verdict: ResponseVerdict(incompleteBecause: ["a page was missing"])).callAsFunction)
            // A replayed file of an earlier time: history at its own time, from the ids it lists.
            _ = try store.ingest(PollContext(source: "its", startedAt: QueryFixture.pollC.adding(seconds: 2 * 3600 + 60),
                                             observedAt: QueryFixture.pollA.adding(seconds: -3600), origin: .file(path: "old.xml", complete: false)),
                                 ListProducer(records: [.incident(QueryFixture.incident(2)),
                                                        .rejected(RejectedRecord(externalID: "E3", position: "item 2", reason: "a test"))]).callAsFunction)
            try store.release(source: "its", holder: holder)
            try store.recordRun(IngestRun(source: "gits", startedAt: QueryFixture.now, finishedAt: QueryFixture.now, status: .failed,
                                          error: "quota", resumesAt: QueryFixture.now.adding(seconds: 3600)))
        }
        #expect(failures == [])
        // A replay's history starts from the ids it lists, through the source's unique key: not
        // a search of every incident of the source, which grows with the history (issue 23).
        let history = try #require(statements.first { $0.contains("temp.poll_listed listed_ids CROSS JOIN incidents") })
        let plan = try store.withDatabase { try $0.queryPlan(history) }
        #expect(!plan.contains { $0.contains("(source=?)") }, "\(plan)")
        #expect(plan.contains { $0.contains("(source=? AND external_id=?)") }, "\(plan)")
        // The statements issue 23 found, recorded: the test would see them scan.
        #expect(statements.contains { $0.hasPrefix("INSERT INTO incident_counts") })
        #expect(statements.contains { $0.hasPrefix("DELETE FROM incident_counts WHERE incidents = 0") })
        #expect(statements.contains { $0.hasPrefix("INSERT INTO incident_revisions") })
        #expect(statements.contains { $0.contains("UPDATE incidents INDEXED BY incidents_active_by_source SET cleared_at") })
        // The transition log's statements, recorded: the poll's collection, its append, the
        // clears it logs and the listed intervals they end (issue 22).
        for table in ["temp.poll_transitions", "INSERT INTO incident_transitions", "INSERT INTO incident_listed_intervals",
                      "UPDATE incident_listed_intervals", "DELETE FROM incident_listed_open", "temp.interval_ends",
                      // and the past hours' counts it takes out and counts (0016)
                      "DELETE FROM listed_hours", "INSERT INTO listed_hours"] {
            #expect(statements.contains { $0.contains(table) }, "no statement of \(table) recorded")
        }
        #expect(statements.contains { $0.contains("SELECT max(observed_at) FROM ingest_runs") },
                "the paged polls' lookup of the previous complete poll")
        #expect(statements.contains { $0.contains("SELECT count(*), max(last_seen_at) FROM incidents INDEXED BY incidents_active_by_source") },
                "the older replay's count of what a later poll listed (walk finding 24)")
    }

    @Test("prune, deleting and not: each batch is found through an index")
    func prune() throws {
        let store = try QueryFixture.store()
        try Self.polls(store)
        let (statements, failures) = try Self.unbounded(store) {
            // Every run finished at the fixed clock's `now`; 290 cleared by pollC, E50 reopened and
            // E7…E9 cleared by the later poll; each source keeps its latest run.
            let horizon = QueryFixture.now.adding(seconds: 1)
            let counts = try store.prune(before: horizon, batchSize: 100)
            #expect(counts.incidents == 292 && counts.runs == 3, "\(counts)")
            #expect(try store.prune(before: horizon, batchSize: 100) == PruneCounts())
        }
        #expect(failures == [])
        #expect(statements.contains { $0.contains("INDEXED BY incidents_by_cleared") })
        #expect(statements.contains { $0.hasPrefix("DELETE FROM ingest_runs") })
    }

    /// (`stats` without filters reads `incident_counts` whole: a row per distinct key, roads
    /// included; it is a query, not part of a poll or a refresh.)
    @Test("status and metrics: each source's last runs, and the active set, never every run or incident")
    func status() throws {
        let store = try QueryFixture.store()
        try Self.polls(store)
        let (statements, failures) = try Self.unbounded(store) {
            let summaries = try store.sourceSummaries()
            #expect(summaries.map(\.source) == ["gits", "its"])
            _ = try store.activeIncidentCounts(at: QueryFixture.now)
        }
        #expect(failures == [])
        #expect(statements.contains { $0.contains("FROM ingest_runs") })
    }

    @Test("the check fails on a whole scan: the statements issue 23 found, without the indexes of 0010")
    func detects() throws {
        let store = try QueryFixture.store()
        try store.withDatabase { (db: Database) throws in
            try db.execute("DROP INDEX incident_counts_empty; DROP INDEX incidents_by_cleared")
            #expect(try Self.wholeScans("DELETE FROM incident_counts WHERE incidents = 0", db: db) == ["SCAN incident_counts"])
            #expect(try Self.wholeScans("SELECT id FROM incidents WHERE cleared_at IS NOT NULL AND cleared_at < 'x' LIMIT 10", db: db)
                    == ["SCAN incidents"])
            #expect(try Self.wholeScans("SELECT 'source', source, count(*) FROM incidents WHERE id > 5 GROUP BY 2", db: db)
                    == ["SCAN incidents USING COVERING INDEX sqlite_autoindex_incidents_1"])
            // The transition log's clears as they were read before 0015: every source's active set.
            #expect(try Self.wholeScans("""
                SELECT id FROM incidents INDEXED BY incidents_active
                WHERE cleared_at IS NULL AND source = 'its' AND last_seen_run_id <> 1 AND last_seen_at < 'x' ORDER BY id
                """, db: db, bounded: Self.pollBoundedScans) == ["SCAN incidents USING INDEX incidents_active"])
            // A listed interval found by its incident, not its key: the whole R*Tree.
            #expect(try Self.wholeScans("UPDATE incident_listed_intervals SET listed_until = 5 WHERE incident_id = 3", db: db)
                    == ["SCAN incident_listed_intervals VIRTUAL TABLE INDEX 2:"])
            #expect(try Self.wholeScans("UPDATE incident_listed_intervals SET listed_until = 5 WHERE id = 3", db: db) == [])
        }
    }
}
